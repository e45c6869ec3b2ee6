"""The inline runtime (`runtime=inline`): self-play an iteration, train on the replay window,
checkpoint; repeat, in this one process. Resumes exactly from its newest checkpoint.

Run directory layout::

    <run_dir>/shards/shard-<iteration>.npz        one shard of complete games per iteration
    <run_dir>/checkpoints/checkpoint-*.pt         model, optimiser, counters, RNG, config
    <run_dir>/games/iter<N>-game<k>.sgf           a few whole self-play games per iteration
    <run_dir>/tensorboard/                        losses, positions/s, games/s, game length,
                                                  Black win rate, fair-komi estimate, probe
                                                  and gate results
    <run_dir>/metrics.jsonl                       the same numbers as JSON lines (versioned)
    <run_dir>/report.png                          strength and loss curves (pipeline.report)

The steps are `catena_zero.pipeline.steps` and a run starts where `catena_zero.pipeline.resume`
puts it, as on the process and Ray runtimes.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from catena_zero.data import shard_filename
from catena_zero.pipeline.config import TrainLoopConfig
from catena_zero.pipeline.messages import CheckpointEvent, CheckpointHook
from catena_zero.pipeline.probe import probe_due, run_probe
from catena_zero.pipeline.progress import ProgressReporter, describe_run, side_time_shares
from catena_zero.pipeline.resume import resume_run
from catena_zero.pipeline.steps import (
    TrackPlayers,
    fair_komi_due,
    iteration_scalars,
    learner_iteration,
    refresh_fair_komi,
    save_loop_checkpoint,
    selfplay_iteration,
    set_torch_threads,
)
from catena_zero.pipeline.tracks import TrackMix
from catena_zero.train.checkpoint import latest_checkpoint


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
    set_torch_threads(loop.threads)
    resumed = resume_run(config)
    run_dir, shard_dir, checkpoint_dir = resumed.run_dir, resumed.shard_dir, resumed.checkpoint_dir
    trainer, state, generators = resumed.trainer, resumed.state, resumed.generators
    recover = getattr(on_checkpoint, "recover", None)
    if recover is not None:  # a hook's work that a killed run left (a pending gate) comes first
        recover(run_dir)
    mix = TrackMix(config.mix, config.rules)
    players = TrackPlayers(config, trainer.published_net, trainer.device)
    window = resumed.replay_window(mix)
    logger = resumed.run_log()
    reporter = ProgressReporter(loop, state.counters.iteration, unit="it",
                                header=describe_run(config, runtime="inline",
                                                    clock=state.clock,
                                                    network=trainer.net.config))
    start_time = time.monotonic()
    deadline = start_time + 60.0 * loop.max_minutes if loop.max_minutes else math.inf
    summary: dict[str, Any] = {"run_dir": str(run_dir), "resumed_from_iteration":
                               state.counters.iteration if loop.resume else None}
    last_checkpoint = None
    try:
        while not _finished(loop, state.counters.iteration, deadline):
            counters = state.counters
            iteration = counters.iteration
            iteration_started = time.monotonic()
            track = mix.next_track(state.clock)
            engine, evaluator, komi_sampler = players.of(track)
            if fair_komi_due(state, track, config.selfplay.fair_komi_every):
                refresh_fair_komi(state, engine, evaluator, config.selfplay,
                                  first=track == mix.tracks[0])
            komi_sampler.fair_komi = state.fair_komis[track.key]
            played = selfplay_iteration(engine, evaluator, config, komi_sampler,
                                        shard_dir / shard_filename(iteration), iteration,
                                        trainer.step, generators["selfplay"],
                                        games_dir=run_dir / "games")
            state.clock.add(track.key, played.stats.seconds)
            if config.mix.is_mixed:
                window.set_track_shares(mix.shares_of(state.clock))
            learned = learner_iteration(trainer, window, config.train, generators["train"],
                                        None if config.mix.is_mixed else engine.rules.board,
                                        selfplay_seconds=state.clock.total_seconds,
                                        new_positions=played.stats.positions)
            players.refresh()
            stats = played.stats
            state.counters = dataclasses.replace(
                counters, step=trainer.step, iteration=iteration + 1,
                games=counters.games + stats.games, positions=counters.positions + stats.positions)
            scalars = iteration_scalars(played, learned, track if config.mix.is_mixed else None)
            scalars["time/iteration_seconds"] = time.monotonic() - iteration_started
            last = _finished(loop, iteration + 1, deadline)
            if probe_due(loop, iteration + 1, last):
                probed = run_probe(players, mix.tracks, state.fair_komis, config.search,
                                   loop.probe, seed=loop.seed + iteration)
                logger.log_probe(iteration + 1, trainer.step, probed)
                summary["probe"] = probed
            logger.log(iteration + 1, trainer.step, scalars)
            postfix = _postfix(scalars)
            if config.mix.is_mixed:  # the realised shares of self-play time, by side
                postfix["time"] = side_time_shares(state.clock)
            reporter.update(iteration + 1, postfix)
            summary["last"] = scalars
            if (iteration + 1) % loop.checkpoint_every == 0 or last or _finished(
                    loop, iteration + 1, deadline):
                last_checkpoint = save_loop_checkpoint(config, trainer, state, checkpoint_dir,
                                                       generators)
                if on_checkpoint is not None:
                    on_checkpoint(CheckpointEvent(
                        last_checkpoint, state.counters, state.fair_komi, run_dir,
                        tracks=tuple(mix.tracks) if config.mix.is_mixed else (),
                        fair_komis=dict(state.fair_komis)))
    finally:
        reporter.close()
        logger.close()
    summary.update({
        "counters": state.counters.to_dict(),
        "fair_komi": state.fair_komi,
        "fair_komis": dict(state.fair_komis),
        "track_iterations": dict(state.track_iterations),
        "track_seconds": dict(state.track_seconds),
        "checkpoint": str(last_checkpoint or latest_checkpoint(checkpoint_dir) or ""),
        "minutes": (time.monotonic() - start_time) / 60.0,
    })
    return summary


def _finished(loop, iteration: int, deadline: float) -> bool:
    if loop.iterations and iteration >= loop.iterations:
        return True
    return time.monotonic() >= deadline


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
