"""Exact endgames: the solver's values at the search's leaves, against a naive reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from catena_zero.mcts import SearchConfig, UniformEvaluator, search
from catena_zero.mcts.endgame import ExactEndgame
from catena_zero.rules import BLACK, NO_ACTION, Engine, Rules
from tests.komi.komi_reference import ReferenceGame

VARIANTS = list(itertools.product(("komi", "nokomi", "double"),
                                  ("standard", "longest", "quadratic")))


def endgame_positions(rules: Rules, games: int, max_legal: int, seed: int, komi=0):
    """(engine, states, histories): random games stopped at their first position with at
    most `max_legal` legal cells (games that end first are dropped)."""
    engine = Engine(rules)
    rng = np.random.default_rng(seed)
    states = engine.new_games(games, komi=komi)
    histories = [[] for _ in range(games)]
    done = np.zeros(games, dtype=bool)
    while True:
        done |= (states.legal_cells.sum(axis=1) <= max_legal) | states.terminal
        if done.all():
            break
        actions = np.where(done, NO_ACTION, engine.random_actions(states, rng))
        engine.step(states, actions)
        for game in np.flatnonzero(actions != NO_ACTION):
            histories[game].append(int(actions[game]))
    keep = np.flatnonzero(~states.terminal)
    return engine, states.take(keep), [histories[game] for game in keep]


@pytest.mark.parametrize("game_type,scoring", VARIANTS)
def test_exact_values_match_a_naive_reference_minimax(game_type, scoring):
    rules = Rules(side=3, game_type=game_type, scoring=scoring)
    komis = (0, 3, 8) if game_type == "komi" else (0,)
    for komi in komis:
        engine, states, histories = endgame_positions(rules, 6, 5, seed=komi, komi=komi)
        assert states.batch_size > 0
        endgame = ExactEndgame(rules)
        rows = np.arange(states.batch_size)
        value, margin = endgame.mover_values(states, rows)
        reference = ReferenceGame(rules.board.neighbours, game_type, scoring, komi)
        for game, history in enumerate(histories):
            state = reference.initial()
            for action in history:
                state = reference.play(state, action)
            black_margin = reference.minimax(state)
            sign = 1.0 if states.to_move[game] == BLACK else -1.0
            assert margin[game] == pytest.approx(sign * black_margin)
            assert value[game] == np.sign(sign * black_margin)


def test_finished_games_are_refused():
    rules = Rules(side=2)
    engine = Engine(rules)
    states = engine.new_games(1)
    rng = np.random.default_rng(0)
    while not states.terminal.all():
        engine.step(states, engine.random_actions(states, rng))
    with pytest.raises(ValueError, match="finished game"):
        ExactEndgame(rules).margins(states, np.array([0]))


def test_tables_are_dropped_past_their_limit():
    rules = Rules(side=3)
    _, states, _ = endgame_positions(rules, 8, 7, seed=1)
    endgame = ExactEndgame(rules, table_limit=10)
    first = endgame.mover_values(states, np.arange(states.batch_size))
    assert endgame.entries > 10
    again = endgame.mover_values(states, np.arange(states.batch_size))  # clears, re-solves
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])


@pytest.mark.parametrize("game_type,scoring", [("komi", "standard"), ("double", "standard"),
                                               ("komi", "longest")])
def test_search_plays_winning_moves_with_a_know_nothing_evaluator(game_type, scoring):
    """A uniform evaluator knows nothing, so a won endgame is only kept by the exact values:
    with every root action searched, the search picks a move that keeps the win."""
    rules = Rules(side=4, game_type=game_type, scoring=scoring)
    komi = 9 if game_type == "komi" else 0
    engine, states, _ = endgame_positions(rules, 24, 6, seed=3, komi=komi)
    config = SearchConfig(num_simulations=48, max_considered_actions=16, gumbel_scale=0.0,
                          exact_endgame_cells=6)
    output = search(engine, states, UniformEvaluator(engine.num_actions), config,
                    np.random.default_rng(0))
    endgame = ExactEndgame(rules)
    rows = np.arange(states.batch_size)
    before, _ = endgame.mover_values(states, rows)
    # The root's own value is the exact one, not the evaluator's 0.
    np.testing.assert_array_equal(output.tree.raw_value[:, 0], before)
    after = states.copy()
    mover = after.to_move.copy()
    engine.step(after, output.action)
    result_black = np.zeros(states.batch_size)
    ended = np.flatnonzero(after.terminal)
    if ended.size:
        result = engine.result(after.take(ended))
        result_black[ended] = np.where(result.winner == BLACK, 1.0,
                                       np.where(result.winner == 0, 0.0, -1.0))
    live = np.flatnonzero(~after.terminal)
    if live.size:
        value_live, _ = endgame.mover_values(after, live)
        result_black[live] = np.where(after.to_move[live] == BLACK, value_live, -value_live)
    kept = np.where(mover == BLACK, result_black, -result_black)  # the mover's exact outcome
    won = before > 0
    assert won.any()
    np.testing.assert_array_equal(kept[won], before[won])


def test_off_by_default_and_config_is_validated():
    assert SearchConfig().exact_endgame_cells == 0
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="exact_endgame_cells"):
            SearchConfig(exact_endgame_cells=bad)
    rules = Rules(side=3)
    engine, states, _ = endgame_positions(rules, 4, 4, seed=2)
    output = search(engine, states, UniformEvaluator(engine.num_actions),
                    SearchConfig(num_simulations=4), np.random.default_rng(0))
    np.testing.assert_array_equal(output.tree.raw_value[:, 0], 0.0)
