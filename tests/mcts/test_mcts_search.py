"""Batched search on hand-made positions: forced wins, visit totals, exact terminal values,
double-placement backup signs."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.mcts import NO_PARENT, SearchConfig, UniformEvaluator, search
from catena_zero.rules import BLACK, NO_ACTION, Engine, Rules
from tests.mcts.mcts_positions import (
    DOUBLE_WIN_ACTIONS,
    DOUBLE_WIN_MOVES,
    KOMI_DEEP_WIN_ACTION,
    KOMI_DEEP_WIN_MOVES,
    KOMI_WIN_ACTION,
    KOMI_WIN_MOVES,
    BlackWinsEvaluator,
    ConstantEvaluator,
    HashEvaluator,
    check_tree_invariants,
    position,
)

ALGORITHMS = ("puct", "gumbel", "uct")


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_immediate_win_is_found_with_exact_terminal_value(algorithm):
    engine, states = position("komi", KOMI_WIN_MOVES, copies=4)
    win = engine.board.parse_action(KOMI_WIN_ACTION)
    # The evaluator claims every position is good for the mover; terminal nodes must ignore it.
    evaluator = ConstantEvaluator(engine.num_actions, value=0.3)
    config = SearchConfig(algorithm=algorithm, num_simulations=24)
    output = search(engine, states, evaluator, config, np.random.default_rng(0))
    assert (output.action == win).all()
    tree = output.tree
    children = tree.children[np.arange(4), 0, win]
    assert (tree.terminal[np.arange(4), children]).all()
    assert (tree.raw_value[np.arange(4), children] == 1.0).all()
    assert np.allclose(output.q_values[:, win], 1.0)
    check_tree_invariants(tree)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_deeper_forced_win_is_preferred(algorithm):
    engine, states = position("komi", KOMI_DEEP_WIN_MOVES, copies=4)
    win = engine.board.parse_action(KOMI_DEEP_WIN_ACTION)
    config = SearchConfig(algorithm=algorithm, num_simulations=200)
    output = search(engine, states, UniformEvaluator(engine.num_actions), config,
                    np.random.default_rng(1))  # fmt: skip
    assert (output.action == win).all()
    assert (output.q_values[:, win] > 0.5).all()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_double_placement_two_stone_win(algorithm):
    engine, states = position("double", DOUBLE_WIN_MOVES, copies=4)
    assert (states.stones_left == 2).all() and (states.to_move == BLACK).all()
    wins = [engine.board.parse_action(name) for name in DOUBLE_WIN_ACTIONS]
    config = SearchConfig(algorithm=algorithm, num_simulations=160)
    output = search(engine, states, UniformEvaluator(engine.num_actions), config,
                    np.random.default_rng(2))  # fmt: skip
    assert np.isin(output.action, wins).all()
    # After the first winning stone Black moves again: that child has the same mover.
    tree = output.tree
    rows = np.arange(4)
    child = tree.children[rows, 0, output.action]
    assert (tree.mover[rows, child] == BLACK).all()
    assert (output.q_values[rows, output.action] > 0.5).all()
    check_tree_invariants(tree)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_backup_signs_follow_the_mover_in_double(algorithm):
    """With 'Black always wins' every node's mean value is +1 for Black and -1 for White."""
    engine = Engine(Rules(side=4, game_type="double"))
    states = engine.new_games(3)
    rng = np.random.default_rng(3)
    for _ in range(2):  # B, then W's first stone: White has one stone left
        engine.step(states, engine.random_actions(states, rng))
    config = SearchConfig(algorithm=algorithm, num_simulations=40)
    output = search(engine, states, BlackWinsEvaluator(engine.num_actions), config, rng)
    tree = output.tree
    for b in range(3):
        nodes = np.arange(tree.num_nodes[b])
        assert not tree.terminal[b, nodes].any()
        mean = tree.value_sums[b, nodes] / tree.visit_counts[b, nodes]
        expected = np.where(tree.mover[b, nodes] == BLACK, 1.0, -1.0)
        assert np.allclose(mean, expected)
    assert np.allclose(output.root_value, -1.0)  # White to move at the roots
    check_tree_invariants(tree)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("game_type", ["komi", "double"])
def test_visit_counts_add_up(algorithm, game_type):
    engine = Engine(Rules(side=4, game_type=game_type))
    states = engine.new_games(5)
    rng = np.random.default_rng(4)
    for _ in range(6):
        engine.step(states, engine.random_actions(states, rng))
    evaluator = HashEvaluator(engine.num_actions)
    config = SearchConfig(algorithm=algorithm, num_simulations=17)
    output = search(engine, states, evaluator, config, rng)
    assert (output.visit_counts.sum(axis=1) == 17).all()
    assert (output.tree.visit_counts[:, 0] == 18).all()
    assert evaluator.calls == 18  # one root call, then one call per simulation
    legal = engine.legal_actions(states)
    assert (output.visit_counts[~legal] == 0).all()
    assert legal[np.arange(5), output.action].all()
    assert (output.tree.parent[:, 0] == NO_PARENT).all()
    assert np.allclose(output.policy_target.sum(axis=1), 1.0)
    check_tree_invariants(output.tree)


def test_finished_games_get_no_action():
    engine = Engine(Rules(side=2))
    states = engine.new_games(3)
    rng = np.random.default_rng(5)
    finished = engine.new_games(1)
    while not finished.terminal[0]:
        engine.step(finished, engine.random_actions(finished, rng))
    states.put(np.array([1]), finished)
    for algorithm in ALGORITHMS:
        config = SearchConfig(algorithm=algorithm, num_simulations=8)
        output = search(engine, states, UniformEvaluator(engine.num_actions), config, rng)
        assert output.action[1] == NO_ACTION
        assert output.visit_counts[1].sum() == 0 and output.policy_target[1].sum() == 0
        assert (output.visit_counts[[0, 2]].sum(axis=1) == 8).all()
        engine_copy = states.copy()
        engine.step(engine_copy, output.action)  # the chosen moves are legal


