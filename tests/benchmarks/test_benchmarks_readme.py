"""benchmarks/README.md lists every script of benchmarks/: each `.py` module (by its module
name) and each `.sh` script (by its file name) has a row of its own with a command, and no
row names a script that is gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
README = BENCHMARKS / "README.md"
ROW = re.compile(r"^\| `([\w.]+)` \|(.*)\|\s*$", re.MULTILINE)


def scripts(folder: Path = BENCHMARKS) -> list[str]:
    """The names a README row uses: module names of the .py files, file names of .sh."""
    names = [path.stem for path in folder.glob("*.py") if path.name != "__init__.py"]
    return sorted(names + [path.name for path in folder.glob("*.sh")])


def rows(text: str) -> dict[str, str]:
    """Row name -> the rest of its row."""
    return {name: rest for name, rest in ROW.findall(text)}


def unlisted(folder: Path, text: str) -> list[str]:
    return [name for name in scripts(folder) if name not in rows(text)]


def test_every_script_has_a_row() -> None:
    assert scripts(), "benchmarks/ holds no scripts"
    assert unlisted(BENCHMARKS, README.read_text()) == []


def test_every_row_names_a_script_that_exists() -> None:
    assert sorted(rows(README.read_text())) == scripts()


def test_every_row_gives_a_command_that_runs_a_listed_script() -> None:
    listed = rows(README.read_text())
    for name, rest in listed.items():
        commands = re.findall(r"python -m benchmarks\.(\w+)|bash benchmarks/([\w.]+)", rest)
        named = {module or shell for module, shell in commands}
        assert named and named <= set(listed), f"{name}: {rest.strip()[:80]}"


def test_a_new_script_without_a_row_is_reported(tmp_path: Path) -> None:
    """The check itself: a module and a shell script missing from a README are named."""
    for name in ("__init__.py", "bench_known.py", "bench_new.py", "run_new.sh"):
        (tmp_path / name).write_text("")
    text = "| `bench_known` | x | `python -m benchmarks.bench_known` |\n"
    assert unlisted(tmp_path, text) == ["bench_new", "run_new.sh"]
