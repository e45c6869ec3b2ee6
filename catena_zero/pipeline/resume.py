"""Where a run starts, on every runtime: its newest good checkpoint, `loop.start_from`, or a
fresh net.

    resumed = resume_run(config)             # trainer, LoopState, RNG streams, the checkpoint
    window = resumed.replay_window(mix)      # the shards that checkpoint covers
    logger = resumed.run_log()               # metrics.jsonl and TensorBoard from its iteration

Resuming puts the run folder back as it stood at the checkpoint, so that the counters, the
replay window, the RNG streams and the metrics all go on from one iteration: shards of later
iterations are discarded (the inline runtime plays them again) or, where workers hand shards
over by files (`handover`: the process and Ray runtimes), moved back to pending/ and trained
on again, so no written shard is lost; metrics records of later iterations are dropped
(`metrics.resume_metrics`, run by `RunLog`). Damaged newer checkpoints are skipped, each
named in one line; a run with none intact is refused in one line (CheckpointError).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from catena_zero.data import ReplayWindow, list_shards, shard_filename
from catena_zero.network import NetworkConfig
from catena_zero.pipeline.config import TrainLoopConfig
from catena_zero.pipeline.handover import REQUEUED_PREFIX, pending_dir, shard_sequence
from catena_zero.pipeline.messages import LoopState
from catena_zero.pipeline.metrics import RunLog
from catena_zero.pipeline.steps import build_fresh_network, warn
from catena_zero.pipeline.tracks import TrackMix
from catena_zero.train.checkpoint import (
    Checkpoint,
    build_network,
    list_checkpoints,
    load_checkpoint,
    load_latest_intact_checkpoint,
    restore_rng_states,
    restore_trainer,
)
from catena_zero.train.grow import grow_checkpoint
from catena_zero.train.trainer import Trainer


@dataclasses.dataclass
class ResumedRun:
    """A run as `resume_run` left it: ready to play and train its next iteration."""

    config: TrainLoopConfig
    trainer: Trainer
    state: LoopState
    generators: dict[str, np.random.Generator]  # "selfplay" and "train", restored or new
    checkpoint: Path | None  # the checkpoint resumed from; None for a fresh start
    requeued: list[Path]  # shards moved back to pending/ to be trained on again

    @property
    def run_dir(self) -> Path:
        return Path(self.config.loop.run_dir)

    @property
    def shard_dir(self) -> Path:
        return self.run_dir / "shards"

    @property
    def checkpoint_dir(self) -> Path:
        return self.run_dir / "checkpoints"

    def replay_window(self, mix: TrackMix) -> ReplayWindow:
        """The replay window over the run's shards (those of the resumed counters), drawing
        each track of a mix by its share at the resumed clock."""
        window = ReplayWindow(self.shard_dir, window_samples=self.config.train.window_samples,
                              num_planes=self.trainer.net.num_planes)
        if self.config.mix.is_mixed:
            window.set_track_shares(mix.shares_of(self.state.clock))
        return window

    def run_log(self, log: Callable[[str], None] | None = warn) -> RunLog:
        """The run's TensorBoard scalars and metrics.jsonl from the resumed iteration on
        (records of later iterations dropped); `log` gets its warnings (a damaged file)."""
        loop = self.config.loop
        return RunLog(self.run_dir, self.state.counters.iteration, tensorboard=loop.tensorboard,
                      report_every=loop.report_every, log=log)


def resume_run(config: TrainLoopConfig, log: Callable[[str], None] = warn,
               handover: bool = False) -> ResumedRun:
    """The trainer and LoopState of `config.loop.run_dir`: from its newest intact checkpoint
    when `loop.resume`, else fresh (seeded by `loop.seed`), with the RNG streams to go on
    with. Creates shards/ and checkpoints/ (and pending/ with `handover`).

    `log` gets the lines about the checkpoint chosen (damaged newer files skipped, a
    `start_from` written in): a learner collects them for its driver to print. The line that
    a `network` setting is not used goes to stderr, where the net is built. Shards of
    iterations after the checkpoint are discarded, or with `handover` moved back to pending/
    (`requeue_unsaved_shards`) to be trained on again.
    """
    loop = config.loop
    run_dir = Path(loop.run_dir)
    shard_dir, checkpoint_dir = run_dir / "shards", run_dir / "checkpoints"
    for directory in (shard_dir, checkpoint_dir, *([pending_dir(run_dir)] if handover else [])):
        directory.mkdir(parents=True, exist_ok=True)
    generators = {"selfplay": np.random.default_rng([loop.seed, 1]),
                  "train": np.random.default_rng([loop.seed, 2])}
    checkpoint = find_resume_checkpoint(config, checkpoint_dir, log)
    requeued = []
    if handover:
        requeued = requeue_unsaved_shards(
            run_dir, checkpoint.counters.iteration if checkpoint is not None else 0)
    trainer, state = restore_or_start(config, checkpoint, shard_dir, loop.device, generators)
    return ResumedRun(config, trainer, state, generators,
                      None if checkpoint is None else checkpoint.path, requeued)


def find_resume_checkpoint(config: TrainLoopConfig, checkpoint_dir: Path,
                           log: Callable[[str], None] = warn) -> Checkpoint | None:
    """The checkpoint a run resumes from: None when not resuming or when there is none,
    else the newest intact one. Each newer damaged file skipped gets a line through `log`
    naming it and its problem; CheckpointError (one line) when every checkpoint is damaged.
    A damaged file is left where it is. A run with none yet and `loop.start_from` starts
    from that checkpoint, written into `checkpoint_dir` first (grown to `network.blocks`)."""
    if not config.loop.resume:
        return None
    checkpoint, refused = load_latest_intact_checkpoint(checkpoint_dir)
    for message in refused:
        log(f"warning: skipping {message}; resuming from {checkpoint.path}")
    if checkpoint is None and config.loop.start_from:
        path = start_checkpoint(config.loop.start_from, config.network, checkpoint_dir)
        log(f"train: starting from {config.loop.start_from} as {path} "
            f"(a {describe_network(config.network)} net)")
        checkpoint = load_checkpoint(path)
    return checkpoint


def restore_or_start(config: TrainLoopConfig, checkpoint: Checkpoint | None, shard_dir: Path,
                     device, generators: dict[str, np.random.Generator],
                     log: Callable[[str], None] = warn) -> tuple[Trainer, LoopState]:
    """(trainer, LoopState) from `checkpoint` (its weights, optimiser, step, counters and
    `generators`' states), or fresh when None; shards of later iterations are removed."""
    if checkpoint is None:
        torch.manual_seed(config.loop.seed)
        trainer = Trainer(build_fresh_network(config), config.train, device)
        discard_shards_from(shard_dir, 0)
        return trainer, LoopState()
    trainer = Trainer(build_network(checkpoint, load_weights=False), config.train, device)
    restore_trainer(checkpoint, trainer)
    if trainer.net.config != config.network:
        # A run goes on with the net it has; only start_from grows one.
        log(f"train: resuming the checkpoint's {describe_network(trainer.net.config)} net; "
            f"network ({describe_network(config.network)}) is not used")
    restore_rng_states(checkpoint.rng_states, generators)
    discard_shards_from(shard_dir, checkpoint.counters.iteration)
    return trainer, loop_state_of(checkpoint)


def loop_state_of(checkpoint: Checkpoint) -> LoopState:
    """The LoopState a checkpoint stored (its counters, fair komis, iterations per track)."""
    extra = checkpoint.extra
    fair_komi = extra.get("fair_komi")
    return LoopState(
        counters=checkpoint.counters,
        fair_komi=None if fair_komi is None else float(fair_komi),
        fair_komis={str(key): float(value)
                    for key, value in (extra.get("fair_komis") or {}).items()},
        track_iterations={str(key): int(value)
                          for key, value in (extra.get("track_iterations") or {}).items()},
        # absent from checkpoints written before the mix ran on a clock of seconds: the
        # clock then starts at zero for every track
        track_seconds={str(key): float(value)
                       for key, value in (extra.get("track_seconds") or {}).items()})


def discard_shards_from(directory: Path, iteration: int) -> None:
    """Remove shards of iterations >= `iteration` (work after the resumed checkpoint)."""
    for path in list_shards(directory):
        if path.name >= shard_filename(iteration):
            path.unlink(missing_ok=True)


def requeue_unsaved_shards(run_dir: Path, iteration: int) -> list[Path]:
    """Move shards adopted at or after `iteration` (work after the checkpoint) back to pending/.

    Their names keep their sequence so they are consumed again in the same order.
    """
    moved = []
    pending = pending_dir(run_dir)
    pending.mkdir(parents=True, exist_ok=True)
    for path in list_shards(run_dir / "shards"):
        if shard_sequence(path) >= iteration:
            target = pending / f"{REQUEUED_PREFIX}{path.name}"
            path.replace(target)
            moved.append(target)
    return moved


def start_checkpoint(source: str, network: NetworkConfig, checkpoint_dir: Path) -> Path:
    """Write the checkpoint `source` into `checkpoint_dir` for a run whose network is
    `network`: as it is, or grown to `network.blocks` and `network.channels`. ValueError
    (one line) when the nets differ in anything but a deeper or wider trunk."""
    check_start_network(source, load_checkpoint(source), network)
    return grow_checkpoint(source, network.blocks, checkpoint_dir, network.channels)


def check_start_from(config: TrainLoopConfig) -> None:
    """Refuse, before a run touches its folder, a `loop.start_from` it would start from
    (its run_dir holds no checkpoint yet) that cannot be read (CheckpointError) or whose net
    does not fit `network` (ValueError); one line each."""
    loop = config.loop
    if not (loop.resume and loop.start_from and loop.run_dir):
        return
    if list_checkpoints(Path(loop.run_dir) / "checkpoints"):
        return  # the run continues from its own checkpoints
    check_start_network(loop.start_from, load_checkpoint(loop.start_from), config.network)


def check_start_network(source: str, saved: Checkpoint, network: NetworkConfig) -> None:
    """ValueError (one line) unless `network` is the net of `saved` or one with a deeper or
    wider trunk."""
    theirs = NetworkConfig.from_dict(dict(saved.network_args["config"]))
    mine = dataclasses.replace(network, blocks=theirs.blocks, channels=theirs.channels)
    if mine != theirs:
        differing = [f"{name} {getattr(theirs, name)!r} (this run: {getattr(mine, name)!r})"
                     for name in NetworkConfig.__dataclass_fields__
                     if getattr(mine, name) != getattr(theirs, name)]
        raise ValueError(f"start_from {source}: its net differs from this run's network: "
                         f"{', '.join(differing)}")
    for name in ("blocks", "channels"):
        if getattr(network, name) < getattr(theirs, name):
            raise ValueError(f"start_from {source}: its net has {getattr(theirs, name)} "
                             f"{name}, network.{name} is {getattr(network, name)} (a net can "
                             f"grow, not shrink)")


def describe_network(network: NetworkConfig) -> str:
    """`6x32` for a net of 6 blocks of 32 channels (the start-up line's short form)."""
    return f"{network.blocks}x{network.channels}"
