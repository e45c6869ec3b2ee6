"""Network input planes and global features, from the side to move's point of view."""

from __future__ import annotations

import numpy as np

from catena_zero.rules.board import EMPTY, WHITE
from catena_zero.rules.state import GameState
from catena_zero.rules.variants import GameType, Scoring

# Planes: own stones, opponent stones, limited stones, empty legal cells, ribbon ends,
# on-board mask.
NUM_PLANES = 6
# Globals: komi (scaled, signed for the side to move), button available / mine / theirs,
# stones left in the turn (0.5 or 1), game type one-hot (3), scoring one-hot (3).
NUM_GLOBALS = 11

_GAME_TYPES = (GameType.KOMI, GameType.NOKOMI, GameType.DOUBLE)
_SCORINGS = (Scoring.STANDARD, Scoring.LONGEST, Scoring.QUADRATIC)


def observe(engine, state: GameState) -> tuple[np.ndarray, np.ndarray]:
    """(planes float32 [B, NUM_PLANES, H, W], globals float32 [B, NUM_GLOBALS])."""
    board = engine.board
    rules = engine.rules
    batch = state.batch_size
    cells = board.num_cells
    size = board.grid_size
    stones = state.stones  # [B, C]
    me = state.to_move[:, None]
    per_cell = np.zeros((batch, NUM_PLANES, cells), dtype=np.float32)
    per_cell[:, 0] = stones == me
    per_cell[:, 1] = (stones != EMPTY) & (stones != me)
    per_cell[:, 2] = state.limited
    per_cell[:, 3] = state.legal_cells & ~state.terminal[:, None]
    per_cell[:, 4] = (stones != EMPTY) & (state.degree <= 1)
    per_cell[:, 5] = 1.0
    planes = np.zeros((batch, NUM_PLANES, size * size), dtype=np.float32)
    planes[:, :, board.cell_grid_index] = per_cell
    planes = planes.reshape(batch, NUM_PLANES, size, size)

    features = np.zeros((batch, NUM_GLOBALS), dtype=np.float32)
    komi_scale = 1000.0 if rules.scoring == Scoring.QUADRATIC else 15.0
    sign = np.where(state.to_move == WHITE, 1.0, -1.0)
    features[:, 0] = sign * state.komi / komi_scale
    if rules.has_button:
        features[:, 1] = state.button == EMPTY
        features[:, 2] = state.button == state.to_move
        features[:, 3] = (state.button != EMPTY) & (state.button != state.to_move)
    features[:, 4] = state.stones_left / 2.0
    features[:, 5 + _GAME_TYPES.index(rules.game_type)] = 1.0
    features[:, 8 + _SCORINGS.index(rules.scoring)] = 1.0
    return planes, features

