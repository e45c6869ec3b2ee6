"""`catena-zero train runtime=ray`: the training loop on Ray (catena_zero.distributed)."""

from __future__ import annotations

from omegaconf import DictConfig

from catena_zero.cli.common import to_container, to_dataclass
from catena_zero.distributed import RayConfig, train_distributed
from catena_zero.train.loop_config import TrainLoopConfig


def ray_config_from(runtime: DictConfig) -> RayConfig:
    values = {key: value for key, value in to_container(runtime).items() if key != "name"}
    return to_dataclass(RayConfig, values, "runtime")


def run(config: TrainLoopConfig, runtime: DictConfig, on_checkpoint=None) -> dict:
    return train_distributed(config, ray_config_from(runtime), on_checkpoint=on_checkpoint)
