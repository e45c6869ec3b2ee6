"""`catena-zero evaluate endgame`: every small position of the games is judged against the
exact solver."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from catena_zero.cli.main import main
from catena_zero.evaluate.endgame import judge_game, summarise
from catena_zero.mcts.endgame import ExactEndgame
from catena_zero.mcts.evaluation import Evaluation
from catena_zero.rules import BLACK, Engine, Rules


def test_endgame_accuracy_judges_every_small_position(tiny_run: Path, tmp_path: Path,
                                                      capsys) -> None:
    out = tmp_path / "endgame.json"
    assert main(["evaluate", "endgame", f"run_dir={tiny_run}", "games=4", "opponents=[random]",
                 "komi=3", "max_legal=5", f"json={out}"]) == 0
    report = json.loads(out.read_text())
    table = report["table"]
    assert table and all(1 <= line["legal_cells"] <= 5 for line in table)
    assert all(0.0 <= line["value_sign_agrees"] <= 1.0 for line in table)
    assert {line["to_move"] for line in table} <= {"net", "opponent"}
    # One entry per game that reached a position with at most 5 legal cells.
    assert 1 <= sum(report["transitions"].values()) <= 4
    assert "sign agrees" in capsys.readouterr().out
    assert main(["evaluate", "endgame", f"run_dir={tiny_run}", "games=3"]) == 2
    assert "games must be an even number" in capsys.readouterr().err


def level_evaluator(states) -> Evaluation:
    """Uniform policy, value 0 and score 1 everywhere."""
    batch, actions = states.batch_size, states.legal_cells.shape[1] + 1
    return Evaluation(np.zeros((batch, actions), np.float32), np.zeros(batch, np.float32),
                      np.ones(batch, np.float32))


def test_a_judged_position_holds_the_solvers_value_and_margin() -> None:
    """Rows follow the side to move; the first small position's result is the net's."""
    rules = Rules(side=2)
    engine, endgame = Engine(rules), ExactEndgame(rules)
    rng = np.random.default_rng(0)
    states, actions = engine.new_games(1, komi=2), []
    while not states.terminal[0]:
        action = int(engine.random_actions(states, rng)[0])
        actions.append(action)
        engine.step(states, np.array([action]))
    rows, first = judge_game(engine, level_evaluator, endgame, actions, 2, BLACK, max_legal=4)
    assert rows and first in (-1.0, 0.0, 1.0)
    assert all(legal <= 4 and exact in (-1.0, 0.0, 1.0) and value == 0.0 and score == 1.0
               for legal, _, value, exact, score, _ in rows)
    first_row = rows[0]
    assert first == first_row[3] * (1.0 if first_row[1] else -1.0)
    table = summarise(rows)
    assert sum(line["positions"] for line in table) == len(rows)
    # Score error: |1 - exact margin| averaged per group.
    margins = [abs(1.0 - margin) for *_, margin in rows]
    assert sum(line["score_abs_error"] * line["positions"] for line in table) == (
        pytest.approx(sum(margins)))
