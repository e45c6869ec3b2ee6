"""The atlas-openings benchmark: games are decided by their openings (as many distinct games
as distinct openings), the opening length follows the share, the table and JSON are written,
and the command line refuses bad input in one line."""

from __future__ import annotations

import json

import numpy as np

from benchmarks.atlas_openings import distinct_rows, main, measure
from catena_zero.komi.solver_agent import SolverAgent, SolverEvaluator
from catena_zero.play.bundled import bundled_general_path


def test_distinct_rows_counts_whole_rows():
    array = np.array([[1, 2, 3], [1, 2, 3], [1, 2, 4]])
    assert distinct_rows(array) == 2
    assert distinct_rows(array[:, :2]) == 1
    assert distinct_rows(array[:, :0]) == 1  # no opening: one (empty) opening


def test_a_game_is_a_function_of_its_opening():
    """The solver as the network: after the drawn opening the search's choice is fixed, so
    the games are as many as their openings; side 2 has 1 opening move at share 0.09."""
    agent = SolverAgent()
    row = measure(lambda rules: SolverEvaluator(rules, agent), 2, 0.09, 24, 8, 2, seed=3)
    assert row["opening_moves"] == 1 and row["games"] == 24 and row["komi"] == 2
    assert 1 < row["distinct_openings"] == row["distinct_games"] <= 8  # 7 cells, the button
    assert 0 <= row["black_score"] <= 1 and row["mean_moves"] > 1


def test_the_command_writes_its_table(tmp_path, capsys):
    out = tmp_path / "openings.json"
    assert main(["--model", str(bundled_general_path()), "--sides", "2", "--shares", "0.09",
                 "0.3", "--games", "4", "--simulations", "4", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [row["opening_moves"] for row in rows] == [1, 2]
    assert all(row["distinct_games"] <= 4 for row in rows)
    assert "| distinct openings |" in capsys.readouterr().out
    assert sorted(path.name for path in tmp_path.iterdir()) == ["openings.json"]  # no temp


def test_bad_input_is_one_line(tmp_path, capsys):
    model = str(bundled_general_path())
    for argv in (["--model", model, "--sides", "11"],
                 ["--model", model, "--shares", "1.5"],
                 ["--model", model, "--sides", "2", "3", "--komi", "1", "2", "3"],
                 ["--model", str(tmp_path / "missing.pt"), "--sides", "2"]):
        assert main(argv) == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith("atlas_openings:") and "\n" not in error
