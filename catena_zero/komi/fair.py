"""Fair komi, in one place: the network's estimate, its smoothing over a run, and the empirical
crossing of a self-play sweep.

The network's estimate is the komi at which its value of the empty board is zero.

Black moves first on the empty board, so the evaluation's value there is Black's expected
outcome; it falls as White's komi grows. The estimate evaluates the empty board at a grid of
integer komis in one batched call, then refines by bisection on integers and interpolates
linearly between the two komis around the zero crossing.
"""

from __future__ import annotations

import numpy as np

from catena_zero.rules import Engine

GRID_POINTS = 33  # komis evaluated in the first batched call (the whole range when smaller)


def empty_board_values(engine: Engine, evaluate_fn, komis) -> np.ndarray:
    """Black's value at the empty board for each komi.  # [K] in [-1, 1]"""
    komis = np.asarray(komis, dtype=np.int32)
    states = engine.new_games(komis.size, komi=komis)
    return np.asarray(evaluate_fn(states).value, dtype=np.float64)


def estimate_fair_komi(engine: Engine, evaluate_fn) -> float:
    """The real komi where Black's value at the empty board crosses zero, clipped to the
    rules' komi range (0 when the game type has no komi)."""
    low, high = engine.rules.komi_range
    if low == high:
        return float(low)
    grid = np.unique(np.linspace(low, high, min(GRID_POINTS, high - low + 1)).round().astype(int))
    values = empty_board_values(engine, evaluate_fn, grid)  # [K]
    if values[0] <= 0.0:
        return float(low)  # White is better even without komi
    if values[-1] >= 0.0:
        return float(high)  # Black is better even with the largest komi
    # Last grid komi still good for Black; the next one is not (first sign change).
    index = int(np.flatnonzero(values <= 0.0)[0]) - 1
    left, right = int(grid[index]), int(grid[index + 1])
    value_left, value_right = values[index], values[index + 1]
    while right - left > 1:
        middle = (left + right) // 2
        value_middle = empty_board_values(engine, evaluate_fn, [middle])[0]
        if value_middle > 0.0:
            left, value_left = middle, value_middle
        else:
            right, value_right = middle, value_middle
    fraction = value_left / (value_left - value_right) if value_left != value_right else 0.5
    return float(np.clip(left + fraction * (right - left), low, high))


def smoothed_fair_komi(previous: float | None, estimate: float, smoothing: float) -> float:
    """The centre that self-play draws komis around after a new estimate:
    `smoothing * previous + (1 - smoothing) * estimate`; the first estimate is taken as it is
    (`previous` None). Both runtimes of a training run refresh it by this rule."""
    if previous is None:
        return float(estimate)
    return smoothing * previous + (1.0 - smoothing) * estimate
