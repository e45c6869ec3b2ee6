"""Shared CLI helpers: Hydra composition, DictConfig -> dataclass conversion, run directories.

This is the only module family that imports hydra. Library code never sees a DictConfig:
a subcommand composes its config, converts the nodes it needs with `to_dataclass`, and
calls one library function.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import sys
import time
import types
import typing
from pathlib import Path
from typing import Any

from hydra import compose as hydra_compose
from hydra import initialize_config_dir
from hydra.errors import HydraException
from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from catena_zero.data.atomic import atomic_write_text
from catena_zero.rules import Rules

CONFIG_DIR_ENV = "CATENA_ZERO_CONFIG_DIR"
# Short keys for the board and rules nodes that every subcommand's config has.
ALIASES = {"side": "board.side", "game_type": "rules.game_type", "scoring": "rules.scoring"}


class ConfigError(ValueError):
    """A config could not be composed or holds an unknown key / invalid value (named)."""


class InputFileError(ConfigError):
    """A file the config names (a model file) is missing, corrupt or of another format.
    The console script prints it as `error: ...`, not as a config error."""


# (module, class) of the errors that refuse a bad file; each message is one line naming the
# file and its problem, which the CLI prints instead of a traceback.
FILE_ERRORS = (
    ("catena_zero.train.checkpoint", "CheckpointError"),
    ("catena_zero.data.shards", "ShardError"),
    ("catena_zero.arena.registry", "RegistryCorruptError"),
    ("catena_zero.export.metadata", "ModelFileError"),
    ("catena_zero.export.ratings", "RatingsFileError"),
    ("catena_zero.selfplay.start_positions", "StartPositionsError"),
)


def file_errors() -> tuple[type[Exception], ...]:
    """The classes of FILE_ERRORS among the modules loaded so far (an error of a module never
    imported cannot have been raised, and importing it here would only slow the exit)."""
    found = []
    for module_name, class_name in FILE_ERRORS:
        module = sys.modules.get(module_name)
        if module is not None:
            found.append(getattr(module, class_name))
    return tuple(found)


def config_dir() -> Path:
    """The `configs/` directory: `$CATENA_ZERO_CONFIG_DIR`, else `<repo>/configs` beside the
    package (an editable install), else `catena_zero/configs` inside the package."""
    override = os.environ.get(CONFIG_DIR_ENV)
    candidates = [Path(override)] if override else []
    package_dir = Path(__file__).resolve().parents[1]
    candidates += [package_dir.parent / "configs", package_dir / "configs"]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise ConfigError(f"no configs directory found (looked in {[str(c) for c in candidates]})")


def available_configs() -> list[str]:
    """Names of the top-level configs (`configs/*.yaml`), i.e. the composable subcommands."""
    return sorted(path.stem for path in config_dir().glob("*.yaml"))


def group_options(group: str) -> list[str]:
    """The options of a config group: `configs/<group>/*.yaml` and the schema defaults
    registered for it (`catena_zero.cli.schemas`)."""
    # lazy: the schemas import every package (torch), which `catena-zero --help` never needs
    from catena_zero.cli.schemas import registered_options

    files = {path.stem for path in (config_dir() / group).glob("*.yaml")}
    return sorted(files | set(registered_options(group)))


def compose(config_name: str, overrides: list[str] | tuple[str, ...] = ()) -> DictConfig:
    """Compose `configs/<config_name>.yaml` with Hydra overrides; struct mode, resolved.

    Raises ConfigError (naming the key) on an unknown key, a bad override or a missing option.
    """
    # lazy: the schemas import every package (torch), which `catena-zero --help` never needs
    from catena_zero.cli.schemas import register_schemas

    directory = config_dir()
    if not (directory / f"{config_name}.yaml").exists():
        raise ConfigError(f"no config named {config_name!r} in {directory}")
    register_schemas()
    try:
        with initialize_config_dir(
            config_dir=str(directory), version_base="1.3", job_name=f"catena_zero_{config_name}"
        ):
            config = hydra_compose(config_name=config_name,
                                   overrides=[unalias(item) for item in overrides])
        OmegaConf.resolve(config)
    except (HydraException, OmegaConfBaseException) as error:
        raise ConfigError(_first_line(error)) from error
    OmegaConf.set_struct(config, True)
    return config


def unalias(override: str) -> str:
    """`side=4` -> `board.side=4` (and the other ALIASES); anything else unchanged."""
    key, separator, value = override.partition("=")
    if separator and key in ALIASES:
        return f"{ALIASES[key]}={value}"
    return override


def _first_line(error: BaseException) -> str:
    """Hydra's messages carry a long 'Set HYDRA_FULL_ERROR' tail; keep the informative part."""
    text = str(error).strip()
    cause = error.__cause__
    if cause is not None and str(cause).strip() and str(cause).strip() not in text:
        text = f"{text}: {str(cause).strip()}"
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def format_config(config: DictConfig) -> str:
    """The config as YAML text."""
    return OmegaConf.to_yaml(config, resolve=True)


def to_container(node: Any) -> Any:
    """A DictConfig/ListConfig as plain dicts/lists; other values unchanged."""
    if isinstance(node, DictConfig | ListConfig):
        return OmegaConf.to_container(node, resolve=True)
    return node


