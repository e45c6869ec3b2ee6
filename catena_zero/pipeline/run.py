"""One entry point for a training run on any runtime.

    summary = run_training(loop_config, RuntimeConfig(name="inline"))   # this process
    summary = run_training(loop_config, RuntimeConfig(name="processes")) # worker processes
    summary = run_training(loop_config, RuntimeConfig(name="ray"))      # Ray, local or cluster

The gate hook (`catena_zero.arena.gating.make_training_gate`) is built here from the
`TrainingGateConfig`, so both runtimes gate the same checkpoints the same way. A relative
`gating.gate.registry` (the default: champions.json) names a file inside the run directory,
so a run writes nothing outside it; an absolute path shares one registry between runs.
With gating on, the registry is read before anything else (`check_gating_registry`), so a
damaged one is refused in one line at start-up, not when the first gate is due. So is a bad
games file of `selfplay.start_positions` (`with_start_positions`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from catena_zero.arena.config import TrainingGateConfig
from catena_zero.arena.gating import make_training_gate
from catena_zero.arena.registry import ChampionRegistry
from catena_zero.arena.specs import NETWORK_KINDS, parse_agent_spec
from catena_zero.pipeline.config import RuntimeConfig, TrainLoopConfig
from catena_zero.pipeline.inline import train_loop
from catena_zero.pipeline.processes import train_processes
from catena_zero.pipeline.ray import train_distributed
from catena_zero.pipeline.steps import opponent_agents, run_tracks
from catena_zero.selfplay.start_positions import StartPositionsError, load_start_positions


def run_training(config: TrainLoopConfig, runtime: RuntimeConfig | None = None,
                 gating: TrainingGateConfig | None = None,
                 log: Callable[[str], None] | None = print) -> dict[str, Any]:
    """Train on `runtime` (default: inline) until the loop's bound; returns the summary.

    `gating` (default: disabled) gates checkpoints against their track's champion.
    """
    runtime = runtime or RuntimeConfig(name="inline")
    if not config.loop.run_dir:
        raise ValueError("loop.run_dir must be set (the CLI picks runs/train-<time>)")
    config = with_opponents(with_start_positions(config))
    on_checkpoint = None
    if gating is not None:
        gating = registry_in_run_dir(gating, config.loop.run_dir)
        check_gating_registry(gating, config.loop.run_dir)
        on_checkpoint = make_training_gate(config.rules, gating, search_config=config.search,
                                           device=config.loop.device, seed=config.loop.seed,
                                           log=log)
    if runtime.name == "inline":
        return train_loop(config, on_checkpoint=on_checkpoint)
    if runtime.name == "processes":
        return train_processes(config, runtime, on_checkpoint=on_checkpoint)
    return train_distributed(config, runtime, on_checkpoint=on_checkpoint)


def with_start_positions(config: TrainLoopConfig) -> TrainLoopConfig:
    """`config` with its games file of start positions (`selfplay.start_positions`, when
    `start_share` > 0) read once now and named by its absolute path, so that a worker
    started elsewhere reads the same file. StartPositionsError, one line, for a bad file or
    one whose side and game type no track of the run plays."""
    selfplay = config.selfplay
    if selfplay.start_share == 0.0:
        return config
    path = str(Path(selfplay.start_positions).expanduser().resolve())
    positions = load_start_positions(path, selfplay.start_lost_only)
    tracks = run_tracks(config)
    if not any(positions.applies_to(track.rules()) for track in tracks):
        raise StartPositionsError(
            f"start positions file {selfplay.start_positions}: its games are of "
            f"{positions.track}, and no track of this run "
            f"({', '.join(str(track) for track in tracks)}) plays that side and game type")
    return dataclasses.replace(config, selfplay=dataclasses.replace(selfplay,
                                                                    start_positions=path))


def with_opponents(config: TrainLoopConfig) -> TrainLoopConfig:
    """`config` with the network files of `selfplay.opponents` named by absolute paths (a
    worker started elsewhere reads the same files), every opponent built once now for the
    first track it plays, so that a bad spec or an unreadable file is refused, one line
    (ValueError), before the run starts."""
    selfplay = config.selfplay
    tracks = [track for track in run_tracks(config) if selfplay.opponents_play(track.side)]
    if not tracks:
        return config
    specs = []
    for spec in selfplay.opponents:
        parsed = parse_agent_spec(spec)
        if parsed.kind in NETWORK_KINDS:
            path = str(Path(parsed.path).expanduser().resolve())
            spec = str(dataclasses.replace(parsed, path=path))
        specs.append(spec)
    config = dataclasses.replace(config, selfplay=dataclasses.replace(selfplay,
                                                                      opponents=tuple(specs)))
    opponent_agents(config, tracks[0].rules())
    return config


def registry_in_run_dir(gating: TrainingGateConfig, run_dir: str | Path) -> TrainingGateConfig:
    """`gating` with a relative registry path taken inside `run_dir` (absolute: as it is)."""
    registry = Path(gating.gate.registry).expanduser()
    if registry.is_absolute():
        return gating
    gate = dataclasses.replace(gating.gate, registry=str(Path(run_dir) / registry))
    return dataclasses.replace(gating, gate=gate)


def check_gating_registry(gating: TrainingGateConfig | None, run_dir: str | Path | None) -> None:
    """Read the champion registry a run with `gating` will gate against (its relative path
    taken inside `run_dir`), so that a damaged one is refused before the run starts:
    RegistryCorruptError, one line naming the file and the problem. Nothing is written. No
    file yet is fine (the first gate creates it), and so is a relative path without a
    `run_dir` (a new run directory holds no registry)."""
    if gating is None or not gating.enabled:
        return
    registry = Path(gating.gate.registry).expanduser()
    if not registry.is_absolute():
        if not run_dir:
            return
        registry = Path(run_dir) / registry
    ChampionRegistry(registry).read()
