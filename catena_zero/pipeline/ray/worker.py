"""The self-play worker of the Ray runtime (a plain class; `runtime.py` makes it an actor).

A worker holds its own engine, network copy and RNG. Each task names the weights version to
play with; the weights themselves travel through Ray's object store once per version and are
loaded only when the version changes. Games are written as one shard per task, atomically,
into the run's pending/ directory, where the learner adopts them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from catena_zero.pipeline.config import TrainLoopConfig
from catena_zero.pipeline.messages import SelfPlayResult, WeightsMessage
from catena_zero.pipeline.steps import build_fresh_network, selfplay_iteration, set_torch_threads
from catena_zero.rules import Engine
from catena_zero.selfplay.evaluator import NetworkEvaluator
from catena_zero.selfplay.selfplay import KomiSampler


@dataclasses.dataclass(frozen=True)
class SelfPlayTask:
    """Driver -> worker: play one shard's worth of games with a given weights version."""

    task_id: int  # unique per run; names the shard file
    attempt: int  # 0 for the first try; a resubmission after a worker death counts up
    fair_komi: float  # komis are drawn around this estimate
    weights_version: int  # version of the WeightsMessage passed with the task
    shard_path: str  # where the shard is written (in pending/)


class SelfPlayWorkerCore:
    """Plays self-play tasks; `evaluate_remote` (optional) sends leaves to an inference actor."""

    def __init__(self, config: TrainLoopConfig, worker_index: int, evaluate_remote=None):
        # At most one CPU per actor: more threads than that only fight each other.
        set_torch_threads(config.loop.threads, automatic=1)
        self.config = config
        self.worker_index = worker_index
        self.engine = Engine(config.rules)
        self.net = build_fresh_network(config)
        self.weights_version = -1
        if evaluate_remote is None:
            self.evaluate_fn = NetworkEvaluator(self.net, self.engine, "cpu",
                                                config.loop.inference_precision)
        else:
            self.evaluate_fn = evaluate_remote
        self.komi_sampler = KomiSampler(self.engine, config.selfplay)

    def set_weights(self, weights: WeightsMessage) -> int:
        if weights.version != self.weights_version:
            self.net.load_state_dict(weights.state_dict)
            if isinstance(self.evaluate_fn, NetworkEvaluator):
                self.evaluate_fn.refresh()
            self.weights_version = weights.version
        return self.weights_version

    def play(self, task: SelfPlayTask, weights: WeightsMessage | None) -> SelfPlayResult:
        if weights is not None:
            self.set_weights(weights)
        self.komi_sampler.fair_komi = task.fair_komi
        # A resubmitted task gets a fresh stream so it does not replay the failed attempt.
        rng = np.random.default_rng([self.config.loop.seed, 7, task.task_id, task.attempt])
        path = Path(task.shard_path)
        return selfplay_iteration(self.engine, self.evaluate_fn, self.config, self.komi_sampler,
                                  path, task.task_id, self.weights_version, rng)

    def ping(self) -> int:
        return self.worker_index
