"""catena_zero.pipeline: a training run, self-play and learning wired together.

The pieces every runtime shares are here: the typed messages (`messages`), the steps of an
iteration (`steps`), where a run starts (`resume`: the newest good checkpoint, the replay
window and metrics from there), the run's config (`config`), and the self-play worker
(`worker`), the learner (`learner`) and the shard handover by files between them
(`handover`). The runtimes are siblings: `inline` (one process, no Ray), `processes` (the
worker and learner on a process pool) and `ray` (the same two as Ray actors, with an
evaluator actor; the only package that imports Ray). `run.run_training` picks one by name.
"""

from catena_zero.pipeline.config import RUNTIMES, LoopConfig, RuntimeConfig, TrainLoopConfig
from catena_zero.pipeline.run import run_training

__all__ = ["RUNTIMES", "LoopConfig", "RuntimeConfig", "TrainLoopConfig", "run_training"]
