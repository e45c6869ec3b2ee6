"""Empirical and agent fair-komi estimates, validated on side 2 against the exact solver."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.arena.agents import SearchAgent, UCTAgent
from catena_zero.komi.config import NetworkEstimateConfig, SweepConfig
from catena_zero.komi.estimate import agent_fair_komi
from catena_zero.komi.exact import solver_for
from catena_zero.komi.opening import opening_sweep, symmetry_orbits
from catena_zero.komi.solver_agent import SolverAgent, SolverEvaluator
from catena_zero.komi.sweep import fit_logistic, fit_table, run_sweep, sweep_komi
from catena_zero.mcts import SearchConfig
from catena_zero.rules import Rules, get_board


def test_logistic_fit_recovers_a_known_fair_komi():
    rng = np.random.default_rng(3)
    komi = np.arange(16)
    games = np.full(16, 400)
    points = rng.binomial(400, 1 / (1 + np.exp(-0.9 * (6.3 - komi))))
    fit = fit_logistic(komi, points, games)
    assert not fit.separated
    assert fit.low < 6.3 < fit.high and fit.high - fit.low < 0.6
    assert abs(fit.fair_komi - 6.3) < 0.2 and 0.6 < fit.slope < 1.2


def test_logistic_fit_of_a_clean_step_is_the_gap_midpoint():
    fit = fit_logistic([0, 1, 2, 3, 4], [8, 8, 0, 0, 0], [8] * 5)
    assert fit.separated and (fit.fair_komi, fit.low, fit.high) == (1.5, 1.0, 2.0)


def test_logistic_fit_outside_the_swept_range_is_nan_with_a_one_sided_interval():
    fit = fit_logistic([0, 1, 2], [5, 5, 5], [5, 5, 5])
    assert np.isnan(fit.fair_komi) and fit.low == 2 and fit.high == np.inf


@pytest.mark.parametrize("points,games", [([1, 2], [2, 1]), ([-1], [3]), ([1], [0])])
def test_logistic_fit_rejects_bad_counts(points, games):
    with pytest.raises(ValueError, match="points|games"):
        fit_logistic(list(range(len(points))), points, games)


@pytest.mark.parametrize("scoring", ["standard", "quadratic"])
def test_side2_perfect_self_play_recovers_the_exact_fair_komi_exactly(scoring):
    """Two solver-backed players (random among optimal moves): Black wins exactly below
    the exact fair komi, so the empirical estimate must equal the solver's value."""
    rules = Rules(side=2, scoring=scoring)
    exact = solver_for(rules).value()
    komi_values = range(max(0, int(exact) - 3), int(exact) + 4)
    table = sweep_komi(rules, SolverAgent(), komi_values, games_per_komi=6, seed=5)
    np.testing.assert_array_equal(table.black_score, (table.komi < exact).astype(float))
    fit = fit_table(table)
    assert fit.separated and fit.fair_komi == exact
    assert fit.low < exact < fit.high


def test_side2_uct_self_play_matches_the_exact_fair_komi():
    """UCT with 200 playouts is near-perfect on 7 cells: its sweep brackets the exact
    value 2.5 between the same two integers as the solver."""
    rules = Rules(side=2)
    exact = solver_for(rules).value()
    table = run_sweep(rules, UCTAgent(200), SweepConfig(komi_values=[1, 2, 3, 4],
                                                       games_per_komi=8, seed=0))
    fit = fit_table(table)
    assert abs(fit.fair_komi - exact) <= 0.25
    assert fit.low <= exact <= fit.high


def test_side2_agent_estimate_with_an_exact_evaluator_is_exact():
    """The bisection over the komi input at the empty board, fed the exact value."""
    rules = Rules(side=2)
    exact = solver_for(rules).value()
    agent = SearchAgent(SolverEvaluator(rules), SearchConfig(num_simulations=8))
    estimate = agent_fair_komi(rules, agent, NetworkEstimateConfig(simulations=16))
    assert estimate["network_fair_komi"] == exact
    assert int(exact) <= estimate["search_fair_komi"] <= int(exact) + 1


def test_agent_estimate_is_skipped_without_komi_or_evaluator():
    config = NetworkEstimateConfig()
    assert agent_fair_komi(Rules(side=2, game_type="double"), UCTAgent(4), config) == {}
    assert agent_fair_komi(Rules(side=2), SolverAgent(), config) == {}


def test_symmetry_orbits_of_side3_are_the_four_cell_classes():
    orbit = symmetry_orbits(get_board(3))
    assert sorted(np.bincount(orbit).tolist()) == [1, 6, 6, 6]


def test_side2_opening_sweep_with_perfect_players_follows_the_solver():
    rules = Rules(side=2, game_type="nokomi")
    values = solver_for(rules).action_values()
    table = opening_sweep(rules, SolverAgent(), games_per_cell=4, seed=0)
    expected = np.array([1.0 if values[cell] > 0 else 0.0 for cell in table.cell])
    np.testing.assert_array_equal(table.black_score, expected)
    assert table.games.tolist() == [4] * 7 and list(table.name[:2]) == ["A1", "A2"]


def test_sweep_rejects_komi_outside_the_range():
    with pytest.raises(ValueError, match="komi 16"):
        sweep_komi(Rules(side=2), SolverAgent(), [3, 16], games_per_komi=2, seed=0)


def test_quadratic_default_grid_bisects_down_to_the_exact_fair_komi():
    """Quadratic komi runs 0..1000: the default grid refines around the crossing until
    the bracket is one komi wide, so perfect players recover the exact 8.5 on side 2."""
    rules = Rules(side=2, scoring="quadratic")
    table = run_sweep(rules, SolverAgent(), SweepConfig(games_per_komi=2))
    assert len(table.komi) <= SweepConfig().max_grid_points and table.komi.max() == 1000
    assert fit_table(table).fair_komi == solver_for(rules).value() == 8.5


def test_interpolated_crossing():
    from catena_zero.komi.sweep import interpolated_crossing

    assert interpolated_crossing([7, 8, 9, 10], [0.6, 0.8, 0.75, 0.25]) == 9.5
    assert np.isnan(interpolated_crossing([0, 1], [0.9, 0.6]))
