"""Optimiser, schedule, loss and replay settings (registered with Hydra by `catena_zero.cli`).

Example::

    from catena_zero.train.config import TrainConfig
    config = TrainConfig(learning_rate=2e-3, batch_size=256, steps_per_iteration=100)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

SCHEDULES = ("constant", "cosine", "step")


@dataclass
class TrainConfig:
    learning_rate: float = 2e-3  # peak AdamW learning rate (after warmup)
    weight_decay: float = 1e-4  # AdamW decoupled weight decay on conv/linear weights only
    adam_beta1: float = 0.9  # AdamW first-moment decay
    adam_beta2: float = 0.999  # AdamW second-moment decay
    batch_size: int = 256  # samples per optimiser step
    steps_per_iteration: int = 100  # optimiser steps between two self-play phases
    samples_per_position: float = 0.0  # > 0: instead, steps = the iteration's new positions
    #   x this / batch_size (rounded up or down at random, exact on average): the run trains
    #   this many samples per recorded position, whichever tracks it plays
    lr_schedule: str = "cosine"  # "constant", "cosine" (down to min_lr_fraction) or "step"
    warmup_steps: int = 200  # linear warmup from 0 over this many steps
    total_steps: int = 100_000  # horizon of the cosine schedule (constant at the floor after)
    anneal_minutes: float = 0.0  # > 0: the cosine's horizon is this many minutes of
    #   self-play (the run's clock, kept across resumes; summed over Ray's workers)
    #   instead of total_steps
    min_lr_fraction: float = 0.05  # cosine floor as a fraction of learning_rate
    step_milestones: list[int] = field(default_factory=list)  # "step": steps where lr *= step_gamma
    step_gamma: float = 0.1  # "step": factor applied at each milestone
    policy_weight: float = 1.0  # weight of the policy cross-entropy
    value_weight: float = 1.0  # weight of the win/draw/loss cross-entropy
    score_weight: float = 0.05  # weight of the score-margin Huber loss
    ownership_weight: float = 0.1  # weight of the ownership loss (mean over cells)
    score_belief_weight: float = 0.0  # weight of the final-margin distribution loss (needs
    #   network.score_belief_bins > 0)
    score_loss_scale: float = 10.0  # margin points that make one unit of the Huber loss
    score_huber_delta: float = 1.0  # Huber delta in scaled units (quadratic inside, linear out)
    grad_clip_norm: float = 5.0  # clip the global gradient norm to this (0 = off)
    mixed_precision: bool = True  # bfloat16 autocast for training on CUDA (ignored on CPU)
    window_samples: int = 250_000  # replay window: newest trained samples kept
    min_window_samples: int = 2_000  # train only once the window holds this many samples
    augment_symmetries: bool = False  # each minibatch sample under a fresh random board symmetry
    ema_decay: float = 0.0  # publish an exponential moving average of the weights (0 = off)
    side_buckets: list[int] = field(default_factory=lambda: [4, 6, 8, 10])  # a minibatch of
    #   several sides runs as buckets of sides up to each of these, each on its own grid and
    #   normalised as one batch (the same step at about each sample's own grid's cost);
    #   []: one batch padded to its largest board's grid

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        positive_floats = ("learning_rate", "score_loss_scale", "score_huber_delta")
        for name in positive_floats:
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"TrainConfig.{name} must be a finite number > 0, got {value!r}")
        non_negative = (
            "weight_decay", "policy_weight", "value_weight", "score_weight",
            "ownership_weight", "score_belief_weight", "grad_clip_norm", "anneal_minutes",
            "samples_per_position",
        )
        for name in non_negative:
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"TrainConfig.{name} must be a finite number >= 0, got {value!r}")
        if not isinstance(self.ema_decay, int | float) or not 0 <= self.ema_decay < 1:
            raise ValueError(f"TrainConfig.ema_decay must be in [0, 1), got {self.ema_decay!r}")
        if self.anneal_minutes and self.lr_schedule != "cosine":
            raise ValueError(f"TrainConfig.anneal_minutes sets the cosine's horizon; "
                             f"lr_schedule is {self.lr_schedule!r}")
        for name in ("adam_beta1", "adam_beta2", "min_lr_fraction", "step_gamma"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValueError(f"TrainConfig.{name} must be in [0, 1], got {value!r}")
        positive_ints = ("batch_size", "steps_per_iteration", "total_steps", "window_samples")
        for name in positive_ints:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"TrainConfig.{name} must be an int >= 1, got {value!r}")
        for name in ("warmup_steps", "min_window_samples"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"TrainConfig.{name} must be an int >= 0, got {value!r}")
        if self.lr_schedule not in SCHEDULES:
            raise ValueError(
                f"TrainConfig.lr_schedule must be one of {SCHEDULES}, got {self.lr_schedule!r}"
            )
        buckets = list(self.side_buckets)
        if any(not isinstance(side, int) or isinstance(side, bool) or side < 2
               for side in buckets) or buckets != sorted(set(buckets)):
            raise ValueError(f"TrainConfig.side_buckets must be increasing board sides >= 2, "
                             f"got {buckets!r}")
        milestones = list(self.step_milestones)
        if any(not isinstance(m, int) or m < 0 for m in milestones) or milestones != sorted(
            milestones
        ):
            raise ValueError(
                f"TrainConfig.step_milestones must be increasing ints >= 0, got {milestones!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["step_milestones"] = list(values["step_milestones"])
        values["side_buckets"] = list(values["side_buckets"])
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown TrainConfig key(s): {', '.join(unknown)}")
        return cls(**values)


def learning_rate_at(step: int, config: TrainConfig, selfplay_seconds: float = 0.0) -> float:
    """Learning rate for optimiser step `step` (0-based): warmup, then the chosen schedule.

    A pure function of the step, so resuming needs only the step counter; with
    `config.anneal_minutes` the cosine runs over the run's self-play clock instead
    (`selfplay_seconds`, which the run's checkpoints keep), so a run bounded in minutes
    anneals by its end whatever the machine's speed. The warmup stays in steps.
    """
    peak = config.learning_rate
    if config.warmup_steps and step < config.warmup_steps:
        return peak * (step + 1) / config.warmup_steps
    if config.lr_schedule == "constant":
        return peak
    if config.lr_schedule == "step":
        passed = sum(1 for milestone in config.step_milestones if step >= milestone)
        return peak * config.step_gamma**passed
    if config.anneal_minutes:
        progress = min(max(selfplay_seconds, 0.0) / (60.0 * config.anneal_minutes), 1.0)
    else:
        span = max(config.total_steps - config.warmup_steps, 1)
        progress = min(max(step - config.warmup_steps, 0) / span, 1.0)
    floor = config.min_lr_fraction
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


def require_score_belief_head(config: TrainConfig, score_belief_bins: int) -> None:
    """ValueError when `config` trains a score belief and the net has no head for it (0 bins).
    The Trainer checks its net; `catena-zero train` checks the config before any disk work."""
    if config.score_belief_weight > 0 and not score_belief_bins:
        raise ValueError("train.score_belief_weight > 0 needs a score-belief head: set "
                         "network.score_belief_bins (e.g. 81)")
