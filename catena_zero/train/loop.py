"""The alternating loop (`runtime=inline`): self-play an iteration, train on the replay window,
checkpoint; repeat. Resumes exactly from its newest checkpoint.

Run directory layout::

    <run_dir>/shards/shard-<iteration>.npz        one shard of complete games per iteration
    <run_dir>/checkpoints/checkpoint-*.pt         model, optimiser, counters, RNG, config
    <run_dir>/tensorboard/                        losses, positions/s, games/s, game length,
                                                  Black win rate, fair-komi estimate

The pieces are plain functions and typed messages so that a distributed runtime can run
`selfplay_iteration` in workers and `learner_iteration` in a learner, exchanging
`WeightsMessage` / `SelfPlayResult` / `LearnerResult`:

    weights = make_weights_message(trainer)                  # learner -> workers
    result = selfplay_iteration(engine, evaluator, config, komi_sampler, path, ...)
    learned = learner_iteration(trainer, window, config.train, rng)
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from catena_zero.data import (
    ReplayWindow,
    ShardMeta,
    list_shards,
    random_symmetries,
    shard_filename,
    write_shard,
)
from catena_zero.network import PolicyValueNet
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Engine
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.selfplay.evaluator import NetworkEvaluator
from catena_zero.selfplay.fair_komi import estimate_fair_komi
from catena_zero.selfplay.selfplay import KomiSampler, SelfPlay, SelfPlayStats
from catena_zero.train.checkpoint import (
    Counters,
    build_network,
    latest_checkpoint,
    load_checkpoint,
    restore_rng_states,
    restore_trainer,
    save_checkpoint,
)
from catena_zero.train.config import TrainConfig
from catena_zero.train.loop_config import TrainLoopConfig
from catena_zero.train.trainer import Trainer


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
    fair_komi: float  # current fair-komi estimate
    run_dir: Path  # the run directory


CheckpointHook = Callable[[CheckpointEvent], None]


@dataclass
class LoopState:
    """Mutable state of a running loop (restored on resume)."""

    counters: Counters = field(default_factory=Counters)
    fair_komi: float | None = None  # None until the first estimate


def refresh_fair_komi(state: LoopState, engine: Engine, evaluate_fn,
                      config: SelfPlayConfig) -> float:
    """Re-estimate the network's fair komi and move the state's centre towards it:
    `fair_komi_smoothing * old + (1 - fair_komi_smoothing) * new`. The first estimate is
    taken as it is. One rule for the inline loop and the Ray learner. Returns the centre."""
    estimate = estimate_fair_komi(engine, evaluate_fn)
    if state.fair_komi is None:
        state.fair_komi = estimate
    else:
        smoothing = config.fair_komi_smoothing
        state.fair_komi = smoothing * state.fair_komi + (1.0 - smoothing) * estimate
    return state.fair_komi


def make_weights_message(trainer: Trainer) -> WeightsMessage:
    """The trainer's published weights (the average when kept) on the CPU, versioned by its
    step."""
    state = {key: value.detach().cpu().clone()
             for key, value in trainer.published_net.state_dict().items()}
    return WeightsMessage(version=trainer.step, state_dict=state)


def build_fresh_network(config: TrainLoopConfig) -> PolicyValueNet:
    board = config.rules.board
    return PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index,
                          config.network)


def rules_dict(config: TrainLoopConfig) -> dict[str, Any]:
    rules = config.rules
    return {"side": rules.board.side, "game_type": _enum_value(rules.game_type),
            "scoring": _enum_value(rules.scoring)}


def _enum_value(value: Any) -> str:
    return str(getattr(value, "value", value))


def selfplay_iteration(engine: Engine, evaluate_fn, config: TrainLoopConfig,
                       komi_sampler: KomiSampler, shard_path: str | Path, iteration: int,
                       weights_version: int, rng: np.random.Generator) -> SelfPlayResult:
    """Play `games_per_iteration` games and write them as one shard (atomically)."""
    selfplay = SelfPlay(engine, evaluate_fn, config.search, config.selfplay, komi_sampler)
    samples, stats = selfplay.play_games(config.loop.games_per_iteration, rng)
    rules = rules_dict(config)
    meta = ShardMeta(
        side=rules["side"], game_type=rules["game_type"], scoring=rules["scoring"],
        model_step=weights_version, num_games=stats.games, model_version=f"step{weights_version}",
        extra={"iteration": iteration, "positions": stats.positions,
               "fair_komi": komi_sampler.fair_komi, "black_wins": stats.black_wins,
               "draws": stats.draws, "mean_game_length": stats.mean_game_length},
    )
    path = write_shard(shard_path, samples, meta)
    return SelfPlayResult(iteration=iteration, weights_version=weights_version,
                          shard_path=str(path), stats=stats, fair_komi=komi_sampler.fair_komi)


def learner_iteration(trainer: Trainer, window: ReplayWindow, config: TrainConfig,
                      rng: np.random.Generator, board=None) -> LearnerResult:
    """Refresh the replay window and take `steps_per_iteration` optimiser steps on it.

    With `config.augment_symmetries`, every minibatch sample is shown under a random symmetry
    of `board` (the `catena_zero.rules.Board` of the run), drawn anew each time it is drawn.
    """
    if config.augment_symmetries and board is None:
        raise ValueError("train.augment_symmetries needs the board: pass learner_iteration(..., "
                         "board=engine.rules.board)")
    window.refresh()
    if window.num_samples < max(config.min_window_samples, 1):
        return LearnerResult(trainer.step, None, window.num_samples)
    batches = window.batches(config.steps_per_iteration, config.batch_size, rng)
    if config.augment_symmetries:
        batches = (random_symmetries(batch, board, rng) for batch in batches)
    metrics = trainer.train_steps(batches)
    return LearnerResult(trainer.step, metrics.as_dict(), window.num_samples)


def _discard_shards_from(directory: Path, iteration: int) -> None:
    """Remove shards of iterations >= `iteration` (work after the resumed checkpoint)."""
    for path in list_shards(directory):
        if path.name >= shard_filename(iteration):
            path.unlink(missing_ok=True)


def resume_or_start(config: TrainLoopConfig, checkpoint_dir: Path, shard_dir: Path,
                    device, generators: dict[str, np.random.Generator]):
    """(trainer, LoopState): from the newest checkpoint when resuming, else fresh."""
    path = latest_checkpoint(checkpoint_dir) if config.loop.resume else None
    if path is None:
        torch.manual_seed(config.loop.seed)
        trainer = Trainer(build_fresh_network(config), config.train, device)
        _discard_shards_from(shard_dir, 0)
        return trainer, LoopState()
    checkpoint = load_checkpoint(path)
    trainer = Trainer(build_network(checkpoint, load_weights=False), config.train, device)
    restore_trainer(checkpoint, trainer)
    restore_rng_states(checkpoint.rng_states, generators)
    counters = checkpoint.counters
    _discard_shards_from(shard_dir, counters.iteration)
    fair_komi = checkpoint.extra.get("fair_komi")
    return trainer, LoopState(counters=counters,
                              fair_komi=None if fair_komi is None else float(fair_komi))


class LoopLogger:
    """TensorBoard scalars and the tqdm bar; both optional."""

    def __init__(self, config: TrainLoopConfig, log_dir: Path, start_iteration: int):
        self.writer = None
        if config.loop.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(log_dir), purge_step=start_iteration + 1)
        self.bar = None
        if config.loop.progress:
            from tqdm import tqdm

            total = config.loop.iterations or None
            self.bar = tqdm(total=total, initial=start_iteration, unit="it", dynamic_ncols=True)

    def log(self, iteration: int, scalars: dict[str, float], postfix: dict[str, str]) -> None:
        if self.writer is not None:
            for name, value in scalars.items():
                if value is not None and math.isfinite(value):
                    self.writer.add_scalar(name, value, iteration)
            self.writer.flush()
        if self.bar is not None:
            self.bar.set_postfix(postfix, refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.bar is not None:
            self.bar.close()


def train_loop(config: TrainLoopConfig, on_checkpoint: CheckpointHook | None = None
               ) -> dict[str, Any]:
    """Alternate self-play and training until `loop.iterations` or `loop.max_minutes`.

    Writes shards, checkpoints and TensorBoard logs under `loop.run_dir`; with
    `loop.resume` it continues from the newest checkpoint there with the same counters,
    replay window and RNG states. `on_checkpoint` is called after every checkpoint.
    Returns a summary dict (counters, fair komi, last losses, rates, paths).
    """
    loop = config.loop
    if not loop.run_dir:
        raise ValueError("loop.run_dir must be set (the CLI picks runs/train-<time>)")
    if loop.threads:
        torch.set_num_threads(loop.threads)
    run_dir = Path(loop.run_dir)
    shard_dir, checkpoint_dir = run_dir / "shards", run_dir / "checkpoints"
    shard_dir.mkdir(parents=True, exist_ok=True)
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    generators = {"selfplay": np.random.default_rng([loop.seed, 1]),
                  "train": np.random.default_rng([loop.seed, 2])}
    trainer, state = resume_or_start(config, checkpoint_dir, shard_dir, loop.device, generators)
    engine = Engine(config.rules)
    evaluator = NetworkEvaluator(trainer.published_net, engine, trainer.device,
                                 loop.inference_precision)
    komi_sampler = KomiSampler(engine, config.selfplay, state.fair_komi)
    window = ReplayWindow(shard_dir, window_samples=config.train.window_samples,
                          num_planes=trainer.net.num_planes)
    logger = LoopLogger(config, run_dir / "tensorboard", state.counters.iteration)
    start_time = time.monotonic()
    deadline = start_time + 60.0 * loop.max_minutes if loop.max_minutes else math.inf
    summary: dict[str, Any] = {"run_dir": str(run_dir), "resumed_from_iteration":
                               state.counters.iteration if loop.resume else None}
    last_checkpoint = None
    try:
        while not _finished(loop, state.counters.iteration, deadline):
            counters = state.counters
            iteration = counters.iteration
            if state.fair_komi is None or iteration % config.selfplay.fair_komi_every == 0:
                refresh_fair_komi(state, engine, evaluator, config.selfplay)
            komi_sampler.fair_komi = state.fair_komi
            played = selfplay_iteration(engine, evaluator, config, komi_sampler,
                                        shard_dir / shard_filename(iteration), iteration,
                                        trainer.step, generators["selfplay"])
            learned = learner_iteration(trainer, window, config.train, generators["train"],
                                        engine.rules.board)
            evaluator.refresh()
            stats = played.stats
            state.counters = dataclasses.replace(
                counters, step=trainer.step, iteration=iteration + 1,
                games=counters.games + stats.games, positions=counters.positions + stats.positions)
            scalars = iteration_scalars(played, learned)
            logger.log(iteration + 1, scalars, _postfix(scalars))
            summary["last"] = scalars
            if (iteration + 1) % loop.checkpoint_every == 0 or _finished(
                    loop, iteration + 1, deadline):
                last_checkpoint = save_loop_checkpoint(config, trainer, state, checkpoint_dir,
                                                       generators)
                if on_checkpoint is not None:
                    on_checkpoint(CheckpointEvent(last_checkpoint, state.counters,
                                                  state.fair_komi, run_dir))
    finally:
        logger.close()
    summary.update({
        "counters": state.counters.to_dict(),
        "fair_komi": state.fair_komi,
        "checkpoint": str(last_checkpoint or latest_checkpoint(checkpoint_dir) or ""),
        "minutes": (time.monotonic() - start_time) / 60.0,
    })
    return summary


def _finished(loop, iteration: int, deadline: float) -> bool:
    if loop.iterations and iteration >= loop.iterations:
        return True
    return time.monotonic() >= deadline


def save_loop_checkpoint(config: TrainLoopConfig, trainer: Trainer, state: LoopState,
                         checkpoint_dir: Path, generators) -> Path:
    return save_checkpoint(checkpoint_dir, trainer, state.counters,
                           config=config.resolved_config, rules=rules_dict(config),
                           generators=generators, extra={"fair_komi": state.fair_komi},
                           keep=config.loop.keep_checkpoints)


def iteration_scalars(played: SelfPlayResult, learned: LearnerResult) -> dict[str, float]:
    stats = played.stats
    seconds = max(stats.seconds, 1e-9)
    scalars = {
        "selfplay/positions_per_s": stats.moves / seconds,
        "selfplay/recorded_positions_per_s": stats.positions / seconds,
        "selfplay/games_per_s": stats.games / seconds,
        "selfplay/game_length": stats.mean_game_length,
        "selfplay/black_win_rate": stats.black_win_rate,
        "selfplay/draw_rate": stats.draws / max(stats.games, 1),
        "selfplay/fair_komi": played.fair_komi,
        "selfplay/mean_komi": float(np.mean(stats.komis)) if stats.komis else 0.0,
        "train/window_samples": float(learned.window_samples),
    }
    for name, value in (learned.metrics or {}).items():
        scalars[name if name.startswith("loss/") else f"train/{name}"] = value
    return scalars


def _postfix(scalars: dict[str, float]) -> dict[str, str]:
    postfix = {
        "pos/s": f"{scalars['selfplay/positions_per_s']:.0f}",
        "games/s": f"{scalars['selfplay/games_per_s']:.1f}",
        "len": f"{scalars['selfplay/game_length']:.1f}",
        "B%": f"{100 * scalars['selfplay/black_win_rate']:.0f}",
        "komi": f"{scalars['selfplay/fair_komi']:.1f}",
    }
    if "loss/total" in scalars:
        postfix["loss"] = f"{scalars['loss/total']:.3f}"
    return postfix
