"""The config schemas: every subcommand's config is typed by the dataclasses of the modules
that read it, registered with Hydra's ConfigStore.

Each `configs/<subcommand>.yaml` starts its defaults list with `<subcommand>_schema`, a
structured config whose fields are the library dataclasses (`SearchConfig` under `mcts`,
`NetworkConfig` under `network`, ...). Group files (`configs/<group>/<option>.yaml`) and
presets then hold only what differs from those dataclasses' defaults, and an unknown key or
a value of the wrong type fails at composition, naming the key. The library still
validates values in `__post_init__` when `to_dataclass` builds the real objects.

Board and rules are spelled one way in every subcommand: `board.side`, `rules.game_type`,
`rules.scoring` (`--side N` is short for `board.side=N`; see `catena_zero.cli.main`).
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore

from catena_zero.arena.config import ArenaConfig, TrainingGateConfig
from catena_zero.evaluate.config import EvaluateConfig
from catena_zero.export.exporter import ExportConfig
from catena_zero.komi.config import KomiConfig, SolveConfig
from catena_zero.mcts.config import SearchConfig
from catena_zero.network.config import NetworkConfig
from catena_zero.pipeline.config import LoopConfig, RuntimeConfig
from catena_zero.pipeline.tracks import MixConfig
from catena_zero.play.analysis_engine import AnalysisConfig
from catena_zero.play.model_player import PlayerConfig
from catena_zero.play.web import ServeConfig
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.train.config import TrainConfig


@dataclass
class BoardConfig:
    """The board of a subcommand (`board.side`)."""

    side: int | None = 6  # board side 2..10; play subcommands: null = the model's side


@dataclass
class RulesConfig:
    """The variant of a subcommand (`rules.game_type`, `rules.scoring`; `configs/rules/`)."""

    game_type: str = "komi"  # komi | nokomi | double
    scoring: str = "standard"  # standard | longest | quadratic


_MUTABLE: dict[type, type] = {}


def _mutable(cls: type) -> type:
    """A non-frozen copy of the dataclass `cls` (nested dataclass fields copied too): Hydra
    merges group files into a schema's nodes, and a frozen dataclass makes them read-only."""
    if cls not in _MUTABLE:
        _MUTABLE[cls] = dataclasses.make_dataclass(cls.__name__, _fields_of(cls))
    return _MUTABLE[cls]


def _mutable_value(value: Any) -> Any:
    """A default value with every dataclass in it replaced by its `_mutable` copy."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        schema = _mutable(type(value))
        return schema(**{item.name: _mutable_value(getattr(value, item.name))
                         for item in dataclasses.fields(value) if item.init})
    return value


def _fields_of(cls: type, exclude: tuple[str, ...] = ()) -> list[tuple[str, Any, Any]]:
    """`cls`'s init fields as make_dataclass specs, with resolved annotations and defaults
    (dataclass-typed fields as their `_mutable` copies)."""
    hints = typing.get_type_hints(cls)
    specs = []
    for item in dataclasses.fields(cls):
        if not item.init or item.name in exclude:
            continue
        hint = hints[item.name]
        if dataclasses.is_dataclass(hint):
            hint = _mutable(hint)
        if item.default is not dataclasses.MISSING:
            default = field(default=_mutable_value(item.default))
        elif item.default_factory is not dataclasses.MISSING:
            factory = item.default_factory
            default = field(default_factory=lambda factory=factory: _mutable_value(factory()))
        else:
            default = field(default=None)
        specs.append((item.name, hint, default))
    return specs


def _group(cls: type) -> tuple[type, Any]:
    schema = _mutable(cls)
    return schema, field(default_factory=schema)


@dataclass
class PlayKeys:
    """Top-level keys of the play subcommands (gtp, play, serve) besides their groups."""

    model: str | None = None  # model file; null = the bundled champion; gtp: random = random moves
    komi: Any = 0  # komi for White at start (in the rules' range); play: auto = the model's pick
    colour: str = "black"  # play: your colour, black | white | auto (the model chooses its own)
    think: str | None = None  # play: think time a move, quick|normal|strong; null: player.*


@dataclass
class AnalysisKeys:
    """`catena-zero analysis`'s key besides catena_zero.play.analysis_engine.AnalysisConfig."""

    model: str | None = None  # model file for every side; null = the bundled model of each track


