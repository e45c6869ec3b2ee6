"""Dependencies between the packages point one way (docs/ARCHITECTURE.md).

Each module's imports are read from its syntax tree, so a lazy import inside a
function counts as much as one at the top: the layering is about what a module
may know, not about when it loads it.

A project module imports project modules at its top, where a reader sees them: an import
inside a function can hide a circle between two modules. One that must wait (an optional
dependency, start-up time) says why on its line or the line above its group of imports
(`# lazy: torch, loaded only once a network plays`). The imports at the modules' tops form no
circle.
"""

from __future__ import annotations

import ast
import re
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


# Modules of the pipeline outside pipeline/ray/ that may import from it: run.py picks a runtime
# by name, and config.py's RuntimeConfig holds Ray's settings (RayConfig, plain data). The
# worker, the learner, resuming and the other runtimes live beside pipeline/ray/, so the inline
# and process runtimes never reach into the Ray folder for them.
RAY_RUNTIME_PICKERS = {"pipeline/run.py", "pipeline/config.py"}


def test_the_pipeline_outside_ray_does_not_reach_into_it() -> None:
    problems = []
    for package, path in _modules():
        name = path.relative_to(PACKAGE_ROOT).as_posix()
        if package != "pipeline" or name.startswith("pipeline/ray/") or name in RAY_RUNTIME_PICKERS:
            continue
        problems += [f"catena_zero/{name} imports {module}" for module in _imported_modules(path)
                     if module == "catena_zero.pipeline.ray"
                     or module.startswith("catena_zero.pipeline.ray.")]
    assert problems == [], "\n".join(problems)


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


# ------------------------------------------------------------------ imports inside functions
LAZY_REASON = re.compile(r"#\s*lazy:\s*\S")


def _resolve(node: ast.ImportFrom, path: Path) -> str:
    """The absolute module name of a `from ... import` in the module at `path`."""
    if not node.level:
        return node.module or ""
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    base = list(parts[: len(parts) - node.level])
    return ".".join(base + ([node.module] if node.module else []))


def _statement_lists(node: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists directly under `node` (bodies, else and finally branches,
    exception handlers, match cases)."""
    lists = [getattr(node, name) for name in ("body", "orelse", "finalbody")
             if isinstance(getattr(node, name, None), list)]
    lists += [handler.body for handler in getattr(node, "handlers", [])]
    lists += [case.body for case in getattr(node, "cases", [])]
    return [statements for statements in lists
            if statements and isinstance(statements[0], ast.stmt)]


def _project_modules(node: ast.stmt, path: Path) -> list[str]:
    """The catena_zero modules an import statement names (none for any other statement)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        names = [_resolve(node, path)]
    else:
        return []
    return [name for name in names if name == "catena_zero" or name.startswith("catena_zero.")]


def in_function_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of each catena_zero import below a module's top level (in a function or
    class body) that no `# lazy: <reason>` comment covers: one on its own line, or one in the
    comments right above it or above an earlier import of the same run of imports."""
    text = path.read_text()
    lines = text.splitlines()
    found: list[tuple[int, str]] = []

    def reason_above(line: int) -> bool:
        """A reason in the comment lines right above `line`."""
        line -= 1
        while line > 0 and lines[line - 1].strip().startswith("#"):
            if LAZY_REASON.search(lines[line - 1]):
                return True
            line -= 1
        return False

    def visit(node: ast.AST, nested: bool) -> None:
        for statements in _statement_lists(node):
            run_has_reason = False  # a reason above this run of imports
            for statement in statements:
                if not isinstance(statement, ast.Import | ast.ImportFrom):
                    run_has_reason = False
                else:
                    run_has_reason = run_has_reason or reason_above(statement.lineno)
                covered = run_has_reason or bool(LAZY_REASON.search(lines[statement.lineno - 1]))
                if nested and not covered:
                    found.extend((statement.lineno, module)
                                 for module in _project_modules(statement, path))
                inner = nested or isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef
                                             | ast.ClassDef)
                visit(statement, inner)

    visit(ast.parse(text, filename=str(path)), False)
    return found


def test_in_function_imports_are_found(tmp_path) -> None:
    """The check below sees a project import in a function, a method and a branch, and takes
    a reason on the import's line or above it (for the rest of its run of imports)."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\n"
        "from catena_zero.rules import Rules\n"
        "def f():\n"
        "    import json\n"
        "    from catena_zero.mcts import search\n"  # line 5: found
        "    if os:\n"
        "        import catena_zero.data\n"  # line 7: found
        "class C:\n"
        "    def g(self):\n"
        "        from catena_zero.network import NetworkConfig  # lazy: torch\n"
        "        # lazy: torch, loaded only when a network plays\n"
        "        from catena_zero.train import Trainer\n"
        "        from catena_zero.selfplay import SelfPlay\n"  # the reason above line 12 holds
        "        x = 1\n"
        "        from catena_zero.arena import agents\n"  # line 15: a new run, found
        "    # lazy:\n"
        "    from catena_zero.komi import fair\n"  # line 17: a reason must say something
    )
    assert in_function_imports(sample) == [(5, "catena_zero.mcts"), (7, "catena_zero.data"),
                                           (15, "catena_zero.arena"), (17, "catena_zero.komi")]


def test_project_imports_sit_at_the_top() -> None:
    """No catena_zero module imports another inside a function without saying why."""
    problems = []
    for _, path in _modules():
        name = path.relative_to(PACKAGE_ROOT).as_posix()
        for line, module in in_function_imports(path):
            problems.append(f"catena_zero/{name}:{line} imports {module} inside a function; "
                            f"move it to the top, or say why it waits (# lazy: reason)")
    assert problems == [], "\n".join(problems)


# ------------------------------------------------------------------ the module import graph
def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path: Path, known: set[str]) -> set[str]:
    """The project modules the module at `path` imports when it is imported (statements at
    its top level, in branches there too), by their names in `known`. `from package import
    name` counts the submodule when `name` is one, and the package otherwise; the module's
    own packages, already being imported around it, are left out."""
    own = _module_name(path)
    ancestors = {own.rsplit(".", depth)[0] for depth in range(1, own.count(".") + 1)}
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for statements in _statement_lists(node):
            for statement in statements:
                if isinstance(statement, ast.ImportFrom):
                    base = _resolve(statement, path)
                    for alias in statement.names:
                        submodule = f"{base}.{alias.name}"
                        found.add(submodule if submodule in known else base)
                elif isinstance(statement, ast.Import):
                    found.update(alias.name for alias in statement.names)
                elif not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef
                                    | ast.ClassDef):
                    visit(statement)

    visit(ast.parse(path.read_text(), filename=str(path)))
    return {module for module in found if module in known and module not in ancestors | {own}}


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports at its top level."""
    paths = sorted(PACKAGE_ROOT.rglob("*.py"))
    known = {_module_name(path) for path in paths}
    return {_module_name(path): _top_level_imports(path, known) for path in paths}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of `graph` as [a, b, ..., a], or [] when it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []


def test_find_cycle_finds_a_circle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_import_graph_has_no_cycle() -> None:
    """The modules' top-level imports form no circle (a module is never imported while one it
    needs is half-initialised)."""
    graph = import_graph()
    assert graph["catena_zero.mcts.search"] >= {"catena_zero.mcts.leaf_batch"}
    cycle = find_cycle(graph)
    assert cycle == [], "import circle: " + " -> ".join(cycle)
