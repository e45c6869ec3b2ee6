"""Format-1 model files, written the way catena-zero wrote them before format 2, for tests
of the refusal and of the converter: a whole `torch.export` archive with the metadata as its
extra file `catena_model.json` (flat fields, format_version 1)."""

from __future__ import annotations

import functools
import io
import json
import tempfile
from pathlib import Path

import torch

from catena_zero.rules import NUM_GLOBALS, Rules
from tests.export.tiny_model import tiny_network


class TupleOutput(torch.nn.Module):
    """The wrapper format 1 exported: the network's four outputs as a tuple, under `net`."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, planes: torch.Tensor, globals_: torch.Tensor):
        return self.net.forward_tuple(planes, globals_)[:4]


def format1_metadata(net: torch.nn.Module, side: int) -> dict:
    rules = Rules(side=side)
    board = rules.board
    return {
        "side": side, "game_type": "komi", "scoring": "standard",
        "komi_range": list(rules.komi_range), "network": net.config.to_dict(),
        "num_planes": net.num_planes, "num_globals": NUM_GLOBALS,
        "grid_size": board.grid_size, "num_cells": board.num_cells,
        "num_actions": board.num_actions, "elo": 432.5, "elo_reference": "random = 0",
        "training_steps": 99, "source": "checkpoint runs/x/checkpoint.pt",
        "created_utc": "2026-01-02T03:04:05+00:00", "torch_version": torch.__version__,
        "format": "catena-zero-model", "format_version": 1,
        "outputs": ["policy_logits", "value_logits", "score", "ownership"],
    }


@functools.cache
def format1_model_file(side: int = 3, seed: int = 4) -> Path:
    """A format-1 file of `tiny_network(side, seed)` in a temporary directory."""
    torch.set_num_threads(1)
    net = tiny_network(side, seed=seed)
    size = Rules(side=side).board.grid_size
    sample = (torch.rand(2, net.num_planes, size, size), torch.rand(2, NUM_GLOBALS))
    batch = torch.export.Dim("batch", min=1, max=65536)
    with torch.no_grad():
        program = torch.export.export(TupleOutput(net).eval(), sample,
                                      dynamic_shapes=({0: batch}, {0: batch}), strict=False)
    buffer = io.BytesIO()
    torch.export.save(program, buffer,
                      extra_files={"catena_model.json": json.dumps(format1_metadata(net, side))})
    path = Path(tempfile.mkdtemp(prefix="catena-format1-")) / f"format1-side{side}.pt"
    path.write_bytes(buffer.getvalue())
    return path