@dataclass
class EvaluateKeys:
    """`catena-zero evaluate`'s key besides catena_zero.evaluate.config.EvaluateConfig."""

    # SearchConfig fields changed in the run's own search (search.algorithm=puct); empty: the
    # run's search with exact endgames off
    search: dict[str, Any] = field(default_factory=dict)


def _schema(name: str, *tops: tuple[type, tuple[str, ...]], **groups: type) -> type:
    """A dataclass with the fields of each `(dataclass, excluded names)` of `tops` at the top
    level and one field per group."""
    specs = [spec for top, exclude in tops for spec in _fields_of(top, exclude)]
    specs += [(group, *_group(cls)) for group, cls in groups.items()]
    return dataclasses.make_dataclass(name, specs)


TRAIN_GROUPS = dict(board=BoardConfig, rules=RulesConfig, network=NetworkConfig,
                    mcts=SearchConfig, selfplay=SelfPlayConfig, train=TrainConfig,
                    runtime=RuntimeConfig, gating=TrainingGateConfig, mix=MixConfig)
RULES_GROUPS = dict(board=BoardConfig, rules=RulesConfig)

# Each subcommand's schema: (its top-level key sources, its groups). The arena takes the
# training presets (preset=side4: their board, net and search), so it accepts their training
# keys too, and ignores them.
LAYOUT: dict[str, tuple[tuple[tuple[type, tuple[str, ...]], ...], dict[str, type]]] = {
    "train": (((LoopConfig, ()),), TRAIN_GROUPS),
    "arena": (((LoopConfig, ()),), TRAIN_GROUPS | {"arena": ArenaConfig}),
    "komi": (((KomiConfig, ()),), RULES_GROUPS | {"mcts": SearchConfig}),
    "solve": (((SolveConfig, ()),), RULES_GROUPS),
    "export": (((ExportConfig, ("side", "game_type", "scoring")),), RULES_GROUPS),
    "gtp": (((PlayKeys, ("colour", "think")),), RULES_GROUPS | {"player": PlayerConfig}),
    "play": (((PlayKeys, ()),), RULES_GROUPS | {"player": PlayerConfig}),
    "serve": (((ServeConfig, ()), (PlayKeys, ("komi", "colour", "think"))),
              {"player": PlayerConfig}),
    "evaluate": (((EvaluateConfig, ()), (EvaluateKeys, ())), {}),
    "analysis": (((AnalysisConfig, ()), (AnalysisKeys, ())), {}),
}

SCHEMAS: dict[str, type] = {
    name: _schema(f"{name.capitalize()}Schema", *tops, **groups)
    for name, (tops, groups) in LAYOUT.items()
}

# Group options that are exactly a schema's defaults need no YAML file.
DEFAULT_OPTIONS: dict[str, type] = {
    "mix": MixConfig,
    "selfplay": SelfPlayConfig,
    "train": TrainConfig,
    "player": PlayerConfig,
}

_registered = False


def register_schemas() -> None:
    """Store every schema in Hydra's ConfigStore (once per process)."""
    global _registered
    if _registered:
        return
    store = ConfigStore.instance()
    for name, schema in SCHEMAS.items():
        store.store(name=f"{name}_schema", node=schema)
    for group, schema in DEFAULT_OPTIONS.items():
        store.store(group=group, name="default", node=_mutable(schema))
    _registered = True


def registered_options(group: str) -> list[str]:
    """Group options that live in the ConfigStore rather than in YAML files."""
    return ["default"] if group in DEFAULT_OPTIONS else []
