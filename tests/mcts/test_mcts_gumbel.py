"""Gumbel AlphaZero pieces: the halving schedule, the improved policy on a toy bandit."""

from __future__ import annotations

import numpy as np

from catena_zero.mcts import Evaluation, SearchConfig, search
from catena_zero.mcts.gumbel import considered_visit_table
from catena_zero.rules import Engine, Rules


def test_considered_visit_table_matches_sequential_halving():
    table = considered_visit_table(4, 8)
    # Four actions once each, then the best two once more, then the best one... (mctx).
    assert table[4].tolist() == [0, 0, 0, 0, 1, 1, 2, 2]
    assert table[1].tolist() == list(range(8))
    assert table[2].tolist() == [0, 0, 1, 1, 2, 2, 3, 3]


class BanditEvaluator:
    """Root: the empty side-3 board with fixed prior logits. A child reached by action a is
    worth q[a] to the player who chose it (value -q[a] for the side to move there)."""

    def __init__(self, engine: Engine, logits: np.ndarray, q_values: np.ndarray) -> None:
        self.engine, self.logits, self.q_values = engine, logits, q_values

    def __call__(self, states) -> Evaluation:
        batch_size = states.batch_size
        button = self.engine.board.button_action
        placed = np.where(states.stones.any(axis=1), np.argmax(states.stones != 0, axis=1), button)
        value = np.where(states.move_number == 0, 0.0, -self.q_values[placed])
        logits = np.broadcast_to(self.logits, (batch_size, self.logits.size)).copy()
        return Evaluation(logits.astype(np.float32), value.astype(np.float32))


def test_improved_policy_is_a_distribution_that_improves_a_bandit():
    engine = Engine(Rules(side=3))
    num_actions = engine.num_actions
    rng = np.random.default_rng(7)
    logits = rng.normal(size=num_actions)
    q_values = rng.uniform(-1, 1, size=num_actions)
    states = engine.new_games(64)
    legal = engine.legal_actions(states)
    # As many simulations as considered actions: every considered child is evaluated once,
    # so its Q is exactly q[a] and the search is a pure bandit.
    config = SearchConfig(algorithm="gumbel", num_simulations=8, max_considered_actions=8)
    output = search(engine, states, BanditEvaluator(engine, logits, q_values), config, rng)

    target = output.policy_target.astype(np.float64)
    assert (target >= 0).all() and np.allclose(target.sum(axis=1), 1.0)
    assert (target[~legal] == 0).all()
    visited = output.visit_counts > 0
    assert (output.visit_counts.sum(axis=1) == 8).all() and (visited.sum(axis=1) == 8).all()
    assert np.allclose(output.q_values[visited], np.broadcast_to(q_values, visited.shape)[visited])

    prior = output.prior.astype(np.float64)
    expected_prior_q = (prior * q_values).sum(axis=1)
    expected_improved_q = (target * q_values).sum(axis=1)
    assert (expected_improved_q > expected_prior_q).all()
    # The chosen action is, on average, better than a draw from the prior.
    assert q_values[output.action].mean() > expected_prior_q.mean() + 0.2
    # Among the visited actions the played one has the best g + logits + sigma(q); with the
    # noise switched off it is the best visited Q once sigma dominates the logits.
    sharp = SearchConfig(algorithm="gumbel", num_simulations=8, max_considered_actions=8,
                         gumbel_scale=0.0, c_scale=10.0)  # fmt: skip
    evaluator = BanditEvaluator(engine, logits, q_values)
    output = search(engine, states.take(np.array([0])), evaluator, sharp, rng)
    visited_actions = np.flatnonzero(output.visit_counts[0])
    assert output.action[0] == visited_actions[np.argmax(q_values[visited_actions])]


def test_gumbel_without_noise_is_deterministic():
    engine = Engine(Rules(side=3))
    states = engine.new_games(2)
    rng_logits = np.random.default_rng(8)
    logits = rng_logits.normal(size=engine.num_actions)
    q_values = rng_logits.uniform(-1, 1, size=engine.num_actions)
    evaluator = BanditEvaluator(engine, logits, q_values)
    config = SearchConfig(algorithm="gumbel", num_simulations=16, gumbel_scale=0.0)
    first = search(engine, states, evaluator, config, np.random.default_rng(1))
    second = search(engine, states, evaluator, config, np.random.default_rng(2))
    assert (first.action == second.action).all()
    assert np.array_equal(first.visit_counts, second.visit_counts)