def test_bad_evaluation_shape_is_refused():
    engine = Engine(Rules(side=3))
    states = engine.new_games(2)

    def broken(batch):
        evaluation = UniformEvaluator(engine.num_actions)(batch)
        evaluation.policy_logits = evaluation.policy_logits[:, :-1]
        return evaluation

    with pytest.raises(ValueError, match="policy_logits"):
        search(engine, states, broken, SearchConfig(num_simulations=2), np.random.default_rng(0))


def test_config_validation_names_the_field():
    with pytest.raises(ValueError, match="algorithm"):
        SearchConfig(algorithm="alphabeta")
    with pytest.raises(ValueError, match="num_simulations"):
        SearchConfig(num_simulations=0)
    with pytest.raises(ValueError, match="dirichlet_fraction"):
        SearchConfig(dirichlet_fraction=1.5)


def test_sample_actions_follows_the_temperature():
    from catena_zero.mcts import sample_actions

    rng = np.random.default_rng(6)
    visits = np.tile(np.array([[0, 30, 10, 0]]), (4000, 1))
    greedy = sample_actions(visits, 0.0, rng)
    assert (greedy == 1).all()
    sampled = sample_actions(visits, 1.0, rng)
    assert set(np.unique(sampled)) == {1, 2}
    assert abs((sampled == 1).mean() - 0.75) < 0.03
    flat = sample_actions(visits, 2.0, rng)  # weights sqrt(30) : sqrt(10)
    assert abs((flat == 1).mean() - np.sqrt(30) / (np.sqrt(30) + np.sqrt(10))) < 0.03
    assert sample_actions(np.zeros((1, 4)), 1.0, rng)[0] == NO_ACTION
    with pytest.raises(ValueError, match="temperature"):
        sample_actions(visits[:1], -1.0, rng)


def test_rollout_values_are_results_for_the_mover():
    from catena_zero.mcts import RolloutEvaluator

    engine, states = position("komi", KOMI_WIN_MOVES, copies=300)
    before = states.copy()
    single = RolloutEvaluator(engine, np.random.default_rng(9))(states)
    assert set(np.unique(single.value)) <= {-1.0, 0.0, 1.0}
    assert np.array_equal(states.stones, before.stones) and not states.terminal.any()
    # White (to move) wins at once when the rollout's first move is E3, one of three legal
    # moves, and sometimes otherwise: at least a third of the rollouts are White wins.
    assert (single.value == 1.0).mean() > 0.3
    averaged = RolloutEvaluator(engine, np.random.default_rng(10), rollouts=8)(states)
    assert averaged.value.shape == (300,)
    assert np.allclose(averaged.value * 8, np.round(averaged.value * 8))  # means of 8 results


def test_nan_logits_are_refused():
    engine = Engine(Rules(side=3))
    states = engine.new_games(2)

    def broken(batch):
        evaluation = UniformEvaluator(engine.num_actions)(batch)
        evaluation.policy_logits[-1, 3] = np.nan
        return evaluation

    with pytest.raises(ValueError, match=r"policy_logits\[1, 3\]"):
        search(engine, states, broken, SearchConfig(num_simulations=2), np.random.default_rng(0))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("game_type", ["komi", "double"])
def test_per_game_budgets_match_separate_searches(algorithm, game_type):
    """One search with budgets [16, 4, 0, 9, ...] gives each game exactly the search it gets
    alone with that budget (deterministic settings: no root noise)."""
    engine = Engine(Rules(side=4, game_type=game_type))
    states = engine.new_games(6)
    rng = np.random.default_rng(11)
    for _ in range(5):
        engine.step(states, engine.random_actions(states, rng))
    budgets = np.array([16, 4, 0, 9, 16, 1])
    evaluator = HashEvaluator(engine.num_actions)
    config = SearchConfig(algorithm=algorithm, num_simulations=3, gumbel_scale=0.0,
                          dirichlet_fraction=0.0)
    merged = search(engine, states, evaluator, config, np.random.default_rng(0),
                    simulations=budgets)
    assert evaluator.calls == 1 + budgets.max()  # one network call per simulation, all games
    assert (merged.visit_counts.sum(axis=1) == budgets).all()
    check_tree_invariants(merged.tree)
    for game, budget in enumerate(budgets):
        if budget == 0 and algorithm != "gumbel":
            continue  # PUCT/UCT pick by visits: a zero budget leaves only the prior
        alone_config = SearchConfig(algorithm=algorithm, num_simulations=max(int(budget), 1),
                                    gumbel_scale=0.0, dirichlet_fraction=0.0)
        alone = search(engine, states.take(np.array([game])), evaluator, alone_config,
                       np.random.default_rng(0), simulations=np.array([budget]))
        assert merged.action[game] == alone.action[0], game
        assert (merged.visit_counts[game] == alone.visit_counts[0]).all(), game
        assert np.allclose(merged.policy_target[game], alone.policy_target[0]), game
        assert np.isclose(merged.root_value[game], alone.root_value[0]), game


def test_bad_budgets_are_refused():
    engine = Engine(Rules(side=3))
    states = engine.new_games(2)
    config = SearchConfig(num_simulations=4)
    evaluator = UniformEvaluator(engine.num_actions)
    for bad in (np.array([4]), np.array([4.0, 2.0]), np.array([3, -1])):
        with pytest.raises(ValueError, match="simulations"):
            search(engine, states, evaluator, config, np.random.default_rng(0), simulations=bad)
