"""Match statistics: scores with draws as half a win, Wilson intervals, logistic Elo.

All functions accept scalars or numpy arrays (broadcast elementwise) and return
numpy values of the same shape.
"""

from __future__ import annotations

import math

import numpy as np

# Two-sided 95% normal quantile.
Z_95 = 1.959963984540054

# Elo points per unit of the logistic rating scale: P(win) = 1 / (1 + 10^(-d / 400)).
ELO_PER_NATURAL_UNIT = 400.0 / math.log(10.0)


def _check_counts(wins, draws, losses) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    wins, draws, losses = (np.asarray(x, dtype=np.float64) for x in (wins, draws, losses))
    for name, value in (("wins", wins), ("draws", draws), ("losses", losses)):
        if np.any(value < 0) or not np.all(np.isfinite(value)):
            raise ValueError(f"{name} must be finite and non-negative, got {value}")
    return wins, draws, losses


def match_score(wins, draws, losses) -> np.ndarray:
    """Fraction of points scored, a draw counting as half a win; NaN where no game was played."""
    wins, draws, losses = _check_counts(wins, draws, losses)
    games = wins + draws + losses
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(games > 0, (wins + 0.5 * draws) / np.maximum(games, 1e-300), np.nan)


def wilson_interval(points, games, z: float = Z_95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a proportion `points / games`.

    `points` may be fractional (wins + draws / 2). Returns (lower, upper); (0, 1)
    where `games` is 0, since nothing is known then.
    """
    points = np.asarray(points, dtype=np.float64)
    games = np.asarray(games, dtype=np.float64)
    if np.any(games < 0) or np.any(points < 0) or np.any(points > games):
        raise ValueError(f"need 0 <= points <= games, got points={points}, games={games}")
    if not z > 0:
        raise ValueError(f"z must be positive, got {z}")
    safe_games = np.where(games > 0, games, 1.0)  # the games == 0 entries are replaced below
    proportion = points / safe_games
    z2 = z * z
    denominator = 1.0 + z2 / safe_games
    centre = (proportion + z2 / (2.0 * safe_games)) / denominator
    half_width = (
        z
        * np.sqrt(np.maximum(proportion * (1.0 - proportion) / safe_games, 0.0)
                  + z2 / (4.0 * safe_games * safe_games))
        / denominator
    )
    lower = np.where(games > 0, np.clip(centre - half_width, 0.0, 1.0), 0.0)
    upper = np.where(games > 0, np.clip(centre + half_width, 0.0, 1.0), 1.0)
    # All wins (none) reach 1 (0) exactly, where rounding leaves 1 - 1e-16: an interval
    # asked whether it holds a perfect result must say yes.
    lower = np.where(points == 0, 0.0, lower)
    upper = np.where(points == games, 1.0, upper)
    return lower, upper


def elo_from_score(score) -> np.ndarray:
    """Logistic Elo difference matching an expected score; +-inf at 1 and 0."""
    score = np.asarray(score, dtype=np.float64)
    if np.any((score < 0) | (score > 1)):
        raise ValueError(f"score must lie in [0, 1], got {score}")
    with np.errstate(divide="ignore"):
        return -400.0 * np.log10(1.0 / score - 1.0)


def score_from_elo(elo_difference) -> np.ndarray:
    """Expected score of a player `elo_difference` Elo points above the opponent."""
    elo_difference = np.asarray(elo_difference, dtype=np.float64)
    return 1.0 / (1.0 + np.power(10.0, -elo_difference / 400.0))
