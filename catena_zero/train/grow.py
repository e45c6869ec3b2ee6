"""Grow a trained network deeper without changing what it computes (Net2Net's deeper net).

A network that has stopped improving at its size can keep what it learnt and gain capacity:
`grow_checkpoint` writes a new checkpoint whose net has more residual blocks, appended after
the trained ones. Each new block is a pre-activation residual block whose last convolution
starts at zero, so the block adds nothing and the grown net plays exactly as the old one
(bit for bit up to float rounding); training then moves the new weights off zero (their
gradient is not zero: the block's inner activations are). The AdamW moments of the old
parameters are kept, the new parameters start with none; the counters, RNG states, fair
komis and mix clock are kept, so `resume=true` on the new checkpoint's run folder continues
the run as if the net had always had this depth.

Example::

    from catena_zero.train.grow import grow_checkpoint
    path = grow_checkpoint("runs/general/checkpoints/checkpoint-step000097888-iter001571.pt",
                           blocks=6, output_dir="runs/general-b6/checkpoints")

or, for a whole run, `catena-zero train run_dir=runs/deeper resume=true network.blocks=6
start_from=runs/general/checkpoints/checkpoint-....pt` (see docs/reference/pipeline.md).
"""

from __future__ import annotations

import copy
import dataclasses
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from catena_zero.network.model import PolicyValueNet
from catena_zero.train.checkpoint import (
    Checkpoint,
    CheckpointError,
    build_network,
    capture_rng_states,
    load_checkpoint,
    restore_rng_states,
    save_checkpoint,
)
from catena_zero.train.config import TrainConfig
from catena_zero.train.trainer import Trainer


def grow_network(net: PolicyValueNet, blocks: int) -> PolicyValueNet:
    """A copy of `net` with `blocks` residual blocks: its own, then new ones that start as
    the identity (last convolution zero). Global pooling blocks fall where the config puts
    them (every `global_pool_every`-th block), as in a net built at that depth."""
    old = net.config.blocks
    if not isinstance(blocks, int) or isinstance(blocks, bool) or blocks < old:
        raise ValueError(f"a grown net needs at least the {old} blocks it has, got {blocks!r}")
    config = dataclasses.replace(net.config, blocks=blocks)
    args = dict(net.init_args)
    args["config"] = config.to_dict()
    grown = PolicyValueNet.from_init_args(args)
    missing, unexpected = grown.load_state_dict(net.state_dict(), strict=False)
    new_prefixes = tuple(f"blocks.{index}." for index in range(old, blocks))
    if unexpected or any(not key.startswith(new_prefixes) for key in missing):
        raise ValueError(f"cannot grow this net: unexpected {unexpected[:3]}, "
                         f"missing {[k for k in missing if not k.startswith(new_prefixes)][:3]}")
    with torch.no_grad():
        for index in range(old, blocks):
            conv = grown.blocks[index].conv2
            conv.weight.zero_()
            if conv.bias is not None:
                conv.bias.zero_()
    return grown


def _grown_optimizer_state(old_net: PolicyValueNet, old_state: dict[str, Any],
                           grown: PolicyValueNet, train_config: TrainConfig) -> dict[str, Any]:
    """AdamW state for `grown`: the old parameters' moments under their new indices, none
    for the new parameters, the param groups' settings as saved."""
    def names_by_index(net: PolicyValueNet) -> list[str]:
        # The order Trainer's parameter groups list parameters in, flattened.
        trainer = Trainer(net, train_config, "cpu")
        ids = {id(parameter): name for name, parameter in net.named_parameters()}
        return [ids[id(p)] for group in trainer.optimizer.param_groups for p in group["params"]]

    old_names = names_by_index(old_net)
    grown_trainer = Trainer(grown, train_config, "cpu")
    grown_names = names_by_index(grown)
    saved_groups = old_state.get("param_groups", [])
    if sum(len(group["params"]) for group in saved_groups) != len(old_names):
        raise CheckpointError("the checkpoint's optimiser state does not fit its network")
    old_index_of = {}
    position = 0
    for group in saved_groups:
        for saved_index in group["params"]:
            old_index_of[old_names[position]] = saved_index
            position += 1
    state: dict[int, Any] = {}
    groups = []
    position = 0
    for group, saved in zip(grown_trainer.optimizer.param_groups, saved_groups, strict=True):
        indices = []
        for _ in group["params"]:
            name = grown_names[position]
            if name in old_index_of and old_index_of[name] in old_state.get("state", {}):
                state[position] = copy.deepcopy(old_state["state"][old_index_of[name]])
            indices.append(position)
            position += 1
        groups.append({**{key: value for key, value in saved.items() if key != "params"},
                       "params": indices})
    return {"state": state, "param_groups": groups}


def _grown_config(config: Any, blocks: int) -> Any:
    """The run's stored config with `network.blocks` set to the grown depth (a dict; other
    forms, such as YAML text, are kept as they are)."""
    if isinstance(config, dict) and isinstance(config.get("network"), dict):
        config = copy.deepcopy(config)
        config["network"]["blocks"] = blocks
    return config


def grow_checkpoint(path: str | os.PathLike, blocks: int,
                    output_dir: str | os.PathLike) -> Path:
    """Write into `output_dir` a checkpoint of `path`'s run whose net has `blocks` residual
    blocks (see the module docstring); returns its path. Refuses (ValueError, one line) a
    depth below the net's, an output folder that already holds checkpoints, or a damaged
    checkpoint (CheckpointError), writing nothing."""
    checkpoint: Checkpoint = load_checkpoint(path)
    output_dir = Path(output_dir)
    if output_dir.exists() and any(output_dir.glob("checkpoint-*.pt")):
        raise ValueError(f"{output_dir} already holds checkpoints: grow into a new folder")
    train_config = TrainConfig.from_dict(dict(checkpoint.train_config))
    old_trained = build_network(checkpoint, weights="trained")
    grown = grow_network(old_trained, blocks)
    trainer = Trainer(grown, train_config, "cpu")
    trainer.optimizer.load_state_dict(_grown_optimizer_state(
        old_trained, checkpoint.optimizer_state, grown, train_config))
    trainer.step = checkpoint.trainer_step
    if trainer.ema_net is not None:
        published = grow_network(build_network(checkpoint, weights="published"), blocks)
        trainer.ema_net.load_state_dict(published.state_dict())
    # The run's RNG states go into the new file as they were, so the grown run draws what
    # the old one would have; this process's own states are put back afterwards.
    generators = {name: np.random.default_rng() for name in checkpoint.rng_states["generators"]}
    own_states = capture_rng_states()
    restore_rng_states(checkpoint.rng_states, generators)
    try:
        return save_checkpoint(
            output_dir, trainer, checkpoint.counters,
            config=_grown_config(checkpoint.config, blocks), rules=checkpoint.rules,
            generators=generators, extra=checkpoint.extra, keep=0)
    finally:
        restore_rng_states(own_states)
