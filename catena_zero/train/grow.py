"""Grow a trained network deeper and wider without changing what it computes (Net2Net).

A network that has stopped improving at its size can keep what it learnt and gain capacity:
`grow_checkpoint` writes a new checkpoint whose net has more residual blocks (appended after
the trained ones) and more trunk channels. A new block is a pre-activation residual block
whose last convolution starts at zero, so it adds nothing; a new channel is computed by
freshly initialised weights and read by weights that start at zero, so it changes nothing
(`grow_network`). The grown net plays exactly as the old one, up to float rounding, and
training moves the new weights off zero (their gradients are not zero). The AdamW moments
of the parameters that keep their shape are kept, the others start afresh; the counters,
RNG states, fair komis and mix clock are kept, so `resume=true` on the new checkpoint's run
folder continues the run as if the net had always had this size.

Example::

    from catena_zero.train.grow import grow_checkpoint
    path = grow_checkpoint("runs/general/checkpoints/checkpoint-step000097888-iter001571.pt",
                           blocks=6, output_dir="runs/general-b6/checkpoints")

or, for a whole run, `catena-zero train run_dir=runs/deeper resume=true network.blocks=6
network.channels=48 start_from=runs/general/checkpoints/checkpoint-....pt` (see
docs/reference/pipeline.md).
"""
from __future__ import annotations

import copy
import dataclasses
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from catena_zero.network.config import NetworkConfig
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


def grow_network(net: PolicyValueNet, blocks: int, channels: int | None = None
                 ) -> PolicyValueNet:
    """A copy of `net` with `blocks` residual blocks of `channels` channels (None: its own):
    its blocks, then new ones that start as the identity (last convolution zero), every
    trunk channel added starting at zero everywhere. Global pooling blocks fall where the
    config puts them (every `global_pool_every`-th block), as in a net built at that size.

    Widening (Net2Net's wider net, kept exact): the added channels (the trunk's, and each
    old block's inner ones) are computed by weights of a fresh initialisation and read by
    weights that start at zero, so they change nothing until training moves their readers
    off zero, which it does: the channels carry values, so their readers' gradient is not
    zero. (The other way round, zero writers and fresh readers, would leave the added
    channels at zero behind a ReLU, whose gradient at zero is zero: they would never learn.)
    Every old weight and statistic keeps its value.
    """
    old_blocks, old_channels = net.config.blocks, net.config.channels
    channels = old_channels if channels is None else channels
    for name, value, old in (("blocks", blocks, old_blocks), ("channels", channels,
                                                               old_channels)):
        if not isinstance(value, int) or isinstance(value, bool) or value < old:
            raise ValueError(f"a grown net needs at least the {old} {name} it has, "
                             f"got {value!r}")
    config = dataclasses.replace(net.config, blocks=blocks, channels=channels)
    args = dict(net.init_args)
    args["config"] = config.to_dict()
    grown = PolicyValueNet.from_init_args(args)
    target = grown.state_dict()
    source = net.state_dict()
    maps = _index_maps(net, grown)
    with torch.no_grad():
        for key, value in source.items():
            if key not in target:
                raise ValueError(f"cannot grow this net: {key} has no place in the grown net")
            if value.shape == target[key].shape:  # unchanged, or placed where it was
                target[key].copy_(value)
                continue
            layout = _layout(key, maps)
            if layout is None:
                raise ValueError(f"cannot grow this net: {key} changes shape")
            # Two mapped axes (a convolution's outputs and inputs) take their outer product.
            mapped = [axis for axis in layout if axis is not None]
            if len(mapped) == 2:
                layout = [axis if axis is None else
                          (axis[:, None] if axis is mapped[0] else axis[None, :])
                          for axis in layout]
            index = tuple(slice(None) if axis is None else axis for axis in layout)
            target[key][index] = value.to(target[key].dtype)
        _zero_readers(grown, old_blocks, old_channels)
    return grown


def _index_maps(net: PolicyValueNet, grown: PolicyValueNet) -> dict[str, Any]:
    """Where each old channel lands in the grown net: the trunk's, and each old block's
    inner (conv1's outputs: the regular ones, then the pooled ones last) and regular
    (the inner channels that reach the second convolution)."""
    old, new = net.config.channels, grown.config.channels
    maps: dict[str, Any] = {"trunk": torch.arange(old)}
    for index, block in enumerate(net.blocks):
        pooled = block.pool_channels
        regular = torch.arange(old - pooled)
        maps[f"blocks.{index}.inner"] = torch.cat([regular, torch.arange(new - pooled, new)])
        maps[f"blocks.{index}.regular"] = regular
    return maps


