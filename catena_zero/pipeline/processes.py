"""`runtime=processes`: self-play in worker processes of this machine, training in this one.

    this process ── SelfPlayTask + weights ──▶ worker processes (N, one torch thread each)
       ▲                                          │ shard written atomically into pending/
       └──── SelfPlayResult (futures.wait) ◀──────┘
    this process: LearnerCore adopts the shard, trains, checkpoints, gates

The same plain classes as the Ray runtime (`worker.SelfPlayWorkerCore`,
`learner.LearnerCore`) and the same shard handover by files (`handover`), on Python's own
process pool instead of Ray: for one machine with many cores and no Ray, such as a lent GPU
box where every process evaluates its leaves on the GPU (`runtime.selfplay_device=cuda`) and
the learner trains there (`device=cuda`). Processes are started with "spawn", so CUDA starts
cleanly in each.

What Ray adds and this runtime does not: restarting a dead worker. A task that fails stops
the run; `resume=true` continues from the newest checkpoint, and the shards the workers had
written meanwhile wait in pending/ and are trained on first, as in the Ray runtime.
"""

from __future__ import annotations

import concurrent.futures as futures
import dataclasses
import math
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

from catena_zero.data import list_shards
from catena_zero.network.device import resolve_device
from catena_zero.pipeline.config import RuntimeConfig, TrainLoopConfig
from catena_zero.pipeline.handover import orphan_result, pending_dir
from catena_zero.pipeline.learner import LearnerCore
from catena_zero.pipeline.messages import CheckpointHook, SelfPlayResult, WeightsMessage
from catena_zero.pipeline.probe import probe_due
from catena_zero.pipeline.progress import (
    ProgressReporter,
    advance_bar,
    describe_run,
    side_time_shares,
)
from catena_zero.pipeline.steps import warn
from catena_zero.pipeline.tracks import TrackMix
from catena_zero.pipeline.worker import (
    SelfPlayTask,
    SelfPlayWorkerCore,
    next_task,
    task_track_key,
)

_worker: SelfPlayWorkerCore | None = None  # the one worker of a pool process


def _start_worker(config: TrainLoopConfig, device: str) -> None:
    global _worker
    _worker = SelfPlayWorkerCore(config, os.getpid(), device=device)


def _play(task: SelfPlayTask, weights: WeightsMessage) -> SelfPlayResult:
    return _worker.play(task, weights)


def worker_count(runtime: RuntimeConfig) -> int:
    """The self-play processes, placed on this machine's CPUs as the Ray runtime places its
    actors (`RayConfig.placement`): `num_selfplay_actors`, or one per CPU (the learner waits
    for shards most of the time, so it takes no core of its own)."""
    return runtime.placement(float(os.cpu_count() or 1))[0]


def train_processes(config: TrainLoopConfig, runtime: RuntimeConfig,
                    on_checkpoint: CheckpointHook | None = None) -> dict[str, Any]:
    """Run the training loop with self-play in worker processes until `loop.iterations`
    shards or `loop.max_minutes`. Same outputs as `train_loop` under `loop.run_dir`, plus
    pending/ for shards written but not yet trained on. Returns the summary dict."""
    loop = config.loop
    if not loop.run_dir:
        raise ValueError("loop.run_dir must be set (the CLI picks runs/train-<time>)")
    # Resolved here, so that a device this machine lacks is refused in one line before any
    # process starts, and "auto" means the same device in every worker.
    device = str(resolve_device(runtime.selfplay_device))
    learner = LearnerCore(config)
    for line in learner.warnings():
        warn(line)
    run_dir = Path(loop.run_dir)
    recover = getattr(on_checkpoint, "recover", None)
    if recover is not None:  # a hook's work that a killed run left (a pending gate) comes first
        recover(run_dir)
    workers = worker_count(runtime)
    # One torch thread a worker: the processes already fill the cores.
    worker_config = dataclasses.replace(config, loop=dataclasses.replace(loop, threads=1))
    pool = futures.ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker, initargs=(worker_config, device))
    driver = _Driver(config, learner, pool, on_checkpoint)
    start = time.monotonic()
    bar = ProgressReporter(loop, learner.state.counters.iteration, unit="shard",
                           header=describe_run(config, runtime="processes", detail=(
                               f"{workers} self-play processes on {device}"),
                               clock=learner.state.clock, network=learner.network_config()))
    try:
        last = driver.run(workers, bar, start)
    finally:
        bar.close()
        # Tasks not started are dropped; those running finish and leave their shards in
        # pending/, where the next resume trains on them first.
        pool.shutdown(wait=True, cancel_futures=True)
        learner.close()
    minutes = (time.monotonic() - start) / 60.0
    state = learner.state
    return {
        "run_dir": str(run_dir),
        "runtime": "processes",
        "selfplay_processes": workers,
        "selfplay_device": device,
        "counters": state.counters.to_dict(),
        "fair_komi": state.fair_komi,
        "fair_komis": dict(state.fair_komis),
        "track_iterations": dict(state.track_iterations),
        "track_seconds": dict(state.track_seconds),
        "checkpoint": str(learner.last_checkpoint or ""),
        "minutes": minutes,
        "positions_per_s": driver.positions / max(minutes * 60.0, 1e-9),
        "shards": len(list_shards(run_dir / "shards")),
        "last": last,
    }


