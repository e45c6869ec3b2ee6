"""Several leaves per tree per network call (mcts.leaf_batch): the same budgets, tree invariants
and forced wins as the one-leaf search, the Gumbel schedule's visit counts, collisions near the
end of a game, fewer network calls, deadlines and progress reports."""

from __future__ import annotations

import importlib
import time

import numpy as np
import pytest

from catena_zero.mcts import SearchConfig, UniformEvaluator, search
from catena_zero.mcts.leaf_batch import group_ranks
from catena_zero.rules import BLACK
from tests.mcts.mcts_positions import (
    DOUBLE_WIN_ACTIONS,
    DOUBLE_WIN_MOVES,
    KOMI_DEEP_WIN_ACTION,
    KOMI_DEEP_WIN_MOVES,
    KOMI_WIN_ACTION,
    KOMI_WIN_MOVES,
    HashEvaluator,
    check_tree_invariants,
    position,
    random_positions,
)

ALGORITHMS = ("gumbel", "puct", "uct")


def test_group_ranks_on_a_literal_array():
    keys = np.array([7, 3, 7, 7, 3, 9])
    order, starts, sizes = group_ranks(keys)
    assert order.tolist() == [1, 4, 0, 2, 3, 5]  # stable: earlier lanes first in a group
    assert starts.tolist() == [0, 2, 5]
    assert sizes.tolist() == [2, 3, 1]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("leaves", [2, 5, 16])
@pytest.mark.parametrize("game_type", ["komi", "double"])
def test_budgets_and_tree_invariants(algorithm, leaves, game_type):
    engine, states, _ = random_positions(4, game_type, games=3, plies=5, seed=leaves)
    budget = np.array([37, 1, 64])
    config = SearchConfig(algorithm=algorithm, num_simulations=64, leaves_per_call=leaves)
    output = search(engine, states, HashEvaluator(engine.num_actions), config,
                    np.random.default_rng(0), simulations=budget)
    assert output.visit_counts.sum(axis=1).tolist() == budget.tolist()
    assert output.tree.visit_counts[:, 0].tolist() == (budget + 1).tolist()
    assert (output.tree.num_nodes <= budget + 1).all()
    legal = engine.legal_actions(states)
    assert legal[np.arange(3), output.action].all()
    assert (output.visit_counts[~legal] == 0).all()
    check_tree_invariants(output.tree)


@pytest.mark.parametrize("leaves", [3, 8, 16])
def test_gumbel_visit_counts_follow_the_halving_schedule(leaves):
    """Sequential halving fixes how many visits the considered actions get; which actions get
    them is the search's choice. The leaf batches must keep the schedule exactly."""
    engine, states, _ = random_positions(5, "komi", games=3, plies=4, seed=11)
    budget = np.array([7, 50, 128])
    rng_seed = 3
    results = []
    for width in (1, leaves):
        config = SearchConfig(num_simulations=128, leaves_per_call=width)
        output = search(engine, states, HashEvaluator(engine.num_actions), config,
                        np.random.default_rng(rng_seed), simulations=budget)
        results.append(np.sort(output.visit_counts, axis=1))
    assert np.array_equal(results[0], results[1])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_forced_wins_are_found(algorithm):
    engine, states = position("komi", KOMI_WIN_MOVES, copies=3)
    config = SearchConfig(algorithm=algorithm, num_simulations=24, leaves_per_call=8)
    output = search(engine, states, UniformEvaluator(engine.num_actions), config,
                    np.random.default_rng(0))
    assert (output.action == engine.board.parse_action(KOMI_WIN_ACTION)).all()
    check_tree_invariants(output.tree)

    engine, states = position("komi", KOMI_DEEP_WIN_MOVES, copies=3)
    config = SearchConfig(algorithm=algorithm, num_simulations=200, leaves_per_call=8)
    output = search(engine, states, UniformEvaluator(engine.num_actions), config,
                    np.random.default_rng(1))
    win = engine.board.parse_action(KOMI_DEEP_WIN_ACTION)
    assert (output.action == win).all()
    assert (output.q_values[:, win] > 0.5).all()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_double_placement_signs_with_shared_paths(algorithm):
    engine, states = position("double", DOUBLE_WIN_MOVES, copies=2)
    wins = [engine.board.parse_action(name) for name in DOUBLE_WIN_ACTIONS]
    config = SearchConfig(algorithm=algorithm, num_simulations=160, leaves_per_call=16)
    output = search(engine, states, UniformEvaluator(engine.num_actions), config,
                    np.random.default_rng(2))
    assert np.isin(output.action, wins).all()
    child = output.tree.children[np.arange(2), 0, output.action]
    assert (output.tree.mover[np.arange(2), child] == BLACK).all()
    check_tree_invariants(output.tree)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_collisions_near_the_end_still_spend_the_budget(algorithm):
    """With three legal moves and 16 lanes, most lanes meet on the same edges: the dropped
    ones must not count, and terminal revisits must."""
    engine, states = position("komi", KOMI_WIN_MOVES, copies=2)
    evaluator = HashEvaluator(engine.num_actions)
    config = SearchConfig(algorithm=algorithm, num_simulations=100, leaves_per_call=16)
    output = search(engine, states, evaluator, config, np.random.default_rng(4))
    assert (output.visit_counts.sum(axis=1) == 100).all()
    check_tree_invariants(output.tree)


