"""`runtime=ray`: self-play actors, one learner actor and the driver loop between them.

    driver ── SelfPlayTask + weights ref ──▶ SelfPlayWorker actors (N, one CPU each)
       ▲                                         │ shard written atomically into pending/
       └──── SelfPlayResult (ray.wait) ◀──────────┘
    driver ── SelfPlayResult ──▶ Learner actor (adopts the shard, trains, checkpoints)
    driver ◀── LearnerStatus ── (new weights version → ray.put once → next tasks)

The driver blocks on `ray.wait` for whichever self-play task finishes first; nothing polls.
Weights carry a version (the trainer step); each version is put in the object store once
and a worker loads it only when its version changes. A worker that dies is restarted by Ray
(`max_restarts`) and its task is resubmitted; its shard was either written whole or not at
all. The learner resumes from its newest checkpoint when restarted (by Ray or by the user
with `resume=true`); shards adopted after that checkpoint are consumed again.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

from catena_zero.data import list_shards
from catena_zero.pipeline.config import TrainLoopConfig
from catena_zero.pipeline.handover import cleanup_partial_writes, orphan_result, pending_dir
from catena_zero.pipeline.learner import LearnerStatus
from catena_zero.pipeline.messages import CheckpointEvent, CheckpointHook
from catena_zero.pipeline.probe import probe_due
from catena_zero.pipeline.progress import (
    ProgressReporter,
    advance_bar,
    describe_run,
    side_time_shares,
)
from catena_zero.pipeline.ray.actors import (
    EvaluatorActor,
    InferenceServer,
    LearnerActor,
    SelfPlayWorkerActor,
)
from catena_zero.pipeline.ray.cluster import connect
from catena_zero.pipeline.ray.config import RayConfig
from catena_zero.pipeline.resume import find_resume_checkpoint
from catena_zero.pipeline.steps import warn
from catena_zero.pipeline.tracks import TrackClock, TrackMix
from catena_zero.pipeline.worker import SelfPlayTask, next_task, task_track_key

_WORKER_FAILURES = (RayActorError, ActorDiedError, ActorUnavailableError)


class _Driver:
    """Keeps every worker busy and feeds finished shards to the learner in arrival order."""

    def __init__(self, config: TrainLoopConfig, ray_config: RayConfig,
                 on_checkpoint: CheckpointHook | None):
        self.config = config
        self.ray_config = ray_config
        self.hook = on_checkpoint
        self.evaluator = None
        if on_checkpoint is not None:
            self.evaluator = ray.remote(EvaluatorActor).options(
                num_cpus=0, max_restarts=ray_config.max_actor_restarts).remote(on_checkpoint)
        self.evaluations: list[ray.ObjectRef] = []
        self.evaluation_failures: list[str] = []  # hooks' `prepare` failing in this process
        self.run_dir = Path(config.loop.run_dir)
        if self.evaluator is not None and hasattr(on_checkpoint, "recover"):
            self.evaluations.append(self.evaluator.recover.remote(str(self.run_dir)))
        # Checked here, so that damaged checkpoints are named on this terminal and a run with
        # none intact is refused in one line before any actor starts.
        find_resume_checkpoint(config, self.run_dir / "checkpoints")
        restarts = ray_config.max_actor_restarts
        learner_class = ray.remote(LearnerActor).options(
            num_cpus=1, num_gpus=ray_config.learner_gpus, max_restarts=restarts,
            max_task_retries=0)
        self.learner = learner_class.remote(config)
        self.state = ray.get(self.learner.loop_state.remote())
        for line in ray.get(self.learner.run_log_warnings.remote()):  # a damaged metrics file
            warn(line)
        self.mix = TrackMix(config.mix, config.rules)
        self.weights_version = -1
        self.weights_ref = None
        self.server = None
        self._refresh_weights()
        cluster_cpus = float(ray.cluster_resources().get("CPU", 0))
        self.num_workers, self.cpus_per_actor = ray_config.placement(cluster_cpus)
        if ray_config.uses_inference_actor:
            device = "cuda" if ray_config.inference_gpus > 0 else "cpu"
            self.server = ray.remote(InferenceServer).options(
                num_cpus=0, num_gpus=ray_config.inference_gpus,
                max_restarts=restarts).remote(config, device)
            ray.get(self.server.set_weights.remote(self.weights_ref))
        worker_class = ray.remote(SelfPlayWorkerActor).options(
            num_cpus=self.cpus_per_actor, max_restarts=restarts, max_task_retries=0)
        self.workers = [worker_class.remote(config, index, self.server)
                        for index in range(self.num_workers)]
        ray.get([worker.ping.remote() for worker in self.workers])  # started and ready
        self.next_task_id = int(time.time() * 1000) % 10**9  # unique across restarts of a run
        self.failures: dict[int, int] = {}
        self.in_flight: dict[ray.ObjectRef, tuple[int, SelfPlayTask]] = {}
        self.worker_failures = 0
        self.learner_restarts = 0

    def _refresh_weights(self) -> None:
        message = ray.get(self.learner.weights.remote())
        if message.version != self.weights_version:
            self.weights_ref = ray.put(message)
            self.weights_version = message.version
            if self.server is not None:
                self.server.set_weights.remote(self.weights_ref)

    def _submit(self, worker_index: int, task: SelfPlayTask | None = None) -> None:
        if task is None:
            task = next_task(self.config, self.state, self.mix, self._planning_clock(),
                             self.next_task_id, self.weights_version, pending_dir(self.run_dir))
            self.next_task_id += 1
        reference = self.workers[worker_index].play.remote(task, self.weights_ref)
        self.in_flight[reference] = (worker_index, task)

    def _time_shares(self) -> str:
        """The realised shares of self-play time by side (a mixed run's progress bar)."""
        return side_time_shares(self.state.clock) if self.config.mix.is_mixed else ""

    def _planning_clock(self) -> TrackClock:
        """The learner's clock with each task in flight counted ahead, so the mix plans past
        the tasks handed out."""
        return self.state.clock.ahead(task_track_key(task, self.mix)
                                      for _, task in self.in_flight.values())

    def _resubmit(self, worker_index: int, task: SelfPlayTask, error: Exception) -> None:
        self.worker_failures += 1
        failures = self.failures.get(task.task_id, 0) + 1
        self.failures[task.task_id] = failures
        if failures > self.ray_config.max_task_failures:
            raise RuntimeError(f"self-play task {task.task_id} failed {failures} times; "
                               f"last error: {error}") from error
        cleanup_partial_writes(pending_dir(self.run_dir))
        _await_actor(lambda: self.workers[worker_index].ping.remote())
        retry = dataclasses.replace(task, attempt=task.attempt + 1,
                                    weights_version=self.weights_version)
        self._submit(worker_index, retry)

    def _consume(self, result) -> LearnerStatus | None:
        """Hand one shard to the learner; None when it was already taken (see `_recover`)."""
        if not Path(result.shard_path).exists():
            return None  # consumed by `_recover` after a learner restart
        try:
            status: LearnerStatus = ray.get(self.learner.consume.remote(result))
            self._after_consume(status)
        except _WORKER_FAILURES:
            return self._recover()
        return status

    def _after_consume(self, status: LearnerStatus) -> None:
        self.state.counters = status.counters
        self.state.fair_komi = status.fair_komi
        self.state.fair_komis = dict(status.fair_komis)
        self.state.track_iterations = dict(status.track_iterations)
        self.state.track_seconds = dict(status.track_seconds)
        if status.weights_version != self.weights_version:
            self._refresh_weights()
        if status.checkpoint and self.evaluator is not None:
            event = ray.get(self.learner.checkpoint_event.remote())
            if event is not None:
                self._evaluate(event)

    def _evaluate(self, event: CheckpointEvent) -> None:
        """Hand a checkpoint to the evaluator. A hook with `prepare` (the training gate) does
        its fast part here at once, while the checkpoint surely exists (the learner rotates
        old ones away), and the evaluator plays the rest."""
        prepare = getattr(self.hook, "prepare", None)
        if prepare is None:
            self.evaluations.append(self.evaluator.evaluate.remote(event))
            return
        try:
            pending = prepare(event)
        except Exception as error:  # noqa: BLE001 - reported in the run's summary instead
            self.evaluation_failures.append(
                f"evaluation of {event.path} failed: {type(error).__name__}: {error}")
            return
        if pending is not None:
            self.evaluations.append(self.evaluator.gate.remote(pending))

    def _await_learner(self):
        """The restarted learner's loop state, once Ray has brought it back."""
        return _await_actor(lambda: self.learner.loop_state.remote())

    def _recover(self, attempts: int = 3) -> LearnerStatus | None:
        """The learner died and Ray restarted it from its newest checkpoint: take its counters
        and train again on every shard it had not checkpointed (they wait in pending/)."""
        self.learner_restarts += 1
        for attempt in range(attempts):
            try:
                self.state = self._await_learner()
                for line in ray.get(self.learner.warnings.remote()):
                    warn(line)
                self.weights_version = -1
                self._refresh_weights()
                status = None
                for path in ray.get(self.learner.pending_shards.remote()):
                    status = ray.get(self.learner.consume.remote(orphan_result(path)))
                    self._after_consume(status)
                return status
            except _WORKER_FAILURES:
                if attempt + 1 == attempts:
                    raise
                self.learner_restarts += 1
        return None

    def run(self) -> dict[str, Any]:
        loop = self.config.loop
        start = time.monotonic()
        deadline = start + 60.0 * loop.max_minutes if loop.max_minutes else math.inf
        target = loop.iterations or math.inf
        bar = ProgressReporter(loop, self.state.counters.iteration, unit="shard",
                               header=describe_run(self.config, runtime="ray", detail=(
                                   f"{self.num_workers} self-play actors of "
                                   f"{self.cpus_per_actor:g} CPU"
                                   + (", one inference actor" if self.server else "")),
                                   clock=self.state.clock,
                                   network=ray.get(self.learner.network_config.remote())))
        last: dict[str, float] = {}
        positions = 0
        try:
            # Shards written before a crash (or requeued by the learner) are trained on first.
            for path in ray.get(self.learner.pending_shards.remote()):
                if self.state.counters.iteration >= target:
                    break
                status = self._consume(orphan_result(path))
                if status is not None:
                    last = status.scalars
                    advance_bar(bar, status.counters.iteration, last, self._time_shares())
            for index in range(self.num_workers):
                self._submit(index)
            while self.state.counters.iteration < target and time.monotonic() < deadline:
                ready, _ = ray.wait(list(self.in_flight), num_returns=1)
                worker_index, task = self.in_flight.pop(ready[0])
                try:
                    result = ray.get(ready[0])
                except _WORKER_FAILURES as error:
                    self._resubmit(worker_index, task, error)
                    continue
                self._submit(worker_index)
                status = self._consume(result)
                positions += result.stats.positions
                if status is not None:
                    last = status.scalars
                    advance_bar(bar, status.counters.iteration, last, self._time_shares())
            if probe_due(loop, self.state.counters.iteration, last=True):
                ray.get(self.learner.probe.remote())
            if self.state.counters.iteration % loop.checkpoint_every != 0:
                ray.get(self.learner.checkpoint.remote())
                final = ray.get(self.learner.checkpoint_event.remote())
                if self.evaluator is not None and final is not None:
                    self._evaluate(final)
        finally:
            bar.close()
        minutes = (time.monotonic() - start) / 60.0
        checkpoint = ray.get(self.learner.checkpoint_event.remote())
        evaluations = [_describe(item) for value in ray.get(self.evaluations)
                       for item in (value if isinstance(value, list) else [value])]
        evaluations += self.evaluation_failures
        ray.get(self.learner.close.remote())
        return {
            "run_dir": str(self.run_dir),
            "runtime": "ray",
            "selfplay_actors": self.num_workers,
            "cpus_per_actor": self.cpus_per_actor,
            "counters": self.state.counters.to_dict(),
            "fair_komi": self.state.fair_komi,
            "fair_komis": dict(self.state.fair_komis),
            "track_iterations": dict(self.state.track_iterations),
            "track_seconds": dict(self.state.track_seconds),
            "checkpoint": "" if checkpoint is None else str(checkpoint.path),
            "minutes": minutes,
            "positions_per_s": positions / max(minutes * 60.0, 1e-9),
            "shards": len(list_shards(self.run_dir / "shards")),
            "worker_failures": self.worker_failures,
            "learner_restarts": self.learner_restarts,
            "last": last,
            "evaluations": evaluations,
        }

    def shutdown(self) -> None:
        actors = [*self.workers, self.learner]
        actors += [actor for actor in (self.evaluator, self.server) if actor is not None]
        for actor in actors:
            ray.kill(actor, no_restart=True)


def _await_actor(call, timeout_s: float = 300.0):
    """ray.get(call()) once a restarting actor is back. Calls made while Ray restarts an
    actor fail at once instead of queueing, so they are repeated until one succeeds."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return ray.get(call())
        except (ActorUnavailableError, RayActorError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _describe(value: Any) -> Any:
    summary = getattr(value, "summary", None)
    return summary() if callable(summary) else value


def train_distributed(config: TrainLoopConfig, ray_config: RayConfig,
                      on_checkpoint: CheckpointHook | None = None) -> dict[str, Any]:
    """Run the training loop on Ray (local by default, a cluster with `ray_config.address`).

    Same outputs as `train_loop` under `loop.run_dir` (shards/, checkpoints/, tensorboard/),
    plus pending/ for shards written but not yet trained on. Returns the summary dict.
    """
    if not config.loop.run_dir:
        raise ValueError("loop.run_dir must be set (the CLI picks runs/train-<time>)")
    connect(ray_config)
    driver = _Driver(config, ray_config, on_checkpoint)
    try:
        return driver.run()
    finally:
        driver.shutdown()


def start_driver(config: TrainLoopConfig, ray_config: RayConfig,
                 on_checkpoint: CheckpointHook | None = None) -> _Driver:
    """The driver without running it (tests use it to reach the actors, e.g. to kill one)."""
    connect(ray_config)
    return _Driver(config, ray_config, on_checkpoint)
