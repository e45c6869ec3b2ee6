"""catena_zero.pipeline: a training run, self-play and learning wired together.

The pieces every runtime shares are here: the typed messages (`messages`), the steps of an
iteration (`steps`), the run's config (`config`). The runtimes are siblings: `inline` (one
process, no Ray) and `ray` (self-play actors, a learner actor and an evaluator on Ray; the
only package that imports Ray). `run.run_training` picks one by name.
"""

from catena_zero.pipeline.config import RUNTIMES, LoopConfig, RuntimeConfig, TrainLoopConfig
from catena_zero.pipeline.run import run_training

__all__ = ["RUNTIMES", "LoopConfig", "RuntimeConfig", "TrainLoopConfig", "run_training"]