def test_fewer_network_calls_and_more_positions_per_call():
    engine, states, _ = random_positions(5, "komi", games=1, plies=3, seed=5)
    calls = {}
    for width in (1, 16):
        evaluator = HashEvaluator(engine.num_actions)
        config = SearchConfig(num_simulations=128, leaves_per_call=width)
        search(engine, states, evaluator, config, np.random.default_rng(0))
        calls[width] = evaluator.calls
    assert calls[1] == 129
    assert calls[16] <= 129 // 4  # about 128 / 16 waves, plus collisions and the root call


def test_reused_tree_continues_with_leaf_batches():
    engine, states, _ = random_positions(4, "komi", games=2, plies=2, seed=6)
    evaluator = HashEvaluator(engine.num_actions)
    config = SearchConfig(num_simulations=40, leaves_per_call=8)
    first = search(engine, states, evaluator, config, np.random.default_rng(0))
    engine.step(states, first.action)
    tree = first.reroot(first.action)
    reused = tree.visit_counts[:, 0].copy()
    second = search(engine, states, evaluator, config, np.random.default_rng(1), tree=tree)
    assert (second.tree.visit_counts[:, 0] == reused + 40).all()
    check_tree_invariants(second.tree)


def test_same_seed_same_search():
    engine, states, _ = random_positions(4, "komi", games=2, plies=3, seed=7)
    config = SearchConfig(algorithm="puct", num_simulations=48, leaves_per_call=6)
    outputs = [search(engine, states, HashEvaluator(engine.num_actions), config,
                      np.random.default_rng(9)) for _ in range(2)]
    assert np.array_equal(outputs[0].visit_counts, outputs[1].visit_counts)
    assert np.array_equal(outputs[0].action, outputs[1].action)


@pytest.mark.parametrize("leaves", [1, 8])
def test_a_passed_deadline_stops_after_one_round(leaves):
    engine, states, _ = random_positions(4, "komi", games=1, plies=2, seed=8)
    config = SearchConfig(num_simulations=200, leaves_per_call=leaves)
    output = search(engine, states, HashEvaluator(engine.num_actions), config,
                    np.random.default_rng(0), deadline=time.monotonic() - 1.0)
    assert output.visit_counts.sum() == leaves
    assert engine.legal_actions(states)[0, output.action[0]]


@pytest.mark.parametrize("leaves", [1, 8])
def test_progress_reports_grow_and_do_not_change_the_search(leaves):
    engine, states, _ = random_positions(4, "komi", games=1, plies=2, seed=9)
    config = SearchConfig(num_simulations=64, leaves_per_call=leaves)
    seen = []
    reported = search(engine, states, HashEvaluator(engine.num_actions), config,
                      np.random.default_rng(0), progress_every=0.0,
                      on_progress=lambda partial: seen.append(int(partial.visit_counts.sum())))
    quiet = search(engine, states, HashEvaluator(engine.num_actions), config,
                   np.random.default_rng(0))
    assert seen == sorted(seen) and len(seen) >= 64 // leaves - 1 and seen[-1] <= 64
    assert np.array_equal(reported.visit_counts, quiet.visit_counts)


def test_leaves_per_call_is_validated():
    with pytest.raises(ValueError, match="leaves_per_call"):
        SearchConfig(leaves_per_call=0)
    with pytest.raises(ValueError, match="leaves_per_call"):
        SearchConfig(leaves_per_call=True)


@pytest.mark.parametrize("leaves", [1, 8])
def test_trees_grow_past_their_first_capacity(leaves, monkeypatch):
    search_module = importlib.import_module("catena_zero.mcts.search")

    monkeypatch.setattr(search_module, "INITIAL_NODES", 8)
    engine, states, _ = random_positions(4, "komi", games=2, plies=2, seed=10)
    config = SearchConfig(num_simulations=100, leaves_per_call=leaves)
    grown = search(engine, states, HashEvaluator(engine.num_actions), config,
                   np.random.default_rng(0))
    monkeypatch.setattr(search_module, "INITIAL_NODES", 4096)
    whole = search(engine, states, HashEvaluator(engine.num_actions), config,
                   np.random.default_rng(0))
    assert grown.tree.capacity > 8 + 1 and whole.tree.capacity == 100 + 1  # it grew
    assert np.array_equal(grown.visit_counts, whole.visit_counts)
    check_tree_invariants(grown.tree)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_call_never_holds_two_leaves_under_one_root_move(algorithm):
    """One lane per root child a wave: below the root every subtree is searched one leaf at a
    time, as by the one-leaf search."""
    # no game ends this soon after three plies
    engine, states, _ = random_positions(6, "komi", games=1, plies=3, seed=12)
    sizes = []
    evaluator = HashEvaluator(engine.num_actions)

    def recording(batch):
        sizes.append(batch.batch_size)
        return evaluator(batch)

    config = SearchConfig(algorithm=algorithm, num_simulations=96, leaves_per_call=16)
    output = search(engine, states, recording, config, np.random.default_rng(0))
    tree = output.tree
    assert not tree.terminal[0, : tree.num_nodes[0]].any()
    assert sizes[0] == 1 and sum(sizes[1:]) == 96 and max(sizes) > 1

    def root_move(node: int) -> int:
        while tree.parent[0, node] != 0:
            node = int(tree.parent[0, node])
        return int(tree.action_from_parent[0, node])

    first = 1
    for size in sizes[1:]:  # nodes are numbered in the order their calls evaluated them
        moves = [root_move(node) for node in range(first, first + size)]
        assert len(set(moves)) == size
        first += size
