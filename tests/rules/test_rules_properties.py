"""Hypothesis property tests of the fast engine on random batched games."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catena_zero.rules import BLACK, NO_ACTION, WHITE, Engine, Rules, get_board
from tests.rules.reference_engine import GAME_TYPES, SCORINGS, RefGame

BATCH = 6


def komi_for(engine_rules: Rules, rng: np.random.Generator) -> np.ndarray:
    low, high = engine_rules.komi_range
    return rng.integers(low, high + 1, size=BATCH)


def final_groups(side: int, stones: np.ndarray) -> list[list[int]]:
    ref = RefGame(side)
    ref.stones = stones.astype(int).tolist()
    return ref.groups()


@settings(max_examples=25, deadline=None)
@given(side=st.integers(2, 7), game_type=st.sampled_from(GAME_TYPES),
       scoring=st.sampled_from(SCORINGS), seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_the_invariants(side, game_type, scoring, seed):
    rules = Rules(side=side, game_type=game_type, scoring=scoring)
    engine = Engine(rules)
    rng = np.random.default_rng(seed)
    state = engine.new_games(BATCH, komi=komi_for(rules, rng))
    cells = rules.board.num_cells
    placements = np.zeros(BATCH, dtype=np.int64)
    steps = 0
    while not state.terminal.all():
        legal_before = state.legal_cells.copy()
        occupied_before = state.stones != 0
        limited_before = state.limited.copy()
        colours_before = state.stones.copy()
        actions = engine.random_actions(state, rng)
        mask = engine.legal_actions(state)
        assert ((actions == NO_ACTION) == state.terminal).all()
        live = np.flatnonzero(actions != NO_ACTION)
        assert mask[live, actions[live]].all(), "random_actions chose an illegal action"
        placements += (actions != NO_ACTION) & (actions < cells)
        engine.step(state, actions)
        steps += 1
        # Legality is monotone: a cell that is illegal never becomes legal again.
        assert not (state.legal_cells & ~legal_before).any()
        # Stones are never removed, and the new one is the only new stone.
        occupied = state.stones != 0
        assert not (occupied_before & ~occupied).any()
        assert (occupied.sum(axis=1) == placements).all(), "stone count != placements"
        # A limited ribbon never changes again.
        assert not (limited_before & ~state.limited).any()
        assert (state.stones[limited_before] == colours_before[limited_before]).all()
        assert (state.limited <= occupied).all()
        assert steps <= cells + 1, "game longer than cells + button"
    assert (engine.random_actions(state, rng) == NO_ACTION).all()
    assert not engine.legal_actions(state).any()
    result = engine.result(state)
    for index in range(BATCH):
        stones = state.stones[index]
        for group in final_groups(side, stones):
            assert len({int(stones[cell]) for cell in group}) == 1, "two-coloured ribbon"
        if game_type != "double":
            # The game ends only when no stone can be placed; every ribbon is limited.
            assert not state.legal_cells[index].any()
            assert (state.limited[index] == (stones != 0)).all()
            assert int(state.button[index]) in (BLACK, WHITE)
            assert int(result.winner[index]) in (BLACK, WHITE), "no ties with the button"
        if game_type == "double":
            # One stone then two per turn: an odd number of stones, so no draw is possible.
            assert int((stones != 0).sum()) % 2 == 1
            assert int(result.winner[index]) in (BLACK, WHITE)
        if scoring == "standard" and game_type != "double":
            black = int((stones == BLACK).sum()) + 0.5 * (state.button[index] == BLACK)
            white = (int((stones == WHITE).sum()) + 0.5 * (state.button[index] == WHITE)
                     + int(state.komi[index]))
            assert float(result.margin[index]) == black - white


@settings(max_examples=20, deadline=None)
@given(side=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
def test_take_and_put_round_trip(side, seed):
    engine = Engine(Rules(side=side))
    rng = np.random.default_rng(seed)
    state = engine.new_games(BATCH)
    for _ in range(int(rng.integers(0, 3 * side))):
        engine.step(state, engine.random_actions(state, rng))
    index = rng.permutation(BATCH)[:3]
    part = state.take(index)
    assert part.batch_size == 3
    np.testing.assert_array_equal(part.stones, state.stones[index])
    copy = state.copy()
    copy.put(index, part)
    np.testing.assert_array_equal(copy.stones, state.stones)
    joined = type(state).concatenate([part, part])
    assert joined.batch_size == 6


@pytest.mark.parametrize("game_type", GAME_TYPES)
@pytest.mark.parametrize("moves_before", [0, 3, 6])
def test_random_actions_are_uniform_over_legal_actions(game_type, moves_before):
    engine = Engine(Rules(side=3, game_type=game_type))
    rng = np.random.default_rng(moves_before)
    state = engine.new_games(1)
    for _ in range(moves_before):
        if not state.terminal[0]:
            engine.step(state, engine.random_actions(state, rng))
    if state.terminal[0]:
        pytest.skip("the game ended before the position under test")
    samples = 20_000
    many = state.take(np.zeros(samples, dtype=np.int64))
    counts = np.bincount(engine.random_actions(many, rng), minlength=get_board(3).num_actions)
    legal = np.flatnonzero(engine.legal_actions(state)[0])
    assert set(np.flatnonzero(counts).tolist()) == set(legal.tolist())
    share = 1.0 / len(legal)
    spread = np.sqrt(samples * share * (1 - share))
    assert (np.abs(counts[legal] - samples * share) < 5 * spread).all(), counts[legal]
