"""solve_exact: fair komi per variant, optimal moves, and the JSON cache."""

from __future__ import annotations

import json

import pytest

from catena_zero.komi.config import SolveConfig
from catena_zero.komi.exact import FORMAT_VERSION, format_report, load_cache, solve_exact
from catena_zero.rules import Rules


def test_side2_standard_report(tmp_path):
    report = solve_exact(Rules(side=2), SolveConfig(cache_path=str(tmp_path / "c.json")))
    assert report["margin"] == 2.5 and report["fair_komi"] == 2.5
    assert report["black_wins_up_to_komi"] == 2
    assert report["move_values"]["button"] == -2.5
    assert set(report["optimal_moves"]) == {"A1", "A2", "B1", "B2", "B3", "C2", "C3"}
    assert max(report["move_values"].values()) == report["margin"]
    assert "exact fair komi = 2.5" in format_report(report)


@pytest.mark.parametrize("game_type", ["komi", "nokomi", "double"])
@pytest.mark.parametrize("scoring", ["standard", "longest", "quadratic"])
def test_side2_every_variant_is_consistent(game_type, scoring):
    report = solve_exact(Rules(side=2, game_type=game_type, scoring=scoring),
                         SolveConfig(cache_path=""))
    values = report["move_values"]
    if game_type == "nokomi":
        closest = min(abs(v) for v in values.values())
        assert all(abs(values[m]) == closest for m in report["optimal_moves"])
    else:
        assert max(values.values()) == report["margin"]
    if game_type != "komi":
        assert report["fair_komi"] is None
    elif scoring == "longest":
        # Black makes the only ribbon, and komi is only added to a White ribbon (ruling 5)
        assert set(report["margins_by_komi"].values()) == {3.0}
        assert report["fair_komi"] is None and report["black_wins_up_to_komi"] == 15
    else:
        assert report["fair_komi"] == report["margin"]


def test_cache_is_reused_and_versioned(tmp_path):
    path = tmp_path / "cache.json"
    first = solve_exact(Rules(side=2, game_type="double"), SolveConfig(cache_path=str(path)))
    data = json.loads(path.read_text())
    assert data["format_version"] == FORMAT_VERSION
    data["results"]["side2-double-standard"]["margin"] = 99.0
    path.write_text(json.dumps(data))
    again = solve_exact(Rules(side=2, game_type="double"), SolveConfig(cache_path=str(path)))
    assert again["margin"] == 99.0 and first["margin"] == -3.0
    fresh = solve_exact(Rules(side=2, game_type="double"),
                        SolveConfig(cache_path=str(path), use_cache=False))
    assert fresh["margin"] == -3.0 and load_cache(path)["side2-double-standard"]["margin"] == -3
    path.write_text(json.dumps({"format_version": 0, "results": {}}))
    with pytest.raises(ValueError, match="format_version"):
        load_cache(path)


def test_budget_stops_a_solve_that_does_not_fit():
    from catena_zero.mcts.solver import SolverBudgetExceeded

    with pytest.raises(SolverBudgetExceeded, match="100 positions"):
        solve_exact(Rules(side=3), SolveConfig(cache_path="", max_positions=100))


@pytest.mark.slow
def test_side3_standard_exact_value():
    report = solve_exact(Rules(side=3), SolveConfig(cache_path=""))
    assert report["margin"] == 10.5 and report["fair_komi"] == 10.5
    assert set(report["optimal_moves"]) == {"A2", "B1", "B4", "C3", "D2", "D5", "E4"}


def test_a_solve_reports_its_progress_on_the_stream() -> None:
    import io

    from catena_zero.komi.config import SolveConfig
    from catena_zero.komi.exact import SolveProgress, solve_exact
    from catena_zero.rules import Rules

    stream = io.StringIO()
    report = solve_exact(Rules(side=2, scoring="longest"),
                         SolveConfig(cache_path="", use_cache=False, move_values=False),
                         SolveProgress(stream, interval=0.0), progress_every=8)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "solve side2-komi-longest at komi 0: started"
    # Longest scoring solves every komi of the range, each announced.
    low, high = Rules(side=2, scoring="longest").komi_range
    assert sum(line.endswith("started") for line in lines) == 1 + high - low + 1
    progress = [line for line in lines if "nodes/s" in line]
    assert progress and "positions" in progress[0] and "peak RSS" in progress[0]
    assert report["fair_komi"] is not None or report["black_wins_up_to_komi"] is not None


def test_the_solver_calls_progress_every_so_many_nodes() -> None:
    from catena_zero.komi.exact import solver_for
    from catena_zero.rules import Rules

    calls: list[tuple[int, int]] = []
    solver = solver_for(Rules(side=2), progress=lambda *told: calls.append(told),
                        progress_every=5)
    solver.value()
    assert calls and [nodes for nodes, _ in calls] == list(range(5, solver.nodes + 1, 5))
    assert all(positions <= len(solver.table) for _, positions in calls)
