"""catena_zero.train: optimiser, losses, checkpoints. It reads shards, never trees: the loop that
plays and trains is `catena_zero.pipeline`.

Example::

    from catena_zero.train import Counters, TrainConfig, Trainer, save_checkpoint
    trainer = Trainer(net, TrainConfig(), device="auto")
    metrics = trainer.train_steps(window.batches(100, 256, rng))
    save_checkpoint(checkpoint_dir, trainer, Counters(iteration=1), config={}, rules={})
"""

from catena_zero.train.checkpoint import (
    CHECKPOINT_FORMAT_VERSION,
    Checkpoint,
    CheckpointError,
    Counters,
    build_network,
    capture_rng_states,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    restore_rng_states,
    restore_trainer,
    save_checkpoint,
)
from catena_zero.train.config import TrainConfig, learning_rate_at
from catena_zero.train.losses import LossWeights, compute_losses
from catena_zero.train.trainer import Trainer, TrainMetrics

__all__ = [
    "CHECKPOINT_FORMAT_VERSION",
    "Checkpoint",
    "CheckpointError",
    "Counters",
    "LossWeights",
    "TrainConfig",
    "TrainMetrics",
    "Trainer",
    "build_network",
    "capture_rng_states",
    "compute_losses",
    "latest_checkpoint",
    "learning_rate_at",
    "list_checkpoints",
    "load_checkpoint",
    "restore_rng_states",
    "restore_trainer",
    "save_checkpoint",
]
