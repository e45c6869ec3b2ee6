"""nokomi balance: Black's win rate after each opening cell, under self-play.

In the nokomi game type the first player places a black stone and the second player then
picks a colour, so the opening stone should leave the game as close to even as possible.
Cells in one orbit of the 12 board symmetries are equivalent, so games are played after
one representative per orbit (all orbits in one batch) and the result is copied to its
orbit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catena_zero.arena.stats import wilson_interval
from catena_zero.komi.sweep import black_points, play_out
from catena_zero.rules import Board, Engine, Rules


def symmetry_orbits(board: Board) -> np.ndarray:
    """Orbit id of every cell under the 12 symmetries (ids 0..O-1, by first cell).  # [C]"""
    images = np.asarray(board.symmetries)  # [12, C]
    representative = images.min(axis=0)  # smallest image of each cell names its orbit
    _, orbit = np.unique(representative, return_inverse=True)
    return orbit.astype(np.int64)


@dataclass
class OpeningTable:
    """Per-cell results of the opening sweep; every field is an array [C]."""

    cell: np.ndarray
    name: np.ndarray  # cell names, e.g. "C3"
    col: np.ndarray
    row: np.ndarray
    orbit: np.ndarray
    games: np.ndarray  # games played from this cell's orbit representative
    black_score: np.ndarray  # Black's points per game after this opening stone
    wilson_low: np.ndarray
    wilson_high: np.ndarray
    mean_margin: np.ndarray

    def rows(self) -> list[dict]:
        names = list(self.__dataclass_fields__)
        return [{name: getattr(self, name)[i].item() for name in names}
                for i in range(len(self.cell))]

    @staticmethod
    def from_columns(columns: dict) -> OpeningTable:
        return OpeningTable(**{name: np.asarray(columns[name])
                               for name in OpeningTable.__dataclass_fields__})


def opening_sweep(rules: Rules, agent, games_per_cell: int, seed: int) -> OpeningTable:
    """Self-play `games_per_cell` games after each orbit's representative opening stone."""
    if games_per_cell < 1:
        raise ValueError(f"games_per_cell must be >= 1, got {games_per_cell}")
    board = rules.board
    orbit = symmetry_orbits(board)
    representatives = np.array([np.flatnonzero(orbit == o)[0] for o in range(orbit.max() + 1)])
    engine = Engine(rules)
    first_cell = np.repeat(representatives, games_per_cell)  # [O * N]
    states = engine.new_games(len(first_cell), komi=0)
    engine.step(states, first_cell)
    play_out(engine, agent, states, np.random.default_rng([seed, 31]))
    points, margins = black_points(engine, states)
    points = points.reshape(len(representatives), games_per_cell)
    margins = margins.reshape(len(representatives), games_per_cell)
    games = np.full(len(representatives), games_per_cell)
    low, high = wilson_interval(points.sum(axis=1), games)
    cells = np.arange(board.num_cells)
    return OpeningTable(
        cell=cells, name=np.array([board.cell_name(int(c)) for c in cells]),
        col=board.coords[:, 0].copy(), row=board.coords[:, 1].copy(), orbit=orbit,
        games=games[orbit], black_score=points.mean(axis=1)[orbit], wilson_low=low[orbit],
        wilson_high=high[orbit], mean_margin=margins.mean(axis=1)[orbit],
    )
