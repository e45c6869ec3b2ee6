"""AdamW training of the policy-value net on `Samples` minibatches.

Example::

    from catena_zero.train import Trainer, TrainConfig
    trainer = Trainer(net, TrainConfig(batch_size=256), device="auto")
    window.refresh()
    metrics = trainer.train_steps(window.batches(100, 256, rng))   # Samples or MixedBatch
    metrics.as_dict()    # {"loss/total": ..., "loss/policy": ..., "lr": ..., "samples_per_s": ...}
    trainer.step         # optimiser steps taken so far (drives the lr schedule)
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from catena_zero.data.padding import PaddedSamples, pad_samples
from catena_zero.data.samples import MixedBatch, Samples
from catena_zero.network.device import resolve_device
from catena_zero.train.config import TrainConfig, learning_rate_at, require_score_belief_head
from catena_zero.train.losses import Losses, LossWeights, TargetBatch, compute_losses


@dataclass
class TrainMetrics:
    """Means over the optimiser steps of one `train_steps` call."""

    steps: int  # optimiser steps taken in this call
    samples: int  # samples seen in this call
    seconds: float  # wall time of this call
    samples_per_second: float  # samples / seconds
    learning_rate: float  # learning rate of the last step
    loss_total: float  # weighted total loss
    loss_policy: float  # policy cross-entropy (nats)
    loss_value: float  # win/draw/loss cross-entropy (nats)
    loss_score: float  # Huber on scaled margins
    loss_ownership: float  # ownership cross-entropy per cell (nats)
    loss_score_belief: float  # final-margin distribution cross-entropy (nats; 0 when off)
    grad_norm: float  # global gradient norm before clipping

    def as_dict(self) -> dict[str, float]:
        """Flat names for TensorBoard / logs."""
        values = asdict(self)
        return {
            ("loss/" + k[len("loss_"):] if k.startswith("loss_") else k): float(v)
            for k, v in values.items()
        }


def _parameter_groups(net: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Weight decay on conv and linear weights only (not on norms and biases)."""
    decay, no_decay = [], []
    for name, parameter in net.named_parameters():
        if not parameter.requires_grad:
            continue
        (decay if parameter.dim() > 1 and name.endswith("weight") else no_decay).append(parameter)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


LOSS_NAMES = ("total", "policy", "value", "score", "ownership", "score_belief")


def side_buckets(batch: Samples | MixedBatch | PaddedSamples, largest_sides: list[int]
                 ) -> list[tuple[Samples | MixedBatch | PaddedSamples, float]]:
    """[(part, share)]: the batch cut into buckets of board sides, each padded to its own
    grid by the net, with each bucket's share of the batch's sample weight (shares sum to 1).

    `largest_sides` [K], increasing: bucket k holds the parts whose side is at most
    `largest_sides[k]` and above the bucket before's (parts larger than the last bound make
    a bucket of their own). Empty, or a batch of one board: the whole batch, share 1. A
    padded batch costs every sample its largest board's grid (a side-10 sample among 127
    side-6 ones puts all 128 on a 19 x 19 grid instead of 11 x 11), so cutting a mixed
    minibatch this way costs each sample about its own grid.
    """
    if not largest_sides or not isinstance(batch, MixedBatch) or len(batch.parts) == 1:
        return [(batch, 1.0)]
    bounds = sorted(largest_sides)
    buckets: dict[int, list[Samples]] = {}
    for part in batch.parts:
        key = next((bound for bound in bounds if part.side <= bound), part.side)
        buckets.setdefault(key, []).append(part)
    weights = {key: float(sum(part.weight.sum() for part in parts))
               for key, parts in buckets.items()}
    total = sum(weights.values())
    counts = {key: sum(len(part) for part in parts) for key, parts in buckets.items()}
    result = []
    for key in sorted(buckets):
        parts = buckets[key]
        # An all-zero-weight batch (every sample from a cheap search) still trains nothing,
        # as one padded batch would: its shares follow the sample counts instead.
        share = weights[key] / total if total > 0 else counts[key] / len(batch)
        result.append((parts[0] if len(parts) == 1 else MixedBatch(parts), share))
    return result


def ema_decay_at(step: int, decay: float) -> float:
    """The moving average's decay for the update after optimiser step `step` (1-based).

    Capped by (1 + step) / (10 + step), so the average forgets the random initial weights
    within the first few dozen steps instead of over 1 / (1 - decay) of them.
    """
    return min(decay, (1 + step) / (10 + step))


