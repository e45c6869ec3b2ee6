"""GameState: a batch of Catena positions as a struct of numpy arrays, batch first.

Per-cell arrays are stored padded with one extra column (index C, the "no cell" sentinel of the
neighbour tables), so neighbour gathers never need a mask. The public per-cell fields
(`stones`, `legal_cells`, `limited`, `degree`) are views of the first C columns.

Ribbon bookkeeping (private): every stone carries the label of its ribbon, which is the index
of one of the ribbon's stones (the "root"). Per-ribbon data is stored at the root's column:
length, number of black stones, and the two end stones (equal for a single stone).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np


@dataclass
class GameState:
    """A batch of B games. Public read-only views: stones, legal_cells, limited, degree,
    to_move, stones_left, button, last_placer, move_number, terminal, komi."""

    stones_padded: np.ndarray  # int8 [B, C+1] colours (EMPTY/BLACK/WHITE), claims applied
    legal_padded: np.ndarray  # bool [B, C+1] placement legality by the ribbon rule
    limited_padded: np.ndarray  # bool [B, C+1] stone is in a limited (claimed) ribbon
    degree_padded: np.ndarray  # int8 [B, C+1] number of stone neighbours
    label: np.ndarray  # int16 [B, C+1] ribbon root of each stone (C for empty cells)
    free: np.ndarray  # int8 [B, C+1] number of legal neighbours of each stone
    ribbon_length: np.ndarray  # int16 [B, C+1] at the root: number of stones
    ribbon_black: np.ndarray  # int16 [B, C+1] at the root: number of black stones
    ribbon_end0: np.ndarray  # int16 [B, C+1] at the root: one end stone
    ribbon_end1: np.ndarray  # int16 [B, C+1] at the root: the other end stone
    to_move: np.ndarray  # int8 [B] colour of the player to move
    stones_left: np.ndarray  # int8 [B] stones still to place this turn (2 or 1 in double)
    button: np.ndarray  # int8 [B] EMPTY = not taken, else holder (after the end rule)
    last_placer: np.ndarray  # int8 [B] colour that placed the last stone (EMPTY: none yet)
    move_number: np.ndarray  # int32 [B] number of actions taken
    terminal: np.ndarray  # bool [B] game over
    komi: np.ndarray  # int32 [B] komi added for White
    legal_count: np.ndarray  # int16 [B] number of legal cells (private, kept by the engine)

    @property
    def stones(self) -> np.ndarray:  # int8 [B, C]
        return self.stones_padded[:, :-1]

    @property
    def legal_cells(self) -> np.ndarray:  # bool [B, C]
        return self.legal_padded[:, :-1]

    @property
    def limited(self) -> np.ndarray:  # bool [B, C]
        return self.limited_padded[:, :-1]

    @property
    def degree(self) -> np.ndarray:  # int8 [B, C]
        return self.degree_padded[:, :-1]

    @property
    def batch_size(self) -> int:
        return int(self.to_move.shape[0])

    @property
    def num_cells(self) -> int:
        return int(self.stones_padded.shape[1] - 1)

    def _arrays(self) -> dict[str, np.ndarray]:
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

    def copy(self) -> GameState:
        """A deep copy."""
        return GameState(**{name: array.copy() for name, array in self._arrays().items()})

    def _check_index(self, index) -> np.ndarray:
        index = np.asarray(index)
        if index.dtype == bool:
            if index.shape != (self.batch_size,):
                raise ValueError(
                    f"boolean index has shape {index.shape}, expected ({self.batch_size},)"
                )
            return np.nonzero(index)[0]
        if not np.issubdtype(index.dtype, np.integer):
            raise ValueError(f"batch index must be integers, got dtype {index.dtype}")
        index = index.reshape(-1).astype(np.int64)
        bad = (index < -self.batch_size) | (index >= self.batch_size)
        if np.any(bad):
            raise ValueError(
                f"batch index {int(index[bad][0])} is outside a batch of {self.batch_size}"
            )
        return index

    def take(self, index) -> GameState:
        """The games at `index` (int array [K] or bool mask [B]) as a new batch (copies)."""
        index = self._check_index(index)
        return GameState(**{name: array[index] for name, array in self._arrays().items()})

    def put(self, index, other: GameState) -> None:
        """Write the games of `other` (batch K) into positions `index` [K] of self."""
        index = self._check_index(index)
        if other.batch_size != index.shape[0]:
            raise ValueError(
                f"put: {index.shape[0]} indices but the other batch has {other.batch_size} games"
            )
        if other.num_cells != self.num_cells:
            raise ValueError(
                f"put: board of {other.num_cells} cells into a batch of {self.num_cells} cells"
            )
        for name, array in self._arrays().items():
            array[index] = getattr(other, name)

    @staticmethod
    def concatenate(states: list[GameState]) -> GameState:
        """One batch holding all games of `states`, in order."""
        states = list(states)
        if not states:
            raise ValueError("concatenate needs at least one GameState")
        cells = {state.num_cells for state in states}
        if len(cells) != 1:
            raise ValueError(f"cannot concatenate boards of different sizes: {sorted(cells)} cells")
        names = [field.name for field in dataclasses.fields(GameState)]
        return GameState(
            **{name: np.concatenate([getattr(s, name) for s in states]) for name in names}
        )

    def __len__(self) -> int:
        return self.batch_size

    def __repr__(self) -> str:
        return (
            f"GameState(batch_size={self.batch_size}, num_cells={self.num_cells}, "
            f"terminal={int(self.terminal.sum())}, moves={self.move_number.tolist()[:8]}...)"
        )
