"""observe(): the ribbon planes against their definition on the reference engine's positions."""

from __future__ import annotations

import random

import numpy as np
import pytest

from catena_zero.rules import (
    BLACK,
    EMPTY,
    NO_ACTION,
    NUM_GLOBALS,
    NUM_PLANES,
    Engine,
    Rules,
    observe,
)
from catena_zero.rules.observe import BASIC_GLOBALS, BASIC_PLANES, complete_globals
from tests.rules.reference_engine import RefGame
from tests.rules.rules_crosscheck_support import choose_action


def expected_ribbon_planes(ref: RefGame) -> np.ndarray:
    """[5, C] by definition: for each stone of a ribbon not yet limited, whether the side to
    move has more / fewer / as many of its stones, and whether 1 / 2 empty cells adjacent to
    the ribbon are legal placements."""
    planes = np.zeros((NUM_PLANES - BASIC_PLANES, ref.board.num_cells), dtype=np.float32)
    legal = ref.ribbon_legal_cells()
    for group in ref.groups():
        if ref.limited[group[0]]:
            continue
        mine = sum(ref.stones[cell] == ref.to_move for cell in group)
        theirs = len(group) - mine
        free = {other for cell in group for other in ref.board.neighbours[cell] if legal[other]}
        for index, flag in enumerate((mine > theirs, mine < theirs, mine == theirs,
                                      len(free) == 1, len(free) == 2)):
            planes[index, group] = flag
    return planes


@pytest.mark.parametrize("side,game_type", [(2, "komi"), (3, "double"), (4, "komi"),
                                            (5, "nokomi"), (6, "double"), (7, "komi")])
def test_ribbon_planes_match_their_definition(side: int, game_type: str) -> None:
    rng = random.Random(side)
    games = 6
    engine = Engine(Rules(side, game_type, "standard"))
    state = engine.new_games(games, komi=0)
    refs = [RefGame(side, game_type) for _ in range(games)]
    grid = engine.board.cell_grid_index
    seen = np.zeros(NUM_PLANES - BASIC_PLANES, dtype=np.int64)
    while not all(ref.terminal for ref in refs):
        planes, _ = observe(engine, state)
        flat = planes.reshape(games, NUM_PLANES, -1)[:, :, grid]  # [B, P, C]
        actions = np.full(games, NO_ACTION, dtype=np.int64)
        for index, ref in enumerate(refs):
            assert ref.stones == [int(v) for v in state.stones[index]]
            expected = expected_ribbon_planes(ref)
            np.testing.assert_array_equal(flat[index, BASIC_PLANES:], expected,
                                          err_msg=f"game {index} after {ref.history}")
            seen += expected.any(axis=1)
            if not ref.terminal:
                actions[index] = choose_action(ref, ref.legal_actions(), rng, 0.7 * (index % 2))
        engine.step(state, actions.copy())
        for index, ref in enumerate(refs):
            if actions[index] != NO_ACTION:
                ref.step(int(actions[index]))
    if side >= 3:
        assert (seen > 0).all(), seen  # every plane was exercised


def test_old_planes_come_first_and_are_unchanged() -> None:
    engine = Engine(Rules(4))
    state = engine.new_games(1, komi=0)
    engine.step(state, np.array([engine.board.parse_cell("D4")]))
    planes, _ = observe(engine, state)
    d4 = engine.board.cell_grid_index[engine.board.parse_cell("D4")]
    flat = planes[0].reshape(NUM_PLANES, -1)
    # White to move: the black stone is the opponent's, a ribbon of one with Black's majority
    # and six free cells.
    assert flat[:BASIC_PLANES, d4].tolist() == [0, 1, 0, 0, 1, 1]
    assert flat[BASIC_PLANES:, d4].tolist() == [0, 1, 0, 0, 0]
    assert state.stones[0, engine.board.parse_cell("D4")] == BLACK != EMPTY


@pytest.mark.parametrize("side", range(2, 11))
def test_board_size_globals_come_after_the_old_ones(side: int) -> None:
    engine = Engine(Rules(side, "double", "longest"))
    state = engine.new_games(3, komi=0)
    engine.step(state, engine.random_actions(state, np.random.default_rng(side)))
    _, features = observe(engine, state)
    assert features.shape == (3, NUM_GLOBALS) and NUM_GLOBALS == BASIC_GLOBALS + 2
    cells = engine.board.num_cells
    np.testing.assert_allclose(features[:, BASIC_GLOBALS:],
                               [[(side - 2) / 8, cells / 271]] * 3, rtol=1e-6)
    assert features[0, 5 + 2] == 1 and features[0, 8 + 1] == 1  # double, longest: unchanged
    # Globals written before the board-size ones are completed to today's observation.
    for held in range(BASIC_GLOBALS, NUM_GLOBALS + 1):
        np.testing.assert_array_equal(complete_globals(features[:, :held], side), features)
    with pytest.raises(ValueError, match="to be completed"):
        complete_globals(features[:, :BASIC_GLOBALS - 1], side)
