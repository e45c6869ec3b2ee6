"""The self-play worker of the process and Ray runtimes: plays the tasks a driver hands out.

A plain class: `runtime=processes` runs one in each worker process, the Ray runtime wraps it
in an actor (`pipeline/ray/actors.py`). A worker holds its own engine, network copy and RNG.
Each task names the weights version to play with; the weights are loaded only when the
version changes (on Ray they travel through the object store once per version). Games are
written as one shard per task, atomically, into the run's pending/ directory, where the
learner adopts them (`handover`); the first `loop.sample_games` games are kept whole in the
shard's meta, and the learner writes them as game records under the iteration the shard
becomes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from catena_zero.pipeline.config import TrainLoopConfig
from catena_zero.pipeline.messages import LoopState, SelfPlayResult, WeightsMessage
from catena_zero.pipeline.steps import (
    TrackPlayers,
    build_fresh_network,
    selfplay_iteration,
    set_torch_threads,
)
from catena_zero.pipeline.tracks import TrackClock, TrackMix
from catena_zero.rules import Track


@dataclasses.dataclass(frozen=True)
class SelfPlayTask:
    """Driver -> worker: play one shard's worth of games with a given weights version."""

    task_id: int  # unique per run; names the shard file
    attempt: int  # 0 for the first try; a resubmission after a worker death counts up
    fair_komi: float  # komis are drawn around this estimate
    weights_version: int  # version of the WeightsMessage passed with the task
    shard_path: str  # where the shard is written (in pending/)
    track: str = ""  # the track to play, "side/game_type/scoring" ("": the run's own rules)


def task_track_key(task: SelfPlayTask, mix: TrackMix) -> str:
    """The Track.key a task plays (a task of a run without a mix plays the run's track)."""
    return Track.parse(task.track).key if task.track else mix.tracks[0].key


def next_task(config: TrainLoopConfig, state: LoopState, mix: TrackMix, clock: TrackClock,
              task_id: int, weights_version: int, directory: str | Path) -> SelfPlayTask:
    """The run's next task: the track its mix picks on `clock` (the learner's, with the
    tasks in flight counted ahead), komis drawn around that track's fair komi, the shard
    written as `directory/shard-<task_id>.npz`."""
    track = mix.next_track(clock)
    fair_komi = state.fair_komis.get(track.key, state.fair_komi or 0.0)
    return SelfPlayTask(task_id=task_id, attempt=0, fair_komi=float(fair_komi),
                        weights_version=weights_version,
                        shard_path=str(Path(directory) / f"shard-{task_id:012d}.npz"),
                        track=str(track) if config.mix.is_mixed else "")


class SelfPlayWorkerCore:
    """Plays self-play tasks of any track of the run, evaluating on `device`; `remote_model`
    (optional) stands in for the net's inference copy and sends leaves elsewhere (the Ray
    runtime's shared inference actor)."""

    def __init__(self, config: TrainLoopConfig, worker_index: int, remote_model=None,
                 device: str = "cpu"):
        # At most one CPU per actor: more threads than that only fight each other.
        set_torch_threads(config.loop.threads, automatic=1)
        self.config = config
        self.worker_index = worker_index
        self.net = build_fresh_network(config)
        self.weights_version = -1
        self.players = TrackPlayers(config, self.net, device, model=remote_model)
        self.default_track = Track.from_rules(config.rules)

    def set_weights(self, weights: WeightsMessage) -> int:
        if weights.version != self.weights_version:
            self.net.load_state_dict(weights.state_dict)
            self.players.refresh()
            self.weights_version = weights.version
        return self.weights_version

    def play(self, task: SelfPlayTask, weights: WeightsMessage | None) -> SelfPlayResult:
        if weights is not None:
            self.set_weights(weights)
        track = Track.parse(task.track) if task.track else self.default_track
        engine, evaluator, komi_sampler = self.players.of(track)
        komi_sampler.fair_komi = task.fair_komi
        # A resubmitted task gets a fresh stream so it does not replay the failed attempt.
        rng = np.random.default_rng([self.config.loop.seed, 7, task.task_id, task.attempt])
        # The games kept whole travel in the shard; the learner writes them as records once
        # the shard has its iteration (shards are adopted in arrival order).
        return selfplay_iteration(engine, evaluator, self.config, komi_sampler,
                                  Path(task.shard_path), task.task_id, self.weights_version,
                                  rng, keep_games=True)

    def ping(self) -> int:
        return self.worker_index
