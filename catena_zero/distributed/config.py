"""Settings of the Ray runtime (`runtime=ray`): where Ray runs and how the actors are placed."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class RayConfig:
    """How `train_distributed` uses Ray. `address=None` starts Ray on this machine."""

    address: str | None = None  # None: local ray.init(); "auto" or "HOST:PORT": join a cluster
    num_selfplay_actors: int = 0  # self-play actors; 0 = (CPUs of the cluster) - 1, at least 1
    cpus_per_actor: float = 1.0  # CPUs reserved per self-play actor
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
        if self.cpus_per_actor <= 0:
            raise ValueError(f"cpus_per_actor must be > 0, got {self.cpus_per_actor}")
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

    def actors_for(self, cluster_cpus: float) -> int:
        """Self-play actors to start given the cluster's CPU count (one CPU left to the learner)."""
        if self.num_selfplay_actors:
            return self.num_selfplay_actors
        cpus = cluster_cpus if cluster_cpus > 0 else (os.cpu_count() or 2)
        return max(1, int(cpus // self.cpus_per_actor) - 1)
