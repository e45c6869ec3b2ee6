"""Board geometry and cell notation of the fast engine against RULES.md (and the reference)."""

import numpy as np
import pytest

from catena_zero.rules import get_board
from tests.rules.reference_engine import RefBoard

CELL_COUNTS = {2: 7, 3: 19, 4: 37, 5: 61, 6: 91, 7: 127, 8: 169, 9: 217, 10: 271}


@pytest.mark.parametrize("side", range(2, 11))
def test_cell_counts(side):
    board = get_board(side)
    assert board.num_cells == CELL_COUNTS[side] == 3 * side * (side - 1) + 1
    assert board.num_actions == board.num_cells + 1
    assert board.button_action == board.num_cells
    assert RefBoard(side).num_cells == CELL_COUNTS[side]


@pytest.mark.parametrize("side", range(2, 11))
def test_geometry_matches_reference(side):
    board, ref = get_board(side), RefBoard(side)
    assert [tuple(int(v) for v in pair) for pair in board.coords] == ref.coords
    assert board.grid_size == 2 * side - 1
    np.testing.assert_array_equal(
        board.cell_grid_index, [r * board.grid_size + c for c, r in ref.coords])
    neighbours = np.asarray(board.neighbours)
    assert neighbours.shape == (board.num_cells, 6)
    for cell in range(board.num_cells):
        fast = [int(n) for n in neighbours[cell] if n != board.num_cells]
        assert fast == ref.neighbours[cell], ref.cell_name(cell)
    for cell in range(board.num_cells):
        name = ref.cell_name(cell)
        assert board.cell_name(cell) == name
        assert board.parse_cell(name) == cell
        assert board.parse_cell(name.lower()) == cell
        assert board.action_name(cell) == name


def test_side_6_corners_centre_and_non_cells():
    board = get_board(6)
    corners = [(0, 0), (5, 0), (10, 5), (10, 10), (5, 10), (0, 5)]
    names = [board.cell_name(RefBoard(6).index[corner]) for corner in corners]
    assert names == ["A1", "F1", "K6", "K11", "F11", "A6"]
    centre = board.parse_cell("F6")
    assert tuple(int(v) for v in board.coords[centre]) == (5, 5)
    for name in ["A7", "G1", "L1", "A12", "K5"]:
        with pytest.raises(ValueError):
            board.parse_cell(name)
    touching = {board.cell_name(int(n)) for n in board.neighbours[board.parse_cell("D6")]
                if n != board.num_cells}
    assert touching == {"C5", "D5", "E6", "C6", "D7", "E7"}


def test_columns_include_letter_i():
    board = get_board(6)
    assert board.parse_cell("I6") == RefBoard(6).index[(8, 5)]
    assert board.cell_name(board.parse_cell("i6")) == "I6"


def test_button_names():
    board = get_board(6)
    assert board.action_name(board.button_action) == "button"
    assert board.parse_action("button") == board.button_action
    assert board.parse_action("pass") == board.button_action
    assert board.parse_action("f6") == board.parse_cell("F6")
