"""Score utility: (1 - w) value + w tanh((margin - centre) / scale), exact at terminal nodes,
centred on the root's expected margin, and able to rank moves when every value is flat."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.mcts import Evaluation, SearchConfig, UniformEvaluator, search
from catena_zero.rules import BLACK, Engine, GameState, Rules, opponent
from tests.mcts.mcts_positions import (
    KOMI_WIN_ACTION,
    KOMI_WIN_MOVES,
    check_tree_invariants,
    position,
)


class ScoreEvaluator:
    """Uniform logits, a constant value, and a score from the side to move's view: `base`,
    minus `bonus` when the opponent holds cell `cell` (so holding it is worth `bonus`)."""

    def __init__(self, num_actions: int, value: float = 0.0, base: float = 0.0,
                 cell: int = -1, bonus: float = 0.0) -> None:
        self.num_actions, self.value, self.base = num_actions, value, base
        self.cell, self.bonus = cell, bonus

    def __call__(self, states: GameState) -> Evaluation:
        batch_size = states.batch_size
        score = np.full(batch_size, self.base)
        if self.cell >= 0:
            holder = opponent(states.to_move)
            score = score - self.bonus * (states.stones[:, self.cell] == holder)
        return Evaluation(np.zeros((batch_size, self.num_actions), dtype=np.float32),
                          np.full(batch_size, self.value, dtype=np.float32),
                          score.astype(np.float32))


@pytest.mark.parametrize("centred", [False, True])
@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_terminal_children_hold_the_exact_margin_utility(algorithm, centred):
    engine, states = position("komi", KOMI_WIN_MOVES, copies=2)
    win = engine.board.parse_action(KOMI_WIN_ACTION)
    after = states.take(np.array([0]))
    mover = int(after.to_move[0])
    engine.step(after, np.array([win]))
    result = engine.result(after)
    assert after.terminal[0] and result.winner[0] == mover
    margin = float(result.margin[0]) * (1.0 if mover == BLACK else -1.0)
    root_score = 2.5
    config = SearchConfig(algorithm=algorithm, num_simulations=16, score_utility_weight=0.4,
                          score_utility_scale=3.0, score_utility_centered=centred)
    evaluator = ScoreEvaluator(engine.num_actions, value=0.2, base=root_score)
    output = search(engine, states, evaluator, config, np.random.default_rng(0))
    centre = root_score if centred else 0.0
    expected = 0.6 * 1.0 + 0.4 * np.tanh((margin - centre) / 3.0)
    tree = output.tree
    children = tree.children[np.arange(2), 0, win]
    assert tree.terminal[np.arange(2), children].all()
    np.testing.assert_allclose(tree.raw_value[np.arange(2), children], expected)
    # The root's own utility: its score term is 0 when centred on itself.
    root_term = 0.0 if centred else np.tanh(root_score / 3.0)
    np.testing.assert_allclose(tree.raw_value[:, 0], 0.6 * 0.2 + 0.4 * root_term)
    check_tree_invariants(tree)


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_the_score_term_ranks_moves_when_every_value_is_flat(algorithm):
    engine = Engine(Rules(side=3))
    states = engine.new_games(3, komi=5)
    legal = engine.legal_actions(states)[0]
    cell = int(np.flatnonzero(legal[: engine.board.num_cells])[5])  # not first in tie-breaks
    evaluator = ScoreEvaluator(engine.num_actions, cell=cell, bonus=8.0)
    flat = SearchConfig(algorithm=algorithm, num_simulations=40, gumbel_scale=0.0,
                        dirichlet_fraction=0.0)
    assert (search(engine, states, evaluator, flat, np.random.default_rng(0)).action
            != cell).all()
    scored = SearchConfig(algorithm=algorithm, num_simulations=40, gumbel_scale=0.0,
                          dirichlet_fraction=0.0, score_utility_weight=0.3)
    output = search(engine, states, evaluator, scored, np.random.default_rng(0))
    assert (output.action == cell).all()
    assert (output.q_values[:, cell] > 0).all()


def test_a_score_utility_without_scores_is_refused():
    engine = Engine(Rules(side=3))
    states = engine.new_games(2, komi=5)
    config = SearchConfig(num_simulations=4, score_utility_weight=0.5)
    with pytest.raises(ValueError, match="needs Evaluation.score"):
        search(engine, states, UniformEvaluator(engine.num_actions), config,
               np.random.default_rng(0))


def test_score_utility_settings_are_validated():
    with pytest.raises(ValueError, match="score_utility_weight"):
        SearchConfig(score_utility_weight=1.5)
    with pytest.raises(ValueError, match="score_utility_scale"):
        SearchConfig(score_utility_scale=0.0)