def _layout(key: str, maps: dict[str, Any]) -> list[Any] | None:
    """[index of each axis of the old tensor in the grown one, or None: the whole axis];
    None when the tensor does not change shape."""
    trunk = maps["trunk"]
    parts = key.split(".")
    if key in ("stem.weight", "global_linear.weight", "global_linear.bias"):
        return [trunk] + [None] * (3 if key == "stem.weight" else (1 if "weight" in key else 0))
    if parts[0] == "trunk_norm" or (parts[0] == "blocks" and parts[2] == "norm1"):
        return [trunk]
    if key in ("policy_conv.weight", "policy_pool_conv.weight", "value_conv.weight"):
        return [None, trunk, None, None]
    if parts[0] == "blocks":
        inner = maps[f"blocks.{parts[1]}.inner"]
        regular = maps[f"blocks.{parts[1]}.regular"]
        layer = parts[2]
        if layer == "conv1":
            return [inner, trunk, None, None] if parts[3] == "weight" else [inner]
        if layer == "conv2":
            return [trunk, regular, None, None] if parts[3] == "weight" else [trunk]
        if layer == "norm2":
            return [regular]
        if layer == "pool_linear":
            return [regular, None]
    return None


def _zero_readers(grown: PolicyValueNet, old_blocks: int, old_channels: int) -> None:
    """Zero every weight of an old layer that reads an added channel (the trunk's added
    channels, an old block's added inner channels), and the whole last convolution of every
    added block, so that the grown net computes what the old one did."""
    for index, block in enumerate(grown.blocks):
        conv = block.conv2
        if index >= old_blocks:
            conv.weight.zero_()
            if conv.bias is not None:
                conv.bias.zero_()
            continue
        block.conv1.weight[:, old_channels:] = 0.0
        conv.weight[:old_channels, old_channels - block.pool_channels:] = 0.0
    for head in (grown.policy_conv, grown.policy_pool_conv, grown.value_conv):
        head.weight[:, old_channels:] = 0.0


def _grown_optimizer_state(old_net: PolicyValueNet, old_state: dict[str, Any],
                           grown: PolicyValueNet, train_config: TrainConfig) -> dict[str, Any]:
    """AdamW state for `grown`: the old parameters' moments under their new indices, none
    for the added or widened parameters, the param groups' settings as saved."""
    def names_by_index(net: PolicyValueNet) -> list[str]:
        # The order Trainer's parameter groups list parameters in, flattened.
        trainer = Trainer(net, train_config, "cpu")
        ids = {id(parameter): name for name, parameter in net.named_parameters()}
        return [ids[id(p)] for group in trainer.optimizer.param_groups for p in group["params"]]

    old_names = names_by_index(old_net)
    old_shapes = {name: p.shape for name, p in old_net.named_parameters()}
    grown_shapes = {name: p.shape for name, p in grown.named_parameters()}
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
            saved_state = old_state.get("state", {}).get(old_index_of.get(name))
            # A widened parameter starts its moments afresh, like an added one.
            if saved_state is not None and old_shapes[name] == grown_shapes[name]:
                state[position] = copy.deepcopy(saved_state)
            indices.append(position)
            position += 1
        groups.append({**{key: value for key, value in saved.items() if key != "params"},
                       "params": indices})
    return {"state": state, "param_groups": groups}


def _grown_config(config: Any, network: NetworkConfig) -> Any:
    """The run's stored config with `network.blocks` and `network.channels` those of the
    grown net (a dict; other forms, such as YAML text, are kept as they are)."""
    if isinstance(config, dict) and isinstance(config.get("network"), dict):
        config = copy.deepcopy(config)
        config["network"]["blocks"] = network.blocks
        config["network"]["channels"] = network.channels
    return config


def grow_checkpoint(path: str | os.PathLike, blocks: int, output_dir: str | os.PathLike,
                    channels: int | None = None) -> Path:
    """Write into `output_dir` a checkpoint of `path`'s run whose net has `blocks` residual
    blocks of `channels` channels (None: the net's own; see the module docstring); returns
    its path. Refuses (ValueError, one line) a net smaller than the checkpoint's, an output
    folder that already holds checkpoints, or a damaged checkpoint (CheckpointError),
    writing nothing."""
    checkpoint: Checkpoint = load_checkpoint(path)
    output_dir = Path(output_dir)
    if output_dir.exists() and any(output_dir.glob("checkpoint-*.pt")):
        raise ValueError(f"{output_dir} already holds checkpoints: grow into a new folder")
    train_config = TrainConfig.from_dict(dict(checkpoint.train_config))
    old_trained = build_network(checkpoint, weights="trained")
    grown = grow_network(old_trained, blocks, channels)
    trainer = Trainer(grown, train_config, "cpu")
    trainer.optimizer.load_state_dict(_grown_optimizer_state(
        old_trained, checkpoint.optimizer_state, grown, train_config))
    trainer.step = checkpoint.trainer_step
    if trainer.ema_net is not None:
        published = grow_network(build_network(checkpoint, weights="published"), blocks,
                                 channels)
        trainer.ema_net.load_state_dict(published.state_dict())
    # The run's RNG states go into the new file as they were, so the grown run draws what
    # the old one would have; this process's own states are put back afterwards.
    generators = {name: np.random.default_rng() for name in checkpoint.rng_states["generators"]}
    own_states = capture_rng_states()
    restore_rng_states(checkpoint.rng_states, generators)
    try:
        return save_checkpoint(
            output_dir, trainer, checkpoint.counters,
            config=_grown_config(checkpoint.config, grown.config), rules=checkpoint.rules,
            generators=generators, extra=checkpoint.extra, keep=0)
    finally:
        restore_rng_states(own_states)
