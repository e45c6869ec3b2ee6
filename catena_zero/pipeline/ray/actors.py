"""The Ray runtime's actors: the plain learner and self-play worker classes as actors, a shared
inference server and the evaluator that gates checkpoints off the driver's path.

`runtime.py` starts them with `ray.remote(...).options(...)`; they hold no driver logic.
"""

from __future__ import annotations

import dataclasses

import ray

from catena_zero.network import InferenceModel
from catena_zero.pipeline.config import TrainLoopConfig
from catena_zero.pipeline.learner import LearnerCore
from catena_zero.pipeline.messages import CheckpointEvent, CheckpointHook, WeightsMessage
from catena_zero.pipeline.steps import build_fresh_network
from catena_zero.pipeline.worker import SelfPlayWorkerCore


class LearnerActor(LearnerCore):
    """The learner as an actor: restarted by Ray after a crash, it resumes from its checkpoint
    whatever `loop.resume` said when the run started."""

    def __init__(self, config: TrainLoopConfig):
        if ray.get_runtime_context().was_current_actor_reconstructed:
            config = dataclasses.replace(
                config, loop=dataclasses.replace(config.loop, resume=True))
        super().__init__(config)


class InferenceServer:
    """One network for every self-play actor's leaves (on a GPU when `inference_gpus` > 0):
    actors send observation planes, it answers with the heads; weights arrive by version."""

    def __init__(self, config: TrainLoopConfig, device: str):
        self.net = build_fresh_network(config)
        self.model = InferenceModel(self.net, device,
                                    precision=config.loop.inference_precision)
        self.version = -1

    def set_weights(self, weights: WeightsMessage) -> int:
        if weights.version != self.version:
            self.net.load_state_dict(weights.state_dict)
            self.model.refresh()
            self.version = weights.version
        return self.version

    def infer(self, planes, globals_):
        return self.model(planes, globals_)


class RemoteModel:
    """Stands in for the InferenceModel inside a worker's NetworkEvaluator."""

    net = None

    def __init__(self, server):
        self.server = server

    def refresh(self) -> None:
        """Weights live in the server."""

    def __call__(self, planes, globals_):
        return ray.get(self.server.infer.remote(planes, globals_))


class SelfPlayWorkerActor(SelfPlayWorkerCore):
    """A self-play worker that evaluates locally, or through the shared inference actor."""

    def __init__(self, config: TrainLoopConfig, worker_index: int, server=None):
        super().__init__(config, worker_index,
                         remote_model=None if server is None else RemoteModel(server))


class EvaluatorActor:
    """Runs the checkpoint hook (arena gating) in its own actor, off the driver's path, so
    self-play and training go on while a new checkpoint plays the champion."""

    def __init__(self, hook: CheckpointHook):
        self.hook = hook

    def evaluate(self, event: CheckpointEvent):
        return self._guarded(self.hook, event, what=str(event.path))

    def gate(self, pending):
        """The slow part of a hook with `prepare` (the training gate): play what the driver
        prepared."""
        return self._guarded(self.hook.gate, pending, what=str(pending.candidate))

    def recover(self, run_dir: str) -> list:
        """The hook's work that a killed run left (pending gates), before any new one."""
        return self._guarded(self.hook.recover, run_dir, what=f"recovery of {run_dir}")

    @staticmethod
    def _guarded(call, argument, what: str):
        # A failed evaluation (say, a checkpoint rotated away first) must not stop training.
        try:
            return call(argument)
        except Exception as error:  # noqa: BLE001 - reported in the run's summary instead
            return f"evaluation of {what} failed: {type(error).__name__}: {error}"
