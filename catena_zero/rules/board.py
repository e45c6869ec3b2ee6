"""Board geometry of a hexagonal Catena board of side n: cells, neighbours, symmetries, notation.

Cells are pairs (col, row) with 0 <= col, row <= 2n-2 and |col - row| <= n-1, ordered by
(col, row), so index order reads A1, A2, ..., B1, ...  The cell index C (== num_cells) is the
"no cell" sentinel used to pad neighbour tables, and also the action index of the button.
"""

from __future__ import annotations

import functools
import re

import numpy as np

EMPTY = 0
BLACK = 1
WHITE = 2
NO_ACTION = -1

MIN_SIDE = 2
MAX_SIDE = 10

# Neighbour directions, in the documented order.
DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1))

_CELL_PATTERN = re.compile(r"^\s*([A-Za-z])([0-9]{1,2})\s*$")


def opponent(colour):
    """The other colour: works on ints and on int arrays (3 - colour)."""
    return 3 - colour


class Board:
    """Geometry of the side-n board. Build it with `get_board(side)` (cached)."""

    def __init__(self, side: int):
        if isinstance(side, bool) or not isinstance(side, int | np.integer):
            raise ValueError(f"board side must be an integer from 2 to 10, got {side!r}")
        side = int(side)
        if not MIN_SIDE <= side <= MAX_SIDE:
            raise ValueError(f"board side must be from {MIN_SIDE} to {MAX_SIDE}, got {side}")
        self.side = side
        self.grid_size = 2 * side - 1
        size = self.grid_size
        cells = [
            (col, row)
            for col in range(size)
            for row in range(size)
            if abs(col - row) <= side - 1
        ]
        self.num_cells = len(cells)
        self.num_actions = self.num_cells + 1
        self.button_action = self.num_cells
        self.no_cell = self.num_cells
        self.coords = np.array(cells, dtype=np.int64)  # [C, 2] (col, row)
        index_grid = np.full((size, size), -1, dtype=np.int64)  # [col, row] -> cell or -1
        for index, (col, row) in enumerate(cells):
            index_grid[col, row] = index
        self._index_grid = index_grid
        self.cell_grid_index = (self.coords[:, 1] * size + self.coords[:, 0]).astype(np.int64)

        num_cells = self.num_cells
        neighbours = np.full((num_cells, 6), num_cells, dtype=np.int32)  # [C, 6]
        for index, (col, row) in enumerate(cells):
            for direction, (dc, dr) in enumerate(DIRECTIONS):
                other = self.index_of(col + dc, row + dr)
                if other >= 0:
                    neighbours[index, direction] = other
        self.neighbours = neighbours
        # Padded copy: row C (the sentinel) has only sentinel neighbours, so gathers never
        # need a validity mask.
        padded = np.full((num_cells + 1, 6), num_cells, dtype=np.int64)  # [C+1, 6]
        padded[:num_cells] = neighbours
        self.neighbours_padded = padded
        adjacency = np.zeros((num_cells + 1, num_cells + 1), dtype=bool)  # [C+1, C+1]
        rows = np.repeat(np.arange(num_cells), 6)
        adjacency[rows, padded[:num_cells].ravel()] = True
        adjacency[:, num_cells] = False
        self.adjacency = adjacency
        self.symmetries = self._build_symmetries()  # [12, C]
        self.action_symmetries = np.concatenate(
            [self.symmetries, np.full((12, 1), num_cells, dtype=np.int64)], axis=1
        )  # [12, A]
        self._names = [f"{chr(ord('A') + col)}{row + 1}" for col, row in cells]
        self._name_to_index = {name: index for index, name in enumerate(self._names)}

    def index_of(self, col: int, row: int) -> int:
        """Cell index of (col, row), or -1 when off the board."""
        if 0 <= col < self.grid_size and 0 <= row < self.grid_size:
            return int(self._index_grid[col, row])
        return -1

    def _build_symmetries(self) -> np.ndarray:
        centre = self.side - 1
        q = self.coords[:, 0] - centre
        s = self.coords[:, 1] - centre
        tables = []
        for reflect in (False, True):
            qq, ss = (s, q) if reflect else (q, s)
            for _ in range(6):
                tables.append(self._index_grid[qq + centre, ss + centre])
                # Rotation by 60 degrees: (q, s) -> (q - s, q) maps each of the six
                # directions onto the next one.
                qq, ss = qq - ss, qq
        table = np.stack(tables).astype(np.int64)
        assert (table >= 0).all()
        return table

    def cell_name(self, index: int) -> str:
        """Name of a cell, e.g. 'F6'."""
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise ValueError(f"cell index must be an integer, got {index!r}")
        if not 0 <= index < self.num_cells:
            raise ValueError(f"cell index {index} is outside 0..{self.num_cells - 1}")
        return self._names[int(index)]

    def parse_cell(self, text: str) -> int:
        """Cell index of a name like 'f6' (case-insensitive); ValueError if malformed/off-board."""
        if not isinstance(text, str):
            raise ValueError(f"cell name must be a string, got {text!r}")
        match = _CELL_PATTERN.match(text)
        if match is None:
            raise ValueError(f"malformed cell name {text!r}: expected a letter and a row number")
        name = match.group(1).upper() + str(int(match.group(2)))
        if name not in self._name_to_index:
            raise ValueError(f"cell {text!r} is not on the side-{self.side} board")
        return self._name_to_index[name]

    def action_name(self, action: int) -> str:
        """Name of an action: a cell name or 'button'."""
        if isinstance(action, bool) or not isinstance(action, int | np.integer):
            raise ValueError(f"action must be an integer, got {action!r}")
        if action == self.button_action:
            return "button"
        return self.cell_name(action)

    def parse_action(self, text: str) -> int:
        """Action index of a cell name, 'button' or 'pass' (the button)."""
        if not isinstance(text, str):
            raise ValueError(f"action must be a string, got {text!r}")
        if text.strip().lower() in ("button", "pass"):
            return self.button_action
        return self.parse_cell(text)

    def __repr__(self) -> str:
        return f"Board(side={self.side}, num_cells={self.num_cells})"


@functools.cache
def _cached_board(side: int) -> Board:
    return Board(side)


def get_board(side: int) -> Board:
    """The (cached) Board of the given side, 2..10; ValueError otherwise."""
    if isinstance(side, bool) or not isinstance(side, int | np.integer):
        raise ValueError(f"board side must be an integer from 2 to 10, got {side!r}")
    if not MIN_SIDE <= int(side) <= MAX_SIDE:
        raise ValueError(f"board side must be from {MIN_SIDE} to {MAX_SIDE}, got {side}")
    return _cached_board(int(side))
