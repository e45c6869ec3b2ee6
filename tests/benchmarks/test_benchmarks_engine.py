"""benchmarks/bench_engine.py and its one-game pure-Python engine (benchmarks/python_engine.py)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import bench_engine
from benchmarks.python_engine import PythonGame
from catena_zero.rules import Engine, Rules

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("game_type", ["komi", "nokomi", "double"])
def test_python_engine_matches_batched_engine(game_type):
    """The benchmark's one-game pure-Python engine plays the same games as the batched one."""
    rng = random.Random(3)
    for side in (2, 3, 5, 7):
        rules = Rules(side, game_type, "standard")
        engine = Engine(rules)
        for _ in range(4):
            game, state = PythonGame(rules), engine.new_games(1)
            while not game.terminal:
                legal = np.flatnonzero(engine.legal_actions(state)[0]).tolist()
                assert sorted(game.legal_actions()) == legal
                action = game.random_action(rng)
                game.step(action)
                engine.step(state, np.array([action]))
                assert game.stones == state.stones[0].tolist()
                assert game.limited == state.limited[0].tolist()
                assert game.terminal == bool(state.terminal[0])
                assert game.to_move == state.to_move[0] or game.terminal
            assert game.button == state.button[0]


def test_bench_script_quick_mode(tmp_path):
    out = tmp_path / "bench.json"
    payload = bench_engine.main(["--quick", "--sides", "3", "--batches", "1", "16",
                                 "--json", str(out)])
    saved = json.loads(out.read_text())
    assert saved["format_version"] == payload["format_version"] == 1
    engines = {(row["engine"], row["batch"]) for row in saved["rows"]}
    assert engines == {("python", 1), ("numpy", 1), ("numpy", 16)}
    assert all(row["moves_per_s"] > 0 for row in saved["rows"])


def test_runs_as_a_module_from_the_repository_root(tmp_path):
    """The documented convention, `python -m benchmarks.NAME` from the root, works."""
    out = tmp_path / "bench.json"
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_engine", "--quick", "--sides", "2",
         "--batches", "1", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr
    assert "random playouts" in completed.stdout and json.loads(out.read_text())["rows"]
