"""Settings of the Ray runtime (`runtime=ray`): where Ray runs and how the actors are placed."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class RayConfig:
    """How `train_distributed` uses Ray. `address=None` starts Ray on this machine."""

    address: str | None = None  # None: local ray.init(); "auto" or "HOST:PORT": join a cluster
    num_selfplay_actors: int = 0  # self-play actors; 0 = one per CPU of the cluster
    cpus_per_actor: float = 0.0  # CPUs reserved per actor; 0 = the CPUs the learner leaves
    learner_gpus: float = 0.0  # GPUs for the learner actor (0 = CPU learner)
    inference_gpus: float = 0.0  # GPUs of a shared inference actor for every actor's leaves
    inference_actor: bool = False  # use the shared inference actor even without GPUs (tests, CPUs)
    max_actor_restarts: int = -1  # restarts of a dead actor (-1 = unlimited)
    max_task_failures: int = 3  # resubmissions of one self-play task before the run stops
    namespace: str = "catena_zero"  # Ray namespace of the run's actors
    include_dashboard: bool = False  # start Ray's dashboard with a local cluster
    log_to_driver: bool = False  # forward actors' stdout/stderr to this terminal

    def __post_init__(self) -> None:
        if self.num_selfplay_actors < 0:
            raise ValueError(f"num_selfplay_actors must be >= 0, got {self.num_selfplay_actors}")
        if self.cpus_per_actor < 0:
            raise ValueError(f"cpus_per_actor must be >= 0 (0 = automatic), got "
                             f"{self.cpus_per_actor}")
        for name in ("learner_gpus", "inference_gpus"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.max_actor_restarts < -1:
            raise ValueError(f"max_actor_restarts must be >= -1, got {self.max_actor_restarts}")
        if self.max_task_failures < 0:
            raise ValueError(f"max_task_failures must be >= 0, got {self.max_task_failures}")
        if self.address is not None and not isinstance(self.address, str):
            raise ValueError(f"address must be a string or null, got {self.address!r}")

    @property
    def uses_inference_actor(self) -> bool:
        return self.inference_actor or self.inference_gpus > 0

    def placement(self, cluster_cpus: float) -> tuple[int, float]:
        """(self-play actors, CPUs reserved per actor) for a cluster of `cluster_cpus` CPUs.

        Automatic values put one actor on every CPU and share out what the learner's one CPU
        leaves (at most one CPU each): the learner trains only when a shard arrives, so it
        sits idle for much of an iteration, and an actor per core keeps every core busy. On
        the 2-core dev box two actors at half a CPU played 2.1x the games of one inline
        process (docs/results/). An explicit reservation alone starts as
        many actors as fit beside the learner; explicit values always win. A computed
        reservation of 0 (a one-CPU cluster) is valid: Ray then runs the actor unreserved.
        """
        cpus = cluster_cpus if cluster_cpus > 0 else float(os.cpu_count() or 2)
        spare = max(0.0, cpus - 1.0)  # what the learner's CPU leaves
        if self.num_selfplay_actors:
            actors = self.num_selfplay_actors
        elif self.cpus_per_actor:
            actors = max(1, int(spare / self.cpus_per_actor + 1e-9))  # as many as fit
        else:
            actors = max(1, int(cpus))
        return actors, self.cpus_per_actor or min(1.0, spare / actors)
