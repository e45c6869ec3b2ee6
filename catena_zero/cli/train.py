"""catena-zero train: alternate self-play and training, writing shards, checkpoints and logs.

    catena-zero train preset=side4 run_dir=runs/side4            # a fresh run
    catena-zero train preset=side4 run_dir=runs/side4 resume=true  # continue it exactly
    catena-zero train preset=tiny iterations=3 device=cpu          # seconds

Outputs under run_dir: config.yaml (the composed config), shards/ (self-play .npz shards),
checkpoints/ (model, optimizer, counters, RNG), tensorboard/ (losses, positions/s, games/s,
game length, Black win rate, fair-komi estimate), summary.json (the final summary).

runtime=inline runs everything in this process; runtime=ray (the default) runs self-play
actors, a learner and an evaluator on Ray (`catena_zero.pipeline.run.run_training`).
"""

from __future__ import annotations

import dataclasses
import json

from omegaconf import DictConfig

from catena_zero.arena.config import TrainingGateConfig
from catena_zero.cli.common import (
    ConfigError,
    compose,
    prepare_run_dir,
    rules_from_config,
    to_container,
    to_dataclass,
)
from catena_zero.data.atomic import atomic_write_text
from catena_zero.mcts.config import SearchConfig
from catena_zero.network.config import NetworkConfig
from catena_zero.pipeline.config import LoopConfig, TrainLoopConfig
from catena_zero.pipeline.ray.config import RayConfig
from catena_zero.pipeline.run import RUNTIMES, run_training
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.train.config import TrainConfig

GROUPS = ("board", "rules", "network", "mcts", "selfplay", "train", "runtime", "preset",
          "gating")


def build_config(config: DictConfig) -> TrainLoopConfig:
    """The typed TrainLoopConfig of a composed `train` config (ConfigError names bad keys)."""
    top = {key: config[key] for key in config if key not in GROUPS}
    groups = dict(
        rules=rules_from_config(config),
        network=to_dataclass(NetworkConfig, config.network, "network"),
        search=to_dataclass(SearchConfig, config.mcts, "mcts"),
        selfplay=to_dataclass(SelfPlayConfig, config.selfplay, "selfplay"),
        train=to_dataclass(TrainConfig, config.train, "train"),
        loop=to_dataclass(LoopConfig, top),
    )
    try:  # settings of two groups that do not fit together
        return TrainLoopConfig(**groups, resolved_config=to_container(config))
    except ValueError as error:
        raise ConfigError(str(error)) from None


def ray_config_from(runtime: DictConfig) -> RayConfig:
    """The RayConfig of a composed `runtime` group (its keys besides `name`)."""
    values = {key: value for key, value in to_container(runtime).items() if key != "name"}
    return to_dataclass(RayConfig, values, "runtime")


def main(overrides: list[str]) -> int:
    config = compose("train", overrides)
    loop_config = build_config(config)  # validate everything before touching the disk
    runtime = to_container(config.runtime)
    runtime_name = runtime.get("name", "inline") if isinstance(runtime, dict) else None
    if not isinstance(runtime_name, str):
        raise ConfigError(f"runtime.name must be a string, got {runtime_name!r}")
    gating = to_dataclass(TrainingGateConfig, config.gating, "gating")
    if runtime_name not in RUNTIMES:
        raise ConfigError(f"runtime.name must be one of {', '.join(RUNTIMES)}, "
                          f"got {runtime_name!r}")
    ray_config = ray_config_from(config.runtime) if runtime_name == "ray" else None
    run_dir = prepare_run_dir(loop_config.loop.run_dir, config, name="train",
                              resume=loop_config.loop.resume)
    loop_config = dataclasses.replace(
        loop_config, loop=dataclasses.replace(loop_config.loop, run_dir=str(run_dir)))
    summary = run_training(loop_config, runtime_name, ray_config=ray_config, gating=gating)
    text = json.dumps(summary, indent=2, sort_keys=True, default=str)
    atomic_write_text(run_dir / "summary.json", text + "\n")
    print(text)
    return 0
