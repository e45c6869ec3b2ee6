"""The learner of the Ray runtime: consumes self-play shards in arrival order, trains, checkpoints.

It is a plain class (no Ray here) so it can be tested in-process; `runtime.py` wraps it in an
actor. Shard handover works by files, like KataGo's: a self-play worker writes each shard
atomically into `<run_dir>/pending/`; the learner adopts it by renaming it (atomically) to
`<run_dir>/shards/shard-<iteration>.npz`, so `shards/` always holds exactly the shards that
were trained on, in the order they were trained on. On resume the shards adopted after the
newest checkpoint are moved back to `pending/` and consumed again: no written shard is ever
lost, and the counters and replay window are those of the checkpoint.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from catena_zero.data import (
    ReplayWindow,
    ShardError,
    ShardMeta,
    list_shards,
    read_shard_meta,
    shard_filename,
)
from catena_zero.network.config import NetworkConfig
from catena_zero.pipeline.config import TrainLoopConfig
from catena_zero.pipeline.messages import CheckpointEvent, LoopState, SelfPlayResult, WeightsMessage
from catena_zero.pipeline.metrics import RunLog
from catena_zero.pipeline.probe import probe_due, run_probe
from catena_zero.pipeline.steps import (
    TrackPlayers,
    fair_komi_due,
    find_resume_checkpoint,
    iteration_scalars,
    learner_iteration,
    make_weights_message,
    refresh_fair_komi,
    resume_or_start,
    save_loop_checkpoint,
    save_sample_games,
    set_torch_threads,
)
from catena_zero.pipeline.tracks import TrackMix
from catena_zero.selfplay.selfplay import SampleGame, SelfPlayStats
from catena_zero.train.checkpoint import Counters

PENDING_DIR = "pending"
_SHARD_SEQUENCE = re.compile(r"shard-(\d+)")


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


def pending_dir(run_dir: str | Path) -> Path:
    return Path(run_dir) / PENDING_DIR


def _sequence(path: Path) -> int:
    match = _SHARD_SEQUENCE.match(path.name)
    return int(match.group(1)) if match else -1


def sample_games_of(extra: dict) -> list[SampleGame]:
    """The games `selfplay_iteration(keep_games=True)` stored in a shard's meta extras
    (`[[game_id, komi, [action, ...]], ...]`); [] when there are none or they are not in
    that form."""
    entries = extra.get("sample_games")
    if not isinstance(entries, list):
        return []
    games = []
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], list)
                and all(_is_int(value) for value in (entry[0], entry[1], *entry[2]))):
            return []
        games.append(SampleGame(entry[0], entry[1], tuple(entry[2])))
    return games


def orphan_result(path: str | Path) -> SelfPlayResult:
    """A SelfPlayResult for a shard found on disk (its statistics come from its metadata)."""
    meta = read_shard_meta(path)
    extra = meta.extra or {}
    stats = SelfPlayStats(games=int(meta.num_games), positions=int(extra.get("positions", 0)),
                          black_wins=int(extra.get("black_wins", 0)),
                          draws=int(extra.get("draws", 0)), seconds=0.0)
    return SelfPlayResult(iteration=int(extra.get("iteration", -1)),
                          weights_version=int(meta.model_step), shard_path=str(path),
                          stats=stats, fair_komi=float(extra.get("fair_komi", 0.0)))


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def requeue_unsaved_shards(run_dir: Path, iteration: int) -> list[Path]:
    """Move shards adopted at or after `iteration` (work after the checkpoint) back to pending/.

    Their names keep their sequence so they are consumed again in the same order.
    """
    moved = []
    pending = pending_dir(run_dir)
    pending.mkdir(parents=True, exist_ok=True)
    for path in list_shards(run_dir / "shards"):
        if _sequence(path) >= iteration:
            target = pending / f"requeued-{path.name}"
            path.replace(target)
            moved.append(target)
    return moved


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
        for directory in (self.shard_dir, self.checkpoint_dir, pending_dir(self.run_dir)):
            directory.mkdir(parents=True, exist_ok=True)
        self.generators = {"selfplay": np.random.default_rng([loop.seed, 1]),
                           "train": np.random.default_rng([loop.seed, 2])}
        # Damaged newer checkpoints are skipped; the driver asks for these lines to print.
        self.resume_warnings: list[str] = []
        resume_from = find_resume_checkpoint(config, self.checkpoint_dir,
                                             log=self.resume_warnings.append)
        iteration = resume_from.counters.iteration if resume_from is not None else 0
        self.requeued = requeue_unsaved_shards(self.run_dir, iteration)
        self.trainer, self.state = resume_or_start(config, self.checkpoint_dir, self.shard_dir,
                                                   loop.device, self.generators,
                                                   resume_from=resume_from)
        self.mix = TrackMix(config.mix, config.rules)
        self.players = TrackPlayers(config, self.trainer.published_net, self.trainer.device)
        for index, track in enumerate(self.mix.tracks):  # every track's komis need a centre
            if track.key not in self.state.fair_komis:
                engine, evaluator, _ = self.players.of(track)
                refresh_fair_komi(self.state, engine, evaluator, config.selfplay,
                                  first=index == 0)
        self.window = ReplayWindow(self.shard_dir, window_samples=config.train.window_samples,
                                   num_planes=self.trainer.net.num_planes)
        if config.mix.is_mixed:
            self.window.set_track_shares(self.mix.shares_of(self.state.clock))
        # Said by the driver: an actor's stderr does not reach the terminal.
        self.log_warnings: list[str] = []
        self.logger = RunLog(self.run_dir, self.state.counters.iteration,
                             tensorboard=loop.tensorboard, report_every=loop.report_every,
                             log=self.log_warnings.append)
        self.probed_at = -1  # the iteration of the last probe
        self.last_checkpoint: Path | None = (None if resume_from is None
                                              else resume_from.path)

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
        paths = list_shards(pending_dir(self.run_dir))
        return [str(p) for p in sorted(paths, key=lambda p: (not p.name.startswith("requeued-"),
                                                              p.stat().st_mtime, p.name))]

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

