"""A learning race's recipes and the commands that train them (benchmarks/learning_race.py).

A recipe is NAME=OVERRIDES (comma-separated Hydra overrides, commas inside [...] kept), or an
entry `NAME: [override, ...]` of a YAML file. `train_command` builds the subprocess that
trains one: the keys the race sets itself (RACE_KEYS: run dir, seed, minutes, one thread, the
inline runtime), then the common base overrides, then the recipe's, which win. A race's train
log starts with that command, so `check_reused` can tell whether a run of an earlier race was
trained with the settings this race would give it (`--reuse`). Bad input is a
`RaceInputError`: one line on stderr, exit 2.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from benchmarks.race_page import Recipe

TRAIN_ENTRY = "import sys; from catena_zero.cli.main import main; sys.exit(main())"
# Keys the race itself sets, so every recipe gets the same budget, seed and single core.
RACE_KEYS = ("run_dir", "resume", "seed", "max_minutes", "iterations", "runtime", "threads")
RECIPE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class RaceInputError(ValueError):
    """Bad command-line input: one line on stderr, exit 2."""


def split_overrides(text: str) -> list[str]:
    """Comma-separated overrides; a comma inside brackets or quotes (a list value) stays."""
    parts, current, depth, quote = [], "", 0, ""
    for character in text:
        if quote:
            quote = "" if character == quote else quote
        elif character in "'\"":
            quote = character
        elif character in "[{(":
            depth += 1
        elif character in "]})":
            depth -= 1
        elif character == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += character
    if depth or quote:
        raise RaceInputError(f"unbalanced brackets or quotes in {text!r}")
    return [part.strip() for part in [*parts, current] if part.strip()]


def check_override(override: str, where: str) -> str:
    """A Hydra override (`key=value`, `+key=value`, `~key`) that leaves the race's keys alone."""
    key = override.lstrip("+~").partition("=")[0]
    if not key or ("=" not in override and not override.startswith("~")):
        raise RaceInputError(f"{where}: {override!r} is not a Hydra override key=value")
    if key in RACE_KEYS or key.startswith("runtime."):
        raise RaceInputError(f"{where}: {key} is set by the race itself "
                             f"({', '.join(RACE_KEYS)})")
    return override


def parse_recipe(text: str) -> Recipe:
    """NAME=override1,override2,... (NAME= alone: the base overrides only)."""
    name, separator, overrides = text.partition("=")
    if not separator or not RECIPE_NAME.match(name):
        raise RaceInputError(f"recipe {text!r}: expected NAME=override1,override2,... with "
                             f"NAME of letters, digits, '.', '_' or '-'")
    return Recipe(name, tuple(check_override(item, f"recipe {name}")
                              for item in split_overrides(overrides)))


def read_recipes_file(path: Path) -> list[Recipe]:
    """A YAML mapping NAME: [override, ...] (or NAME: "a=1,b=2")."""
    import yaml

    try:
        loaded = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise RaceInputError(f"--recipes-file {path}: unreadable ({error})") from None
    if not isinstance(loaded, dict):
        raise RaceInputError(f"--recipes-file {path}: expected a mapping NAME: [overrides]")
    return [parse_recipe(f"{name}=" + (",".join(map(str, overrides))
                                       if isinstance(overrides, list) else overrides or ""))
            for name, overrides in loaded.items()]


def default_base(track: str) -> list[str]:
    """The default job's recipe on `track` alone, without gating or probes (which would spend
    the race's minutes): the one-track mix of docs/howto/train-on-a-laptop.md."""
    return ["device=cpu", "progress=false", "gating.enabled=false", "probe.every=0",
            f"mix.tracks=[{track}]", "mix.shares=[]", "mix.final_shares=[]",
            "mix.schedule_iterations=0"]


def train_command(recipe: Recipe, base: list[str], run_dir: Path, seed: int, minutes: float,
                  core: int | None) -> list[str]:
    """The subprocess that trains `recipe`; the recipe's overrides come last, so they win."""
    pin = ["taskset", "-c", str(core)] if core is not None else []
    return [*pin, sys.executable, "-c", TRAIN_ENTRY, "train", f"run_dir={run_dir}",
            f"seed={seed}", f"max_minutes={minutes:g}", "iterations=0", "runtime=inline",
            "threads=1", *base, *recipe.overrides]


def first_line(log_path: Path) -> str | None:
    """A train log's first line; None when the log is missing, unreadable or empty."""
    try:
        return log_path.read_text().splitlines()[0]
    except (OSError, IndexError):
        return None


def logged_command(first: str | None) -> str | None:
    """The command a race's train log starts with (its first line "$ COMMAND"), else None."""
    return first[2:] if first is not None and first.startswith("$ ") else None


def recorded_command(log_path: Path, fallback: list[str]) -> str:
    """The command a run was trained with (its log's first line); else what it would be."""
    logged = logged_command(first_line(log_path))
    return logged if logged is not None else shlex.join(fallback) + "  # reconstructed"


def training_settings(command: list[str]) -> list[str]:
    """The overrides after `train` in a train command, less `run_dir=`: what makes two runs
    the same recipe wherever they were written (the interpreter and pinned core may differ)."""
    settings = command[command.index("train") + 1:] if "train" in command else command
    return [item for item in settings if not item.startswith("run_dir=")]


def reuse_log(run_dir: Path) -> Path:
    """The train log a race writes beside a recipe's run dir."""
    return run_dir.parent / f"{run_dir.name}.log"


def check_reused(name: str, run_dir: Path, command: list[str]) -> None:
    """Refuse `--reuse name=run_dir` unless its log shows this race's settings for `name`."""
    log_path = reuse_log(run_dir)
    first = first_line(log_path)
    if first is None:
        raise RaceInputError(f"--reuse {name}: {log_path} is missing or empty (a race's "
                             f"train log, its first line the command)")
    try:
        recorded = shlex.split(logged_command(first) or "")
    except ValueError:
        recorded = []
    if not recorded:
        raise RaceInputError(f"--reuse {name}: {log_path} does not start with the command")
    had, wanted = training_settings(recorded), training_settings(command)
    if had != wanted:
        missing = [item for item in wanted if item not in had]
        extra = [item for item in had if item not in wanted]
        parts = ([f"without {', '.join(map(repr, missing))}"] if missing else []) + (
            [f"with {', '.join(map(repr, extra))}"] if extra else [])
        raise RaceInputError(f"--reuse {name}: {run_dir} was trained with other settings "
                             f"({'; '.join(parts) or 'the same ones in another order'})")
