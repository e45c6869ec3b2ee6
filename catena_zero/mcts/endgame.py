"""Exact values of near-finished positions: the minimax solver as a leaf evaluator.

A small net misjudges the last few moves of a Catena game: one limiting move can hand a
whole ribbon to the other side, so the margin swings by many points until the very end
(docs/results/). Once a position has at most `SearchConfig.exact_endgame_cells`
legal cells, its remaining game tree is small, and the search can take the exact value
from `ExactSolver` instead of the net's value, as it already does for finished games.
"""

from __future__ import annotations

import numpy as np

from catena_zero.mcts.solver import BLACK, ExactSolver, SolverTables, enum_value
from catena_zero.rules import GameState, Rules

# Transposition entries kept per ExactEndgame before its tables are dropped (about 250
# bytes each): leaf solves repeat positions within a game's search, not across a run.
DEFAULT_TABLE_LIMIT = 500_000


class ExactEndgame:
    """Exact game values of a batch of positions under one rules object.

    Margin-optimal play is optimal for winning at every komi (the win threshold is a
    monotone function of the margin), so for standard and quadratic scoring one komi-0
    solver serves every komi (the margin only shifts); longest-ribbon scoring adds komi to a
    ribbon, so it keeps one solver per komi. `table_limit` bounds the solvers' memory (None:
    keep every entry); `max_positions` is each solve's budget (`SolverBudgetExceeded`);
    `symmetric_keys` merges symmetric positions in the tables (worth it for whole games).
    """

    def __init__(self, rules: Rules, table_limit: int | None = DEFAULT_TABLE_LIMIT,
                 max_positions: int | None = None, symmetric_keys: bool = False) -> None:
        self.rules = rules
        self.table_limit = table_limit
        self.max_positions = max_positions
        self.symmetric_keys = symmetric_keys
        self._longest = enum_value(rules.scoring) == "longest"
        board = rules.board
        self._tables = SolverTables(board.neighbours, board.symmetries)
        self._solvers: dict[int, ExactSolver] = {}
        self.solved = 0  # positions solved so far (for benchmarks)

    def solver(self, komi: int) -> ExactSolver:
        """The solver for `komi`: its own for longest scoring, else the shared komi-0 one
        (whose margins `margins` shifts by the komi)."""
        key = int(komi) if self._longest else 0
        solver = self._solvers.get(key)
        if solver is None:
            solver = ExactSolver(self._tables, self.rules.game_type, self.rules.scoring, key,
                                 self.max_positions, self.symmetric_keys)
            self._solvers[key] = solver
        return solver

    @property
    def entries(self) -> int:
        """Transposition entries held by all the solvers."""
        return sum(len(solver.table) for solver in self._solvers.values())

    def margins(self, states: GameState, rows: np.ndarray) -> np.ndarray:
        """Exact Black-view result margins (komi included) of games `rows`.  # [R] float64

        Every row must be a game still in progress.
        """
        rows = np.asarray(rows, dtype=np.int64)
        if np.any(states.terminal[rows]):
            raise ValueError("ExactEndgame.margins got a finished game; use engine.result")
        if self.table_limit is not None and self.entries > self.table_limit:
            for solver in self._solvers.values():
                solver.table.clear()
        margins = np.zeros(rows.size, dtype=np.float64)
        for index, game in enumerate(rows):  # exact search is one position at a time
            komi = int(states.komi[game])
            solver = self.solver(komi)
            position = solver.state_from_arrays(
                states.stones[game], states.limited[game], states.button[game],
                states.to_move[game], states.stones_left[game])
            margin = solver.half_value(position) / 2
            margins[index] = margin if self._longest else margin - komi
        self.solved += rows.size
        return margins

    def mover_values(self, states: GameState, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(value [R], margin [R]) of games `rows` from each side to move's view: value is
        1 / 0 / -1 for a win / draw / loss under perfect play, margin the exact result margin."""
        margins = self.margins(states, rows)
        sign = np.where(states.to_move[np.asarray(rows, dtype=np.int64)] == BLACK, 1.0, -1.0)
        return np.sign(margins) * sign, margins * sign


_CACHE: dict[Rules, ExactEndgame] = {}


def exact_endgame(rules: Rules) -> ExactEndgame:
    """The process's ExactEndgame for `rules` (its tables outlive one search call)."""
    if rules not in _CACHE:
        _CACHE[rules] = ExactEndgame(rules)
    return _CACHE[rules]
