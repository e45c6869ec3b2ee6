"""The 12 board symmetries and the colour swap: tables, and invariance of legality,
claiming and scores, on the fast engine (and the reference's own tables)."""

import random

import numpy as np
import pytest

from catena_zero.rules import BLACK, NO_ACTION, WHITE, Engine, Rules, get_board
from tests.rules.reference_engine import EMPTY, RefBoard, RefGame

SIDES = range(2, 11)


def compose(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Permutation `second` after `first`: cell i goes to second[first[i]]."""
    return second[first]


@pytest.mark.parametrize("side", SIDES)
def test_symmetry_tables(side):
    board = get_board(side)
    tables = np.asarray(board.symmetries)
    cells = board.num_cells
    assert tables.shape == (12, cells)
    np.testing.assert_array_equal(tables[0], np.arange(cells))
    for table in tables:
        assert sorted(table.tolist()) == list(range(cells)), "not a bijection"
    assert len({tuple(table) for table in tables.tolist()}) == 12
    neighbours = np.asarray(board.neighbours)
    edges = {(i, int(j)) for i in range(cells) for j in neighbours[i] if j != cells}
    for table in tables:
        assert {(int(table[i]), int(table[j])) for i, j in edges} == edges
    members = {tuple(table) for table in tables.tolist()}
    for first in tables:
        for second in tables:
            assert tuple(compose(first, second).tolist()) in members, "not closed"
        inverse = np.argsort(first)
        assert tuple(inverse.tolist()) in members, "no inverse"
    # The same 12 maps as the reference derives from the hexagon's rotations/reflections.
    assert members == {tuple(table) for table in RefBoard(side).symmetries}
    actions = np.asarray(board.action_symmetries)
    assert actions.shape == (12, cells + 1)
    np.testing.assert_array_equal(actions[:, :cells], tables)
    assert (actions[:, cells] == cells).all(), "the button must stay fixed"


def reference_moves(side: int, game_type: str, seed: int, allow_button: bool = True):
    rng = random.Random(seed)
    game = RefGame(side, game_type)
    while not game.terminal:
        mask = game.legal_actions()
        if not allow_button:
            mask[game.board.button_action] = False
        legal = [a for a, ok in enumerate(mask) if ok]
        game.step(rng.choice(legal), game.legal_actions())
    return game.history


@pytest.mark.parametrize("side,game_type,scoring", [
    (2, "komi", "standard"), (3, "double", "longest"), (4, "nokomi", "quadratic"),
    (5, "komi", "longest"), (6, "double", "standard"), (6, "komi", "quadratic"),
    (7, "nokomi", "standard"), (10, "komi", "standard"),
])
def test_legality_claiming_and_scores_invariant_under_symmetries(side, game_type, scoring):
    engine = Engine(Rules(side=side, game_type=game_type, scoring=scoring))
    board = get_board(side)
    tables = np.asarray(board.action_symmetries)
    cell_tables = np.asarray(board.symmetries)
    komi = 3 if game_type == "komi" else 0
    for seed in range(3 if side <= 7 else 1):
        moves = reference_moves(side, game_type, seed)
        state = engine.new_games(12, komi=komi)
        for move in moves:
            engine.step(state, tables[:, move].astype(np.int64))
            legal = engine.legal_actions(state)
            for k in range(1, 12):
                # y[..., symmetries[k]] = x : the image game holds x's value at the image cell.
                np.testing.assert_array_equal(state.stones[k, cell_tables[k]], state.stones[0])
                np.testing.assert_array_equal(state.limited[k, cell_tables[k]],
                                              state.limited[0])
                np.testing.assert_array_equal(legal[k, tables[k]], legal[0])
        assert state.terminal.all()
        result = engine.result(state)
        assert (result.winner == result.winner[0]).all()
        assert (result.margin == result.margin[0]).all()


@pytest.mark.parametrize("side,scoring", [(3, "standard"), (5, "longest"), (6, "quadratic"),
                                          (8, "standard")])
def test_legality_and_claiming_invariant_under_colour_swap(side, scoring):
    # Game 0 plays the moves; game 1 first lets Black take the button, so the same
    # placements are made by the other colour. Stones must be the colour swap of game 0's,
    # and legality and limited ribbons identical.
    engine = Engine(Rules(side=side, game_type="komi", scoring=scoring))
    board = get_board(side)
    for seed in range(3):
        moves = reference_moves(side, "komi", seed + 10, allow_button=False)
        state = engine.new_games(2)
        engine.step(state, np.array([NO_ACTION, board.button_action]))
        swap = np.array([EMPTY, WHITE, BLACK], dtype=np.int64)
        for move in moves:
            assert not state.terminal.any()
            engine.step(state, np.array([move, move]))
            np.testing.assert_array_equal(swap[state.stones[0].astype(np.int64)],
                                          state.stones[1])
            np.testing.assert_array_equal(state.limited[0], state.limited[1])
            np.testing.assert_array_equal(state.legal_cells[0], state.legal_cells[1])
            legal = engine.legal_actions(state)
            np.testing.assert_array_equal(legal[0, :-1], legal[1, :-1])
        assert state.terminal.all()


def test_reference_symmetries_and_colour_swap_on_reference():
    # The reference on its own: a symmetric game gives the symmetric position and result.
    for side, seed in [(3, 1), (4, 2), (6, 3)]:
        board = RefBoard(side)
        moves = reference_moves(side, "komi", seed)
        for table in board.symmetries:
            image = RefGame(side, "komi", "standard", 2)
            original = RefGame(side, "komi", "standard", 2)
            for move in moves:
                original.step(move)
                image.step(move if move == board.button_action else table[move])
                assert [image.stones[table[i]] for i in range(board.num_cells)] == \
                    original.stones
            assert image.result() == original.result()
