"""Tree reuse between moves, and the one-game-at-a-time PUCT agreeing with the batched one."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.mcts import SearchConfig, UniformEvaluator, search, single_game_search
from catena_zero.rules import NO_ACTION
from tests.mcts.mcts_positions import HashEvaluator, check_tree_invariants, random_positions


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
@pytest.mark.parametrize("game_type", ["komi", "double"])
def test_reroot_keeps_the_played_subtree(algorithm, game_type):
    engine, states, rng = random_positions(4, game_type, games=4, plies=3, seed=11)
    evaluator = HashEvaluator(engine.num_actions)
    config = SearchConfig(algorithm=algorithm, num_simulations=24)
    first = search(engine, states, evaluator, config, rng)
    rows = np.arange(4)
    played = first.action
    child = first.tree.children[rows, 0, played]
    kept_visits = first.tree.visit_counts[rows, child]
    assert (kept_visits >= 1).all()

    actions = played.copy()
    actions[3] = NO_ACTION  # game 3 starts over: its tree is dropped
    tree = first.reroot(actions)
    assert tree.num_nodes[3] == 0 and (tree.num_nodes[:3] >= 1).all()
    assert np.array_equal(tree.visit_counts[:3, 0], kept_visits[:3])
    check_tree_invariants(tree)

    engine.step(states, played)
    second = search(engine, states, evaluator, config, rng, tree=tree)
    assert np.array_equal(second.tree.visit_counts[:3, 0], kept_visits[:3] + 24)
    assert (second.visit_counts[:3].sum(axis=1) == kept_visits[:3] + 23).all()
    assert second.visit_counts[3].sum() == 24
    check_tree_invariants(second.tree)
    legal = engine.legal_actions(states)
    assert legal[rows, second.action].all()


def test_reuse_on_a_different_position_is_refused():
    engine, states, rng = random_positions(3, "komi", games=2, plies=2, seed=12)
    config = SearchConfig(algorithm="puct", num_simulations=8)
    output = search(engine, states, UniformEvaluator(engine.num_actions), config, rng)
    tree = output.reroot(output.action)
    with pytest.raises(ValueError, match="game 0"):
        search(engine, states, UniformEvaluator(engine.num_actions), config, rng, tree=tree)
    with pytest.raises(ValueError, match="out of range"):
        output.reroot(np.array([999, 0]))


def test_reroot_drops_subtrees_over_the_node_limit():
    engine, states, rng = random_positions(3, "komi", games=2, plies=1, seed=13)
    config = SearchConfig(algorithm="puct", num_simulations=30, tree_reuse_max_nodes=2)
    output = search(engine, states, UniformEvaluator(engine.num_actions), config, rng)
    tree = output.reroot(output.action)
    child = output.tree.children[np.arange(2), 0, output.action]
    sizes = output.tree._descendants_of(child).sum(axis=1)
    assert ((tree.num_nodes == 0) == (sizes > 2)).all()


@pytest.mark.parametrize("game_type", ["komi", "double"])
def test_single_game_puct_agrees_with_batched_puct(game_type):
    engine, states, rng = random_positions(3, game_type, games=3, plies=2, seed=14)
    config = SearchConfig(algorithm="puct", num_simulations=40, dirichlet_fraction=0.0)
    evaluator = HashEvaluator(engine.num_actions)
    batched = search(engine, states, evaluator, config, rng)
    for game in range(3):
        single = single_game_search(engine, states.take(np.array([game])), evaluator, config, rng)
        assert np.array_equal(single.visit_counts, batched.visit_counts[game])
        assert single.action == batched.action[game]
        assert np.isclose(single.root_value, batched.root_value[game], atol=1e-5)