class _Driver:
    """Keeps every worker process busy and feeds finished shards to the learner in arrival
    order, gating each checkpoint in this process as the inline loop does."""

    def __init__(self, config: TrainLoopConfig, learner: LearnerCore,
                 pool: futures.ProcessPoolExecutor, on_checkpoint: CheckpointHook | None):
        self.config = config
        self.learner = learner
        self.pool = pool
        self.hook = on_checkpoint
        self.mix = TrackMix(config.mix, config.rules)
        self.in_flight: dict[futures.Future, SelfPlayTask] = {}
        self.next_task_id = int(time.time() * 1000) % 10**9  # unique across restarts of a run
        self.weights = learner.weights()
        self.positions = 0

    def submit(self) -> None:
        state = self.learner.state
        clock = state.clock.ahead(task_track_key(task, self.mix)
                                  for task in self.in_flight.values())
        task = next_task(self.config, state, self.mix, clock, self.next_task_id,
                         self.weights.version, pending_dir(self.learner.run_dir))
        self.next_task_id += 1
        self.in_flight[self.pool.submit(_play, task, self.weights)] = task

    def consume(self, result: SelfPlayResult) -> dict[str, float]:
        status = self.learner.consume(result)
        if status.weights_version != self.weights.version:
            self.weights = self.learner.weights()
        if status.checkpoint:
            self.gate_newest()
        return status.scalars

    def gate_newest(self) -> None:
        """Hand the learner's newest checkpoint to the hook (the gate), in this process."""
        if self.hook is None:
            return
        event = self.learner.checkpoint_event()
        if event is not None:
            self.hook(event)

    def run(self, workers: int, bar: ProgressReporter, start: float) -> dict[str, float]:
        loop = self.config.loop
        deadline = start + 60.0 * loop.max_minutes if loop.max_minutes else math.inf
        target = loop.iterations or math.inf
        last: dict[str, float] = {}
        first = self.learner.state.counters.iteration

        def finished() -> bool:
            # A time bound still trains on one shard, as the inline loop plays one iteration
            # however short its bound: a run ends with a checkpoint of its own.
            iteration = self.learner.state.counters.iteration
            return iteration >= target or (time.monotonic() >= deadline and iteration > first)

        def advance() -> None:
            state = self.learner.state
            shares = side_time_shares(state.clock) if self.config.mix.is_mixed else ""
            advance_bar(bar, state.counters.iteration, last, shares)

        # Shards written before a stop (or requeued by the learner) are trained on first.
        for path in self.learner.pending_shards():
            if finished():
                break
            last = self.consume(orphan_result(path))
            advance()
        for _ in range(workers):
            self.submit()
        while not finished():
            done, _ = futures.wait(self.in_flight, return_when=futures.FIRST_COMPLETED)
            # a failed task stops the run (see the docstring)
            results = [future.result() for future in done]
            for future in done:
                del self.in_flight[future]
                self.submit()  # before training, so that every free worker plays meanwhile
            for result in results:
                if finished():
                    break  # the rest wait in pending/ for the next resume
                last = self.consume(result)
                self.positions += result.stats.positions
                advance()
        if probe_due(loop, self.learner.state.counters.iteration, last=True):
            self.learner.probe()
        if self.learner.state.counters.iteration % loop.checkpoint_every != 0:
            self.learner.checkpoint()
            self.gate_newest()
        return last
