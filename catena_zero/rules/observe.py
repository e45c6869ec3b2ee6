"""Network input planes and global features, from the side to move's point of view."""

from __future__ import annotations

import numpy as np

from catena_zero.rules.board import EMPTY, WHITE
from catena_zero.rules.state import GameState
from catena_zero.rules.variants import GameType, Scoring

# Planes: own stones, opponent stones, limited stones, empty legal cells, ribbon ends,
# on-board mask; then, for stones of ribbons not yet limited: the ribbon's majority is mine /
# theirs / tied, and the ribbon has exactly one / two legal cells left to grow into.
# The list is append-only: a net trained on the first P planes (an older observation)
# reads planes[:, :P] and ignores the rest, so older checkpoints and model files keep working.
NUM_PLANES = 11
BASIC_PLANES = 6  # the planes of observation version 1 (models trained before the ribbon planes)
# Globals: komi (scaled, signed for the side to move), button available / mine / theirs,
# stones left in the turn (0.5 or 1), game type one-hot (3), scoring one-hot (3); then the
# board size, so that one net for every side knows which it plays: (side - 2) / 8 and
# cells / 271, both 0..1 over sides 2..10. Append-only like the planes: a net built for the
# first G globals reads globals[:, :G].
NUM_GLOBALS = 13
BASIC_GLOBALS = 11  # the globals of observation version 1 (models trained before board size)
LARGEST_BOARD_CELLS = 271  # side 10

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
    _ribbon_planes(state, me, per_cell[:, BASIC_PLANES:])
    planes = np.zeros((batch, NUM_PLANES, size * size), dtype=np.float32)
    planes[:, :, board.cell_grid_index] = per_cell
    planes = planes.reshape(batch, NUM_PLANES, size, size)

    features = np.zeros((batch, NUM_GLOBALS), dtype=np.float32)  # [B, G]
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
    features[:, BASIC_GLOBALS:] = board_size_globals(board.side)
    return planes, features


def board_size_globals(side: int) -> np.ndarray:
    """float32 [NUM_GLOBALS - BASIC_GLOBALS]: the board-size globals of a side-n board."""
    cells = 3 * side * (side - 1) + 1
    return np.array([(side - 2) / 8.0, cells / LARGEST_BOARD_CELLS], dtype=np.float32)


def complete_globals(globals_: np.ndarray, side: int) -> np.ndarray:
    """Globals [N, G] of an older observation (BASIC_GLOBALS <= G <= NUM_GLOBALS) -> today's
    [N, NUM_GLOBALS]: the missing ones are all board-size globals, functions of the side.

    Lets samples written before the board-size globals train a net that reads them."""
    globals_ = np.asarray(globals_, dtype=np.float32)
    held = globals_.shape[1] if globals_.ndim == 2 else -1
    if not BASIC_GLOBALS <= held <= NUM_GLOBALS:
        raise ValueError(f"globals must be [N, G] with {BASIC_GLOBALS} <= G <= {NUM_GLOBALS} "
                         f"to be completed, got shape {globals_.shape}")
    if held == NUM_GLOBALS:
        return globals_
    missing = np.broadcast_to(board_size_globals(side)[held - BASIC_GLOBALS:],
                              (len(globals_), NUM_GLOBALS - held))
    return np.concatenate([globals_, missing], axis=1)


def _ribbon_planes(state: GameState, me: np.ndarray, out: np.ndarray) -> None:
    """Fill out [B, 5, C]: majority mine / theirs / tied, one / two free cells left.

    Claiming hangs on a ribbon's majority and on when it becomes limited, both properties of
    the whole chain, which a small convolutional net would otherwise have to trace stone by
    stone along a winding ribbon. Only stones of ribbons still open are marked.
    """
    cells = state.stones.shape[1]
    stones = state.stones  # [B, C]
    open_stone = (stones != EMPTY) & ~state.limited  # [B, C]
    root = np.where(open_stone, state.label[:, :cells], cells)  # [B, C]; C = padding slot
    length = np.take_along_axis(state.ribbon_length, root, axis=1)  # [B, C]
    black = np.take_along_axis(state.ribbon_black, root, axis=1)
    mine = np.where(me == WHITE, length - black, black)
    diff = 2 * mine.astype(np.int32) - length  # mine - theirs
    end0 = np.take_along_axis(state.ribbon_end0, root, axis=1)
    end1 = np.take_along_axis(state.ribbon_end1, root, axis=1)
    free0 = np.take_along_axis(state.free, end0.astype(np.intp), axis=1).astype(np.int32)
    free1 = np.take_along_axis(state.free, end1.astype(np.intp), axis=1).astype(np.int32)
    free = free0 + np.where(end0 == end1, 0, free1)  # legal cells the ribbon can grow into
    out[:, 0] = open_stone & (diff > 0)
    out[:, 1] = open_stone & (diff < 0)
    out[:, 2] = open_stone & (diff == 0)
    out[:, 3] = open_stone & (free == 1)
    out[:, 4] = open_stone & (free == 2)
