"""catena-zero train: alternate self-play and training, writing shards, checkpoints and logs.

    catena-zero train run_dir=runs/general                       # one net, every side/variant
    catena-zero train preset=side4 run_dir=runs/side4            # one track
    catena-zero train preset=side4 run_dir=runs/side4 resume=true  # continue it exactly
    catena-zero train preset=tiny iterations=3 device=cpu          # seconds

Outputs, all under run_dir: config.yaml (the composed config), shards/ (self-play .npz
shards), checkpoints/ (model, optimizer, counters, RNG), tensorboard/ (losses, positions/s,
games/s, game length, Black win rate, fair-komi estimate, probe and gate results),
metrics.jsonl (the same as JSON lines), report.png (strength and losses), gates/ and
champions.json (gating), summary.json (the final summary). A start-up line on stderr says
what will run and for how long; the bar's postfix gives the ETA by the bound that binds
first (iterations or max_minutes).

runtime=inline runs everything in this process; runtime=processes plays in worker processes
of this machine (no Ray; `runtime.selfplay_device=cuda` evaluates there on the GPU) while this
process trains; runtime=ray (the default) runs self-play actors, a learner and an evaluator
on Ray (`catena_zero.pipeline.run.run_training`).
"""

from __future__ import annotations

import dataclasses
import json

from omegaconf import DictConfig

from catena_zero.arena.config import TrainingGateConfig
from catena_zero.cli.common import (
    ConfigError,
    compose,
    file_errors,
    prepare_run_dir,
    rules_from_config,
    to_container,
    to_dataclass,
)
from catena_zero.data.atomic import atomic_write_text
from catena_zero.mcts.config import SearchConfig
from catena_zero.network.config import NetworkConfig
from catena_zero.network.device import resolve_device
from catena_zero.pipeline.config import LoopConfig, RuntimeConfig, TrainLoopConfig
from catena_zero.pipeline.resume import check_start_from
from catena_zero.pipeline.run import (
    check_gating_registry,
    run_training,
    with_opponents,
    with_start_positions,
)
from catena_zero.pipeline.tracks import MixConfig
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.train.config import TrainConfig

GROUPS = ("board", "rules", "network", "mcts", "selfplay", "train", "runtime", "preset",
          "gating", "mix")


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
        mix=to_dataclass(MixConfig, config.mix, "mix"),
    )
    try:  # settings of two groups that do not fit together
        return TrainLoopConfig(**groups, resolved_config=to_container(config))
    except ValueError as error:
        raise ConfigError(str(error)) from None


def main(overrides: list[str]) -> int:
    config = compose("train", overrides)
    loop_config = build_config(config)  # validate everything before touching the disk
    runtime = to_dataclass(RuntimeConfig, config.runtime, "runtime")
    gating = to_dataclass(TrainingGateConfig, config.gating, "gating")
    if runtime.name == "processes":  # a device this machine lacks, before any process starts
        try:
            resolve_device(runtime.selfplay_device)
        except ValueError as error:
            raise ConfigError(f"runtime.selfplay_device: {error}") from None
    # A damaged champion registry is refused now, before the run directory is touched, and
    # so is a start_from checkpoint that cannot be read or does not fit the network.
    check_gating_registry(gating, loop_config.loop.run_dir)
    try:
        check_start_from(loop_config)
    except ValueError as error:
        if isinstance(error, file_errors()):
            raise  # a missing or damaged checkpoint is a file error, not a config error
        raise ConfigError(str(error)) from None
    loop_config = with_start_positions(loop_config)  # a bad games file: before the run dir
    try:
        loop_config = with_opponents(loop_config)  # and a league opponent that cannot play
    except ValueError as error:
        if isinstance(error, file_errors()):
            raise  # a missing or damaged checkpoint is a file error, not a config error
        raise ConfigError(str(error)) from None
    run_dir = prepare_run_dir(loop_config.loop.run_dir, config, name="train",
                              resume=loop_config.loop.resume)
    loop_config = dataclasses.replace(
        loop_config, loop=dataclasses.replace(loop_config.loop, run_dir=str(run_dir)))
    summary = run_training(loop_config, runtime, gating=gating)
    text = json.dumps(summary, indent=2, sort_keys=True, default=str)
    atomic_write_text(run_dir / "summary.json", text + "\n")
    print(text)
    return 0
