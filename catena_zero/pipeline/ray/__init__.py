"""catena_zero.pipeline.ray: the Ray runtime (the only package that imports Ray).

`train_distributed(config, ray_config)` runs self-play actors, a learner actor and a driver
loop between them, locally (`ray.init()`) or on a cluster (`RayConfig.address`): `cluster`
starts or joins Ray, `actors` wraps the plain classes `pipeline.worker.SelfPlayWorkerCore`
and `pipeline.learner.LearnerCore` (shared with the process runtime, and calling the same
steps as `runtime=inline`, `catena_zero.pipeline.steps`) as actors, and `runtime` is the
driver.
"""

from catena_zero.pipeline.ray.config import RayConfig

__all__ = ["RayConfig", "train_distributed"]


def train_distributed(*args, **kwargs):
    """See `catena_zero.pipeline.ray.runtime.train_distributed` (imports Ray on first use)."""
    # lazy: ray, an optional dependency, is imported only when this runtime runs
    from catena_zero.pipeline.ray.runtime import train_distributed as run

    return run(*args, **kwargs)
