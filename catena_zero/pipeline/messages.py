"""Typed messages between the actors of a training run, the same for every runtime.

    learner ── WeightsMessage ──▶ self-play workers
    workers ── SelfPlayResult ──▶ learner (one shard each, written atomically)
    learner ── LearnerResult   (its own step outcome)
    learner ── CheckpointEvent ──▶ an after-checkpoint hook (the evaluator's gate)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from catena_zero.pipeline.tracks import TrackClock
from catena_zero.rules import Track
from catena_zero.selfplay.selfplay import SelfPlayStats
from catena_zero.train.checkpoint import Counters


@dataclass(frozen=True)
class WeightsMessage:
    """Learner -> self-play workers: the current weights and their version (trainer step)."""

    version: int  # trainer step that produced these weights
    state_dict: dict[str, torch.Tensor]  # net.state_dict() on the CPU


@dataclass(frozen=True)
class SelfPlayResult:
    """Self-play worker -> learner: one written shard and what produced it."""

    iteration: int  # iteration (= shard sequence number)
    weights_version: int  # WeightsMessage.version the games were played with
    shard_path: str  # the shard, written atomically
    stats: SelfPlayStats  # games, positions, lengths, Black wins, seconds
    fair_komi: float  # the fair-komi estimate komis were drawn around
    track: str = ""  # the track played, "side/game_type/scoring" ("": the run's own rules)


@dataclass(frozen=True)
class LearnerResult:
    """Learner step outcome: the new weights version and the training metrics."""

    weights_version: int  # trainer step after this call
    metrics: dict[str, float] | None  # TrainMetrics.as_dict(); None while the window is small
    window_samples: int  # samples in the replay window


@dataclass(frozen=True)
class CheckpointEvent:
    """What an after-checkpoint hook (e.g. arena gating) receives."""

    path: Path  # the checkpoint just written
    counters: Counters  # counters stored in it
    fair_komi: float  # current fair-komi estimate of the run's first track
    run_dir: Path  # the run directory
    tracks: tuple[Track, ...] = ()  # the tracks of the run's mix (empty: the run's one rules)
    fair_komis: dict[str, float] = field(default_factory=dict)  # Track.key -> its estimate


CheckpointHook = Callable[[CheckpointEvent], None]


@dataclass
class LoopState:
    """Mutable state of a running loop (restored on resume)."""

    counters: Counters = field(default_factory=Counters)
    fair_komi: float | None = None  # the first track's estimate; None until the first one
    fair_komis: dict[str, float] = field(default_factory=dict)  # Track.key -> its estimate
    track_iterations: dict[str, int] = field(default_factory=dict)  # Track.key -> iterations
    track_seconds: dict[str, float] = field(default_factory=dict)  # Track.key -> self-play s

    @property
    def clock(self) -> TrackClock:
        """The mix's clock over this state's own dicts (adding to it updates the state)."""
        return TrackClock(iterations=self.track_iterations, seconds=self.track_seconds)