class Trainer:
    """Owns the optimiser and the step counter of one network.

    `train_steps` leaves the net in the train/eval mode it found it in. The learning rate is
    a pure function of `step` (see `learning_rate_at`), so `state_dict` holds all of it;
    with `config.anneal_minutes` also of `selfplay_seconds`, the run's self-play clock,
    which the run sets before each iteration's steps and keeps in its own checkpoints.

    With `config.ema_decay > 0` the trainer also keeps `ema_net`, an exponential moving
    average of the weights (and of the normalisation statistics) updated after every step:
    the averaged weights are the ones published to self-play, arenas and export
    (`published_net`), as KataGo publishes averaged weights: averaging over the optimiser's
    step-to-step noise can give a steadier net than the latest step. (On side 4 it played no
    better than the trained weights: docs/results/.)
    """

    def __init__(self, net: nn.Module, config: TrainConfig, device: str | torch.device = "auto"):
        config.validate()
        self.config = config
        self.device = resolve_device(device)
        self.net = net.to(self.device)
        self.optimizer = torch.optim.AdamW(
            _parameter_groups(self.net, config.weight_decay),
            lr=learning_rate_at(0, config),
            betas=(config.adam_beta1, config.adam_beta2),
        )
        self.step = 0
        self.selfplay_seconds = 0.0  # the run's self-play clock (config.anneal_minutes)
        self.loss_weights = LossWeights(
            policy=config.policy_weight,
            value=config.value_weight,
            score=config.score_weight,
            ownership=config.ownership_weight,
            score_scale=config.score_loss_scale,
            huber_delta=config.score_huber_delta,
            score_belief=config.score_belief_weight,
        )
        net_config = getattr(net, "config", None)
        centres = net_config.score_belief_centres() if net_config is not None else []
        require_score_belief_head(config, len(centres))
        self.score_belief_centres = (torch.tensor(centres, device=self.device)
                                     if centres else None)
        use_autocast = (
            config.mixed_precision
            and self.device.type == "cuda"
            and torch.cuda.is_bf16_supported()
        )
        self.autocast_dtype = torch.bfloat16 if use_autocast else None
        self.ema_net: nn.Module | None = None
        if config.ema_decay > 0:
            self.ema_net = copy.deepcopy(self.net).eval().requires_grad_(False)

    @property
    def published_net(self) -> nn.Module:
        """The weights self-play and checkpoint readers play with: the average when kept."""
        return self.ema_net if self.ema_net is not None else self.net

    @torch.no_grad()
    def _update_ema(self) -> None:
        decay = ema_decay_at(self.step, self.config.ema_decay)
        averaged = self.ema_net.state_dict()
        for name, value in self.net.state_dict().items():
            if value.is_floating_point():
                averaged[name].lerp_(value, 1.0 - decay)
            else:
                averaged[name].copy_(value)

    def _to_device(self, batch: Samples | MixedBatch | PaddedSamples
                   ) -> tuple[torch.Tensor, torch.Tensor, TargetBatch, torch.Tensor | None]:
        """(planes, globals, targets, sides or None) on the training device."""
        def tensor(array, dtype=torch.float32):
            return torch.from_numpy(array).to(self.device, non_blocking=True).to(dtype)

        if isinstance(batch, MixedBatch):
            batch = pad_samples(batch)
        sides = cells = None
        if isinstance(batch, PaddedSamples):
            sides = torch.from_numpy(batch.sides)
            cells = tensor(batch.cell_mask(), torch.bool)
            batch = batch.samples
        targets = TargetBatch(
            policy=tensor(batch.policy_target),
            value=tensor(batch.value_target),
            score=tensor(batch.score_target),
            ownership=tensor(batch.ownership_target),
            legal=tensor(batch.legal_mask, torch.bool),
            weight=tensor(batch.weight),
            cells=cells,
        )
        return tensor(batch.planes), tensor(batch.globals), targets, sides

    def losses(self, batch: Samples | MixedBatch | PaddedSamples) -> Losses:
        """The `Losses` of the net on `batch` in its current train/eval mode (with autograd;
        no optimiser step). A MixedBatch of several boards is padded into one grid, or with
        `config.side_buckets` into a grid per bucket of sides, normalised as one batch."""
        buckets = side_buckets(batch, self.config.side_buckets)
        if len(buckets) == 1:
            planes, globals_, targets, sides = self._to_device(batch)
            with self._autocast():
                output = self._forward(planes, globals_, sides)
            return compute_losses(output, targets, self.loss_weights, self.score_belief_centres)
        inputs, all_targets = [], []
        for part, _ in buckets:
            planes, globals_, targets, sides = self._to_device(part)
            inputs.append((planes, globals_, sides))
            all_targets.append(targets)
        with self._autocast():
            outputs = self.net.forward_buckets(inputs)
        # Each bucket's losses are sample-weighted means over it; weighted by its share of
        # the batch's sample weight they add up to the whole batch's means.
        parts = [compute_losses(output, targets, self.loss_weights, self.score_belief_centres)
                 for output, targets in zip(outputs, all_targets, strict=True)]
        return Losses(**{name: sum(getattr(losses, name) * share
                                   for losses, (_, share) in zip(parts, buckets, strict=True))
                         for name in LOSS_NAMES})

    def _autocast(self):
        """bfloat16 autocast where the trainer uses it, else a context that does nothing."""
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.autocast_dtype)

    def _forward(self, planes: torch.Tensor, globals_: torch.Tensor, sides):
        # Nets without padded batches (any module returning NetOutput) are called as before.
        return (self.net(planes, globals_) if sides is None
                else self.net(planes, globals_, sides=sides))

    def train_step(self, batch: Samples | MixedBatch | PaddedSamples) -> dict[str, torch.Tensor]:
        """One optimiser step on `batch` (one board's Samples, or samples of several boards:
        a MixedBatch or PaddedSamples); returns the detached losses and gradient norm."""
        if len(batch) == 0:
            raise ValueError("train_step got an empty batch")
        learning_rate = learning_rate_at(self.step, self.config, self.selfplay_seconds)
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate
        self.optimizer.zero_grad(set_to_none=True)
        losses = self.losses(batch)
        if not torch.isfinite(losses.total):
            raise FloatingPointError(
                f"non-finite training loss {losses.total.item()} at step {self.step}"
                f" (policy {losses.policy.item()}, value {losses.value.item()},"
                f" score {losses.score.item()}, ownership {losses.ownership.item()})"
            )
        losses.total.backward()
        max_norm = self.config.grad_clip_norm if self.config.grad_clip_norm > 0 else float("inf")
        grad_norm = torch.nn.utils.clip_grad_norm_(self.net.parameters(), max_norm)
        self.optimizer.step()
        self.step += 1
        if self.ema_net is not None:
            self._update_ema()
        return {**{name: getattr(losses, name).detach() for name in LOSS_NAMES},
                "grad_norm": grad_norm.detach()}

    def train_steps(self, batches: Iterable[Samples | MixedBatch | PaddedSamples]
                    ) -> TrainMetrics:
        """One optimiser step per batch; returns mean metrics over them."""
        was_training = self.net.training
        self.net.train()
        start = time.perf_counter()
        sums: dict[str, torch.Tensor] = {}
        steps = samples = 0
        try:
            for batch in batches:
                values = self.train_step(batch)
                for key, value in values.items():
                    sums[key] = sums[key] + value if key in sums else value
                steps += 1
                samples += len(batch)
        finally:
            self.net.train(was_training)
        seconds = time.perf_counter() - start
        means = {key: float(value) / steps for key, value in sums.items()} if steps else {}
        return TrainMetrics(
            steps=steps,
            samples=samples,
            seconds=seconds,
            samples_per_second=samples / seconds if seconds > 0 else 0.0,
            learning_rate=learning_rate_at(max(self.step - 1, 0), self.config,
                                           self.selfplay_seconds),
            loss_total=means.get("total", float("nan")),
            loss_policy=means.get("policy", float("nan")),
            loss_value=means.get("value", float("nan")),
            loss_score=means.get("score", float("nan")),
            loss_ownership=means.get("ownership", float("nan")),
            loss_score_belief=means.get("score_belief", float("nan")),
            grad_norm=means.get("grad_norm", float("nan")),
        )

    def state_dict(self) -> dict[str, Any]:
        return {
            "model": self.net.state_dict(),
            "ema_model": None if self.ema_net is None else self.ema_net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "step": self.step,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore model, optimiser, step and average (strict: every key must match).

        A state without an average (an older run, or one trained with `ema_decay=0`) starts
        this trainer's average from the restored weights; an average this trainer does not
        keep is dropped.
        """
        self.net.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(state["step"])
        if self.ema_net is not None:
            averaged = state.get("ema_model")
            self.ema_net.load_state_dict(averaged if averaged is not None else state["model"])