def to_dataclass(cls: type, node: Any, path: str = "") -> Any:
    """Build the dataclass `cls` from a DictConfig (or dict) node, checking every key.

    Unknown keys, values of the wrong type and values the dataclass itself rejects (its
    `__post_init__` raising ValueError/TypeError) raise ConfigError naming the key path.
    Missing keys take the dataclass defaults. Nested dataclasses, enums (by value or
    name), Literal, Optional, tuple and list fields are converted.
    """
    values = to_container(node)
    label = path or cls.__name__
    if not isinstance(values, dict):
        raise ConfigError(f"{label}: expected a mapping for {cls.__name__}, got {values!r}")
    hints = typing.get_type_hints(cls)
    fields = {field.name: field for field in dataclasses.fields(cls) if field.init}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        names = ", ".join(_join(path, key) for key in unknown)
        raise ConfigError(f"unknown key {names} (valid keys of {cls.__name__}: "
                          f"{', '.join(fields)})")
    arguments = {}
    for name, value in values.items():
        arguments[name] = _convert(hints[name], value, _join(path, name))
    missing = [
        name for name, field in fields.items()
        if name not in arguments
        and field.default is dataclasses.MISSING
        and field.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise ConfigError(f"missing key {', '.join(_join(path, m) for m in missing)}")
    try:
        return cls(**arguments)
    except (ValueError, TypeError) as error:
        raise ConfigError(f"invalid value in {label}: {error}") from error


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _convert(hint: Any, value: Any, path: str) -> Any:
    """Convert one plain value to the annotated type or raise ConfigError naming `path`."""
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in arguments:
            return None
        errors = []
        for option in arguments:
            if option is type(None):
                continue
            try:
                return _convert(option, value, path)
            except ConfigError as error:
                errors.append(str(error))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{path}: invalid value {value!r}")
    if origin is typing.Literal:
        if value in arguments:
            return value
        raise ConfigError(f"{path}: invalid value {value!r}, expected one of {list(arguments)}")
    if dataclasses.is_dataclass(hint):
        return to_dataclass(hint, value, path)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _convert_enum(hint, value, path)
    if origin in (tuple, list):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{path}: expected a list, got {value!r}")
        if origin is tuple and len(arguments) == 2 and arguments[1] is Ellipsis:
            item_hints = [arguments[0]] * len(value)
        elif origin is tuple and arguments:
            if len(arguments) != len(value):
                raise ConfigError(f"{path}: expected {len(arguments)} items, got {value!r}")
            item_hints = list(arguments)
        else:
            item_hints = [arguments[0] if arguments else Any] * len(value)
        items = [_convert(h, v, f"{path}[{i}]") for i, (h, v) in enumerate(zip(item_hints, value,
                                                                                  strict=True))]
        return tuple(items) if origin is tuple else items
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: expected a mapping, got {value!r}")
        return value
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{path}: expected true/false, got {value!r}")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ConfigError(f"{path}: expected an integer, got {value!r}")
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise ConfigError(f"{path}: expected a number, got {value!r}")
    if hint is str:
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        raise ConfigError(f"{path}: expected a string, got {value!r}")
    return value


def _convert_enum(hint: type[enum.Enum], value: Any, path: str) -> enum.Enum:
    if isinstance(value, hint):
        return value
    for member in hint:
        if value == member.value:
            return member
        if isinstance(value, str) and value.lower() in (member.name.lower(),
                                                        str(member.value).lower()):
            return member
    raise ConfigError(f"{path}: invalid value {value!r}, expected one of "
                      f"{[member.value for member in hint]}")


def prepare_run_dir(run_dir: str | None, config: DictConfig, *, name: str = "run",
                    resume: bool = False, marker: str = "checkpoints") -> Path:
    """Create the run directory and write the resolved config into it (atomically).

    `run_dir` None or empty -> `runs/<name>-<UTC timestamp>` under the current directory.
    Refuses (ConfigError) a directory whose `marker` subdirectory already holds files unless
    `resume` is true, so a new run never silently mixes with an old one.
    """
    if run_dir:
        path = Path(run_dir)
    else:
        path = Path("runs") / f"{name}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    existing = path / marker
    if not resume and existing.is_dir() and any(existing.iterdir()):
        raise ConfigError(f"run_dir {str(path)!r} already holds {marker}; pass resume=true to "
                          f"continue it or choose another run_dir")
    path.mkdir(parents=True, exist_ok=True)
    target = path / "config.yaml"
    atomic_write_text(target, format_config(config))
    return path


def rules_from_config(config: DictConfig):
    """`Rules` from the composed config's `board.side` and `rules.{game_type, scoring}`."""
    board = to_container(config.board)
    rules = to_container(config.rules)
    unknown = sorted(set(board) - {"side"})
    if unknown:
        raise ConfigError(f"unknown key {', '.join('board.' + key for key in unknown)} "
                          f"(valid keys: board.side)")
    unknown = sorted(set(rules) - {"game_type", "scoring"})
    if unknown:
        raise ConfigError(f"unknown key {', '.join('rules.' + key for key in unknown)} "
                          f"(valid keys: rules.game_type, rules.scoring)")
    side = _convert(int, board.get("side"), "board.side")
    try:
        return Rules(side=side, game_type=rules.get("game_type", "komi"),
                     scoring=rules.get("scoring", "standard"))
    except ValueError as error:
        raise ConfigError(f"invalid value in board/rules: {error}") from error
