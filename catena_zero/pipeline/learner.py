"""The learner of the process and Ray runtimes: consumes self-play shards in arrival order,
trains, checkpoints.

It is a plain class, run in the driver's process by `runtime=processes` and wrapped in an
actor by the Ray runtime (`pipeline/ray/actors.py`), and tested in-process. Shards reach it
by files (`handover`): it adopts each by renaming it into shards/ under the next iteration.
It starts where `resume.resume_run` leaves the run; the shards adopted after the resumed
checkpoint wait in pending/ and are consumed again, so the counters and replay window are
those of the checkpoint and no written shard is lost.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from catena_zero.data import ShardError, ShardMeta, read_shard_meta, shard_filename
from catena_zero.network.config import NetworkConfig
from catena_zero.pipeline.config import TrainLoopConfig
from catena_zero.pipeline.handover import pending_shards, sample_games_of
from catena_zero.pipeline.messages import CheckpointEvent, LoopState, SelfPlayResult, WeightsMessage
from catena_zero.pipeline.probe import probe_due, run_probe
from catena_zero.pipeline.resume import resume_run
from catena_zero.pipeline.steps import (
    TrackPlayers,
    fair_komi_due,
    iteration_scalars,
    learner_iteration,
    make_weights_message,
    refresh_fair_komi,
    save_loop_checkpoint,
    save_sample_games,
    set_torch_threads,
)
from catena_zero.pipeline.tracks import TrackMix
from catena_zero.train.checkpoint import Counters


@dataclasses.dataclass(frozen=True)
class LearnerStatus:
    """Learner -> driver after consuming one shard."""

    counters: Counters  # counters after this shard
    weights_version: int  # version of the weights now held (trainer step)
    fair_komi: float  # the current fair-komi estimate of the run's first track
    checkpoint: str | None  # checkpoint written after this shard, if any
    scalars: dict[str, float]  # what was logged for this iteration
    fair_komis: dict[str, float] = dataclasses.field(default_factory=dict)  # Track.key -> centre
    track_iterations: dict[str, int] = dataclasses.field(default_factory=dict)  # Track.key -> n
    track_seconds: dict[str, float] = dataclasses.field(default_factory=dict)  # Track.key -> s


class LearnerCore:
    """Trains on shards handed over by the self-play workers; resumes from the newest checkpoint.

    `consume(result)` adopts the result's shard, takes `training_steps` optimiser
    steps on the replay window, logs, and checkpoints every `loop.checkpoint_every` shards.
    """

    def __init__(self, config: TrainLoopConfig):
        loop = config.loop
        if not loop.run_dir:
            raise ValueError("loop.run_dir must be set for the Ray runtime")
        set_torch_threads(loop.threads, automatic=1)  # the learner actor holds one CPU
        self.config = config
        self.run_dir = Path(loop.run_dir)
        self.shard_dir = self.run_dir / "shards"
        self.checkpoint_dir = self.run_dir / "checkpoints"
        # Damaged newer checkpoints are skipped; the driver asks for these lines to print.
        self.resume_warnings: list[str] = []
        resumed = resume_run(config, log=self.resume_warnings.append, handover=True)
        self.generators = resumed.generators
        self.requeued = resumed.requeued
        self.trainer, self.state = resumed.trainer, resumed.state
        self.mix = TrackMix(config.mix, config.rules)
        self.players = TrackPlayers(config, self.trainer.published_net, self.trainer.device)
        for index, track in enumerate(self.mix.tracks):  # every track's komis need a centre
            if track.key not in self.state.fair_komis:
                engine, evaluator, _ = self.players.of(track)
                refresh_fair_komi(self.state, engine, evaluator, config.selfplay,
                                  first=index == 0)
        self.window = resumed.replay_window(self.mix)
        # Said by the driver: an actor's stderr does not reach the terminal.
        self.log_warnings: list[str] = []
        self.logger = resumed.run_log(log=self.log_warnings.append)
        self.probed_at = -1  # the iteration of the last probe
        self.last_checkpoint: Path | None = resumed.checkpoint

    # --- queries -----------------------------------------------------------------------
    def weights(self) -> WeightsMessage:
        return make_weights_message(self.trainer)

    def loop_state(self) -> LoopState:
        return self.state

    def network_config(self) -> NetworkConfig:
        """The config of the net this learner trains (a resumed checkpoint's)."""
        return self.trainer.net.config

    def warnings(self) -> list[str]:
        """The lines about damaged checkpoints skipped when this learner resumed, and its run
        log's warnings (a damaged metrics file)."""
        return [*self.resume_warnings, *self.log_warnings]

    def run_log_warnings(self) -> list[str]:
        """The run log's warnings alone (the driver names damaged checkpoints itself)."""
        return list(self.log_warnings)

    def pending_shards(self) -> list[str]:
        """Complete shards waiting in pending/ (left by workers or requeued), oldest first."""
        return pending_shards(self.run_dir)

    # --- work --------------------------------------------------------------------------
    def adopt(self, shard_path: str | Path) -> Path:
        """Rename a pending shard to the next sequence number in shards/ (atomic)."""
        source = Path(shard_path)
        read_shard_meta(source)  # refuse a foreign or corrupt file before it enters the window
        target = self.shard_dir / shard_filename(self.state.counters.iteration)
        source.replace(target)
        return target

    def consume(self, result: SelfPlayResult) -> LearnerStatus:
        """Train on one new shard; returns the counters, weights version and any checkpoint."""
        iteration = self.state.counters.iteration  # the sequence number the shard takes
        try:
            meta = read_shard_meta(self.adopt(result.shard_path))
        except (ShardError, OSError) as error:
            raise ValueError(f"cannot adopt shard {result.shard_path}: {error}") from error
        track = meta.track
        self.save_records(meta, iteration)
        mixed = self.config.mix.is_mixed
        # the track's clock moves first: the window's shares are those after this shard
        self.state.clock.add(track.key, result.stats.seconds)
        if mixed:
            self.window.set_track_shares(self.mix.shares_of(self.state.clock))
        learned = learner_iteration(self.trainer, self.window, self.config.train,
                                    self.generators["train"],
                                    None if mixed else self.mix.tracks[0].rules().board,
                                    selfplay_seconds=self.state.clock.total_seconds,
                                    new_positions=result.stats.positions)
        self.players.refresh()
        counters = self.state.counters
        stats = result.stats
        self.state.counters = dataclasses.replace(
            counters, step=self.trainer.step, iteration=counters.iteration + 1,
            games=counters.games + stats.games, positions=counters.positions + stats.positions)
        # As in the inline loop: a track's centre moves every fair_komi_every of its own
        # iterations, smoothed.
        if fair_komi_due(self.state, track, self.config.selfplay.fair_komi_every):
            engine, evaluator, _ = self.players.of(track)
            refresh_fair_komi(self.state, engine, evaluator, self.config.selfplay,
                              first=track == self.mix.tracks[0])
        scalars = iteration_scalars(result, learned, track if mixed else None)
        scalars["selfplay/weights_lag"] = float(self.trainer.step - result.weights_version)
        if probe_due(self.config.loop, self.state.counters.iteration):
            self.probe()
        self.logger.log(self.state.counters.iteration, self.trainer.step, scalars)
        checkpoint = None
        if self.state.counters.iteration % self.config.loop.checkpoint_every == 0:
            checkpoint = self.checkpoint()
        return self._status(checkpoint, scalars)

    def save_records(self, meta: ShardMeta, iteration: int) -> list[Path]:
        """The games a worker kept whole in a shard's meta, written as
        `games/iter<iteration>-game<k>.sgf` under the iteration the shard became, as the
        inline loop names them. A shard left in pending/ by a stopped run brings its games
        too; one whose games do not replay (not written by a worker) brings none."""
        games = sample_games_of(meta.extra)[:self.config.loop.sample_games]
        try:
            return save_sample_games(self.run_dir / "games", games, meta.track.rules(),
                                     iteration, meta.model_step)
        except (ValueError, OSError):  # records are a courtesy: never stop training for one
            return []

    def probe(self) -> dict[str, float]:
        """Play the strength probe with the current net now (`pipeline.probe`) and log it;
        the driver calls it once more after the last shard."""
        iteration = self.state.counters.iteration
        if iteration == self.probed_at:
            return {}
        self.probed_at = iteration
        probed = run_probe(self.players, self.mix.tracks, self.state.fair_komis,
                           self.config.search, self.config.loop.probe,
                           seed=self.config.loop.seed + max(iteration - 1, 0))
        self.logger.log_probe(iteration, self.trainer.step, probed)
        return probed

    def checkpoint(self) -> Path:
        """Write a checkpoint now (with the fair-komi centre tasks are drawn around)."""
        self.last_checkpoint = save_loop_checkpoint(self.config, self.trainer, self.state,
                                                    self.checkpoint_dir, self.generators)
        return self.last_checkpoint

    def checkpoint_event(self) -> CheckpointEvent | None:
        if self.last_checkpoint is None:
            return None
        return CheckpointEvent(self.last_checkpoint, self.state.counters,
                               float(self.state.fair_komi), self.run_dir,
                               tracks=tuple(self.mix.tracks) if self.config.mix.is_mixed else (),
                               fair_komis=dict(self.state.fair_komis))

    def close(self) -> None:
        self.logger.close()

    def _status(self, checkpoint: Path | None, scalars: dict[str, float]) -> LearnerStatus:
        return LearnerStatus(counters=self.state.counters, weights_version=self.trainer.step,
                             fair_komi=float(self.state.fair_komi),
                             checkpoint=None if checkpoint is None else str(checkpoint),
                             scalars=scalars, fair_komis=dict(self.state.fair_komis),
                             track_iterations=dict(self.state.track_iterations),
                             track_seconds=dict(self.state.track_seconds))
