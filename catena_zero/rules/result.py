"""Final results: winner and margin per RULES.md ruling 6, for all three scorings."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catena_zero.rules.board import BLACK, EMPTY, WHITE
from catena_zero.rules.state import GameState
from catena_zero.rules.variants import Rules, Scoring


@dataclass
class GameResult:
    winner: np.ndarray  # int8 [B]: BLACK, WHITE, or EMPTY for a draw
    margin: np.ndarray  # float32 [B]: signed from Black's view (B+x is +x, W+x is -x, draw 0)
    black_score: np.ndarray | None = None  # float64 [B]: Black's score (None for longest)
    white_score: np.ndarray | None = None  # float64 [B]: White's score with komi (None for longest)


def result_string(winner, margin) -> str:
    """'B+3.5', 'W+2' or '0' (ruling 6)."""
    winner = int(np.asarray(winner))
    if winner == EMPTY:
        return "0"
    if winner not in (BLACK, WHITE):
        raise ValueError(f"winner must be EMPTY, BLACK or WHITE, got {winner}")
    value = abs(float(np.asarray(margin)))
    text = str(int(value)) if value == int(value) else f"{value:.1f}"
    return f"{'B' if winner == BLACK else 'W'}+{text}"


def _ribbons(state: GameState):
    """Ribbon roots and their lengths / colours: (is_root bool [B, C], length int64 [B, C],
    colour int8 [B, C]); at a terminal state every ribbon is one colour."""
    cells = state.num_cells
    stones = state.stones_padded[:, :cells]
    is_root = (stones != EMPTY) & (state.label[:, :cells] == np.arange(cells))
    length = np.where(is_root, state.ribbon_length[:, :cells], 0).astype(np.int64)
    return is_root, length, stones


def _button_points(state: GameState, colour: int) -> np.ndarray:
    return np.where(state.button == colour, 0.5, 0.0)


def _from_scores(black: np.ndarray, white: np.ndarray) -> GameResult:
    margin = black - white
    winner = np.where(margin > 0, BLACK, np.where(margin < 0, WHITE, EMPTY)).astype(np.int8)
    return GameResult(winner, margin.astype(np.float32), black, white)


def compute_result(rules: Rules, state: GameState) -> GameResult:
    """Result of every game of the batch (only meaningful where state.terminal)."""
    komi = state.komi.astype(np.float64)
    stones = state.stones
    if rules.scoring == Scoring.STANDARD:
        black = (stones == BLACK).sum(1) + _button_points(state, BLACK)
        white = (stones == WHITE).sum(1) + _button_points(state, WHITE) + komi
        return _from_scores(black.astype(np.float64), white.astype(np.float64))
    is_root, length, colour = _ribbons(state)
    if rules.scoring == Scoring.QUADRATIC:
        square = length * length
        black = np.where(colour == BLACK, square, 0).sum(1) + _button_points(state, BLACK)
        white = np.where(colour == WHITE, square, 0).sum(1) + _button_points(state, WHITE)
        return _from_scores(black.astype(np.float64), white.astype(np.float64) + komi)
    return _longest_result(rules, state, is_root, length, colour)


def _longest_result(rules, state, is_root, length, colour) -> GameResult:
    batch, cells = length.shape
    top = cells + int(rules.komi_range[1]) + 1
    rows = np.broadcast_to(np.arange(batch)[:, None], (batch, cells))
    counts = []
    for player in (BLACK, WHITE):
        mask = is_root & (colour == player)
        flat = rows[mask] * top + length[mask]
        counts.append(np.bincount(flat, minlength=batch * top).reshape(batch, top))
    black_count, white_count = counts
    # Ruling 5: the komi goes onto one of White's longest ribbons, if White has one.
    white_lengths = np.where(is_root & (colour == WHITE), length, 0)
    white_longest = white_lengths.max(1)
    has_white = white_longest > 0
    shift = np.nonzero(has_white & (state.komi > 0))[0]
    white_count[shift, white_longest[shift]] -= 1
    white_count[shift, white_longest[shift] + state.komi[shift]] += 1
    difference = black_count - white_count  # [B, top]: pairs cancel length by length
    remains = difference != 0
    any_left = remains.any(1)
    longest = top - 1 - remains[:, ::-1].argmax(1)
    sign = np.sign(difference[np.arange(batch), longest])
    winner = np.where(sign > 0, BLACK, WHITE)
    margin = longest.astype(np.float64)
    if rules.has_button:
        winner = np.where(any_left, winner, state.button)
        margin = np.where(any_left, margin, 0.5)
    else:
        winner = np.where(any_left, winner, EMPTY)
        margin = np.where(any_left, margin, 0.0)
    winner = winner.astype(np.int8)
    margin = np.where(winner == WHITE, -margin, np.where(winner == BLACK, margin, 0.0))
    return GameResult(winner, margin.astype(np.float32))
