"""Dependencies between the packages point one way (docs/ARCHITECTURE.md).

Each module's imports are read from its syntax tree, so a lazy import inside a
function counts as much as one at the top: the layering is about what a module
may know, not about when it loads it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "catena_zero"
# Folders of scripts run against the installed package (never a path hack of their own).
SCRIPT_FOLDERS = ("benchmarks", "scripts")

# Which project packages each package may import (besides itself).
ALLOWED: dict[str, set[str]] = {
    "rules": set(),
    "mcts": {"rules"},
    "network": set(),
    "data": {"rules"},
    "selfplay": {"rules", "mcts", "network", "data"},
    "train": {"rules", "network", "data"},  # reads shards, never trees
    "arena": {"rules", "mcts", "network", "data", "selfplay", "train"},
    "komi": {"rules", "mcts", "network", "data", "selfplay", "train", "arena"},
    "pipeline": {"rules", "mcts", "network", "data", "selfplay", "train", "arena", "komi"},
    # export: an exported model file is evaluated like a checkpoint (export.load_model_file).
    "evaluate": {"rules", "mcts", "network", "data", "selfplay", "train", "arena", "komi",
                 "export"},
    "export": {"rules", "mcts", "network", "data", "selfplay", "train", "arena"},
    "play": {"rules", "mcts", "network", "data", "selfplay", "train", "arena", "export", "komi"},
    "cli": {
        "rules", "mcts", "network", "data", "selfplay", "train", "arena", "komi",
        "pipeline", "evaluate", "export", "play",
    },
}

# Third-party packages that only one project module tree may import (a dotted prefix below
# catena_zero): Ray only in the Ray runtime, Hydra only in the command line.
EXCLUSIVE_THIRD_PARTY = {"ray": "pipeline.ray", "hydra": "cli"}
# Packages that must stay free of torch (numpy engines and the search).
TORCH_FREE = {"rules", "mcts", "data"}


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    package_parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # Resolve a relative import against the module's own package.
                base = list(package_parts[: len(package_parts) - node.level])
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
    return names


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        parts = path.relative_to(PACKAGE_ROOT).parts
        if len(parts) >= 2:
            found.append((parts[0], path))
    return found


@pytest.mark.parametrize(
    ("package", "path"), _modules(), ids=lambda value: str(value).split("catena_zero/")[-1]
)
def test_imports_point_one_way(package: str, path: Path) -> None:
    if package not in ALLOWED:
        pytest.fail(f"package catena_zero.{package} is not in the layering table")
    for module in _imported_modules(path):
        top = module.split(".")[0]
        if top == "catena_zero":
            parts = module.split(".")
            if len(parts) < 2:
                continue
            target = parts[1]
            if target == package or target not in ALLOWED:
                continue
            assert target in ALLOWED[package], (
                f"{path.relative_to(PACKAGE_ROOT.parent)} imports catena_zero.{target}, "
                f"but catena_zero.{package} may only import {sorted(ALLOWED[package])}"
            )
        owner = EXCLUSIVE_THIRD_PARTY.get(top)
        if owner is not None:
            dotted = ".".join(path.relative_to(PACKAGE_ROOT).with_suffix("").parts)
            assert dotted == owner or dotted.startswith(owner + "."), (
                f"{path.relative_to(PACKAGE_ROOT.parent)} imports {top}; "
                f"only catena_zero.{owner} may"
            )
        if package in TORCH_FREE:
            assert top != "torch", f"{path} imports torch; catena_zero.{package} is numpy only"


def test_nothing_imports_cli() -> None:
    for package, path in _modules():
        if package == "cli":
            continue
        for module in _imported_modules(path):
            assert not module.startswith("catena_zero.cli"), f"{path} imports {module}"


def test_layering_table_covers_every_package() -> None:
    packages = {p.name for p in PACKAGE_ROOT.iterdir() if (p / "__init__.py").exists()}
    assert packages <= set(ALLOWED), sorted(packages - set(ALLOWED))


def _script_files() -> list[Path]:
    root = PACKAGE_ROOT.parent
    return sorted(path for folder in SCRIPT_FOLDERS for path in (root / folder).rglob("*.py"))


def _path_hacks(path: Path) -> list[str]:
    """Uses of sys.path and imports of a file by its path (importlib / runpy) in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if (isinstance(node, ast.Attribute) and node.attr == "path"
                and isinstance(node.value, ast.Name) and node.value.id == "sys"):
            found.append(f"line {node.lineno}: sys.path")
        elif isinstance(node, ast.Attribute) and node.attr in ("spec_from_file_location",
                                                                "run_path"):
            found.append(f"line {node.lineno}: {node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "sys" and any(
                alias.name == "path" for alias in node.names):
            found.append(f"line {node.lineno}: from sys import path")
    return found


def test_path_hacks_are_found() -> None:
    """The check below sees each way a script could reach another file by its path."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        sample = Path(directory) / "sample.py"
        sample.write_text("import sys\nsys.path.insert(0, 'x')\nfrom sys import path\n"
                          "import importlib.util\nimportlib.util.spec_from_file_location"
                          "('m', 'm.py')\n")
        assert len(_path_hacks(sample)) == 3


@pytest.mark.parametrize("path", _script_files(),
                         ids=lambda value: str(value.relative_to(PACKAGE_ROOT.parent)))
def test_scripts_use_the_installed_package(path: Path) -> None:
    """Benchmarks and scripts import the package (and each other) as modules: no file edits
    sys.path or loads another script by its path."""
    assert _path_hacks(path) == [], f"{path.relative_to(PACKAGE_ROOT.parent)}: {_path_hacks(path)}"
