"""A tiny randomly initialised network exported on the fly, for tests (never a champion).

`tiny_model_file(side)` exports once per process and side into a temporary directory and
returns the path; tests copy it when they need to damage it. `program=False` leaves out the
torch.export program (a smaller file, written without tracing). `tiny_general_model_file()`
is a size-general network (no home board, format version 3) listing GENERAL_TRACKS: the
first rated, with a fair komi, the second neither.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import torch

from catena_zero.export.model_file import ModelTrack, metadata_for, save_model_file
from catena_zero.network import NetworkConfig, PolicyValueNet
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Rules

TINY_CONFIG = dict(blocks=1, channels=8, global_pool_every=0, policy_head_channels=4,
                   value_head_channels=4, value_hidden=8)


def tiny_network(side: int, seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    board = Rules(side=side).board
    return PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index,
                          NetworkConfig(**TINY_CONFIG)).eval()


@functools.cache
def tiny_model_file(side: int = 3, program: bool = True) -> Path:
    torch.set_num_threads(1)
    directory = Path(tempfile.mkdtemp(prefix="catena-tiny-model-"))
    rules = Rules(side=side)
    net = tiny_network(side)
    metadata = metadata_for(net, rules, network_config=net.config.to_dict(), elo=None,
                            training_steps=0, source="random initialisation (test)")
    name = f"tiny-side{side}.pt" if program else f"tiny-side{side}-no-program.pt"
    return save_model_file(net, metadata, directory / name, program=program)


GENERAL_TRACKS = ("3/komi/standard", "4/nokomi/standard")


def tiny_general_network(seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    return PolicyValueNet(NUM_PLANES, NUM_GLOBALS, NetworkConfig(**TINY_CONFIG)).eval()


@functools.cache
def tiny_general_model_file(program: bool = True) -> Path:
    torch.set_num_threads(1)
    directory = Path(tempfile.mkdtemp(prefix="catena-tiny-general-"))
    net = tiny_general_network()
    tracks = [ModelTrack.of(GENERAL_TRACKS[0], elo=120.0, elo_reference="random = 0",
                            fair_komi=4.5), ModelTrack.of(GENERAL_TRACKS[1])]
    metadata = metadata_for(net, tracks, network_config=net.config.to_dict(),
                            training_steps=0, source="random initialisation (test)")
    name = "tiny-general.pt" if program else "tiny-general-no-program.pt"
    return save_model_file(net, metadata, directory / name, program=program)
