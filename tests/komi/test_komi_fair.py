"""The self-play fair komi: a search's balance against itself, one sweep over the komi range."""

from __future__ import annotations

import numpy as np

from catena_zero.komi.exact import solver_for
from catena_zero.komi.fair import SelfPlayBalance, selfplay_fair_komi
from catena_zero.komi.solver_agent import SolverEvaluator
from catena_zero.mcts import SearchConfig, UniformEvaluator
from catena_zero.rules import Rules


def test_a_search_on_exact_values_balances_at_the_exact_fair_komi() -> None:
    """Side 2: with the solver's values the search plays perfectly, Black wins exactly below
    the exact fair komi (2.5), and the fit's crossing is that gap's midpoint."""
    rules = Rules(side=2)
    balance = selfplay_fair_komi(rules, SolverEvaluator(rules), SearchConfig(num_simulations=8),
                                 games_per_komi=2, seed=0)
    exact = solver_for(rules).value()
    assert balance.fair_komi == exact
    assert balance.black_score == {komi: float(komi < exact) for komi in range(16)}
    assert balance.low < exact < balance.high


def test_the_report_covers_the_whole_range_and_stays_inside_it() -> None:
    rules = Rules(side=2)
    balance = selfplay_fair_komi(rules, UniformEvaluator(rules.board.num_actions),
                                 SearchConfig(num_simulations=2, gumbel_scale=0.0), 3, seed=1)
    assert isinstance(balance, SelfPlayBalance)
    assert sorted(balance.black_score) == list(range(16)) and balance.games_per_komi == 3
    assert 0.0 <= balance.fair_komi <= 15.0 and np.isfinite(balance.slope)
    assert set(balance.to_dict()) == {"fair_komi", "low", "high", "slope", "games_per_komi",
                                      "black_score"}
