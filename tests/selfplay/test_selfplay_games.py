"""Batched self-play: game counts, recorded positions and their targets, the network bridge."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from catena_zero.data import Samples
from catena_zero.komi.fair import estimate_fair_komi
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.evaluation import UniformEvaluator
from catena_zero.network import NetworkConfig, PolicyValueNet
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Engine, Rules
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.selfplay.evaluator import NetworkEvaluator
from catena_zero.selfplay.selfplay import SelfPlay

torch.set_num_threads(1)


def _selfplay(engine, evaluate_fn, tree_reuse: bool = False, **overrides) -> SelfPlay:
    config = SelfPlayConfig(**({"games_in_batch": 4, "full_simulations": 4,
                                "cheap_simulations": 2, "augment_symmetries": False,
                                "tree_reuse": tree_reuse} | overrides))
    search_config = SearchConfig(max_considered_actions=4)
    return SelfPlay(engine, evaluate_fn, search_config, config)


def test_plays_exactly_the_requested_games_with_a_full_batch() -> None:
    engine = Engine(Rules(side=3))
    evaluator = UniformEvaluator(engine.rules.board.num_actions)
    samples, stats = _selfplay(engine, evaluator).play_games(11, np.random.default_rng(0))
    assert stats.games == 11 and len(stats.game_lengths) == 11
    assert isinstance(samples, Samples) and len(samples) == stats.positions
    assert 0 < stats.positions < stats.moves == sum(stats.game_lengths)
    assert stats.black_wins + stats.draws <= stats.games
    np.testing.assert_allclose(samples.policy_target.sum(axis=1), 1.0, atol=1e-4)
    assert not (samples.policy_target * ~samples.legal_mask).any()
    # Targets agree with each other: a won position has a positive margin for the mover.
    won = samples.value_target[:, 0] == 1
    lost = samples.value_target[:, 2] == 1
    assert (samples.score_target[won] > 0).all() and (samples.score_target[lost] < 0).all()


def test_every_move_full_search_records_every_position() -> None:
    engine = Engine(Rules(side=3))
    evaluator = UniformEvaluator(engine.rules.board.num_actions)
    selfplay = _selfplay(engine, evaluator, full_search_probability=1.0, augment_symmetries=True,
                         symmetry_copies=3)
    samples, stats = selfplay.play_games(5, np.random.default_rng(1))
    assert stats.positions == stats.moves
    assert len(samples) == 3 * stats.moves


def test_same_seed_same_games() -> None:
    engine = Engine(Rules(side=3))
    evaluator = UniformEvaluator(engine.rules.board.num_actions)
    first, first_stats = _selfplay(engine, evaluator).play_games(6, np.random.default_rng(7))
    second, second_stats = _selfplay(engine, evaluator).play_games(6, np.random.default_rng(7))
    assert first.equals(second)
    assert first_stats.game_lengths == second_stats.game_lengths


def test_double_placement_games_finish() -> None:
    engine = Engine(Rules(side=3, game_type="double"))
    evaluator = UniformEvaluator(engine.rules.board.num_actions)
    samples, stats = _selfplay(engine, evaluator).play_games(6, np.random.default_rng(2))
    assert stats.games == 6 and set(stats.komis) == {0}
    assert len(samples) == stats.positions


def test_network_evaluator_one_call_per_evaluation() -> None:
    engine = Engine(Rules(side=3))
    board = engine.rules.board
    torch.manual_seed(0)
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index,
                         NetworkConfig(blocks=1, channels=8, global_pool_channels=4,
                                       policy_head_channels=4, value_head_channels=4,
                                       value_hidden=8))
    evaluator = NetworkEvaluator(net, engine, "cpu")
    states = engine.new_games(5, komi=np.arange(5))
    evaluation = evaluator(states)
    assert evaluator.calls == 1 and evaluator.positions == 5
    evaluation.check(5, board.num_actions)
    assert evaluation.ownership.shape == (5, board.num_cells)
    assert (np.abs(evaluation.value) <= 1).all()
    komi = estimate_fair_komi(engine, evaluator)
    low, high = engine.rules.komi_range
    assert low <= komi <= high
    samples, stats = _selfplay(engine, evaluator).play_games(4, np.random.default_rng(3))
    assert stats.games == 4 and len(samples) == stats.positions
    assert evaluator.positions > stats.moves  # several evaluations per move


def test_bad_game_count() -> None:
    engine = Engine(Rules(side=3))
    with pytest.raises(ValueError, match="num_games"):
        _selfplay(engine, UniformEvaluator(8)).play_games(0, np.random.default_rng(0))


@pytest.mark.parametrize("game_type", ["komi", "double"])
def test_tree_reuse_carries_each_game_tree_to_its_next_move(monkeypatch, game_type) -> None:
    """With selfplay.tree_reuse every search but a game's first starts from the subtree of the
    move played; a restarted slot starts afresh (the search refuses a tree rooted elsewhere,
    so a stale tree would raise)."""
    import catena_zero.selfplay.selfplay as selfplay_module

    reused_rows, searched_rows, extra_visits = [], [], []
    real_search = selfplay_module.search

    def spy(engine, states, evaluate_fn, config, rng, tree=None, *, simulations=None):
        searched = int((simulations > 0).sum())
        reused = 0 if tree is None else int(((tree.num_nodes > 0) & (simulations > 0)).sum())
        output = real_search(engine, states, evaluate_fn, config, rng, tree=tree,
                             simulations=simulations)
        searched_rows.append(searched)
        reused_rows.append(reused)
        extra_visits.append(int((output.visit_counts.sum(axis=1) > simulations).sum()))
        return output

    monkeypatch.setattr(selfplay_module, "search", spy)
    engine = Engine(Rules(side=3, game_type=game_type))
    evaluator = UniformEvaluator(engine.rules.board.num_actions)
    selfplay = _selfplay(engine, evaluator, tree_reuse=True, full_simulations=16,
                         cheap_simulations=8)
    samples, stats = selfplay.play_games(9, np.random.default_rng(5))
    assert stats.games == 9 and len(samples) == stats.positions > 0
    assert stats.moves == sum(stats.game_lengths) == sum(searched_rows)
    np.testing.assert_allclose(samples.policy_target.sum(axis=1), 1.0, atol=1e-4)
    assert not (samples.policy_target * ~samples.legal_mask).any()
    # Many moves start from a reused subtree (not all: a move sampled at temperature may be
    # one the search never visited), most of which carry root visits beyond the budget (a
    # subtree that is a bare leaf has none yet).
    assert sum(reused_rows) > stats.moves // 3
    assert sum(reused_rows) // 2 < sum(extra_visits) <= sum(reused_rows)
    # Only the first move of each game is searched from scratch (or after a dropped subtree).
    assert sum(searched_rows) - sum(reused_rows) >= stats.games


def test_tree_reuse_same_seed_same_games() -> None:
    engine = Engine(Rules(side=3))
    evaluator = UniformEvaluator(engine.rules.board.num_actions)
    runs = [_selfplay(engine, evaluator, tree_reuse=True).play_games(6, np.random.default_rng(7))
            for _ in range(2)]
    assert runs[0][0].equals(runs[1][0])
    assert runs[0][1].game_lengths == runs[1][1].game_lengths


def test_self_play_with_exact_endgames_plays_the_solved_result() -> None:
    """Side 2 is small enough to solve from the empty board, so with exact endgames over
    every cell, no noise and no temperature, each game ends in the exact result: Black wins
    exactly when the exact margin (komi 0) beats the komi."""
    from catena_zero.komi.exact import solver_for

    rules = Rules(side=2)
    margin = solver_for(rules).value()
    engine = Engine(rules)
    for komi in (int(margin) - 1, int(margin) + 1):
        config = SelfPlayConfig(games_in_batch=4, full_simulations=16, cheap_simulations=16,
                                full_search_probability=1.0, temperature_start=0.0,
                                augment_symmetries=False, fixed_komi=komi)
        search_config = SearchConfig(max_considered_actions=8, gumbel_scale=0.0,
                                     exact_endgame_cells=7)
        selfplay = SelfPlay(engine, UniformEvaluator(engine.rules.board.num_actions),
                            search_config, config)
        _, stats = selfplay.play_games(6, np.random.default_rng(komi))
        assert stats.games == 6 and stats.draws == 0
        assert stats.black_wins == (6 if margin > komi else 0)
