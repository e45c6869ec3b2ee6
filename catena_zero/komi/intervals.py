"""Intervals of the komi atlas: where Black's win rate crosses one half, and means.

A logistic fit's interval (catena_zero.komi.sweep.fit_logistic) is only as good as the
logistic shape: a search that converts narrow wins badly far from the crossing bends the
curve and the fitted interval can miss the swept data. The atlas reports intervals that
need no curve:

- `bracket_interval`: the nearest swept komi values on either side of the crossing whose
  Wilson 95% intervals lie wholly above (Black wins) and wholly below (White wins) one
  half. Black's score falls as komi grows, so the crossing lies between them.
- `bootstrap_crossing`: the crossing of the monotone (isotonic) fit, recomputed on
  binomial resamples of every komi's games; its 2.5% and 97.5% percentiles.
- `zero_margin_komi`: the other meaning of fair, where Black's mean margin is zero, with a
  bracket read the same way off each komi's 95% interval of the mean margin.

Every function takes the swept komi values in increasing order with Black's points and
games at each ([K] arrays). An open end is -inf or +inf: the crossing lies beyond the
komi swept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from catena_zero.arena.stats import wilson_interval

Z_95 = 1.959963984540054
HALF = 0.5


class IntervalError(ValueError):
    """Sweep arrays that cannot be read as a sweep (one line naming what is wrong)."""


def _checked(komi, points, games) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    komi, points, games = (np.asarray(a, dtype=np.float64) for a in (komi, points, games))
    if komi.ndim != 1 or komi.size == 0 or not komi.shape == points.shape == games.shape:
        raise IntervalError(f"komi, points and games must be equal-length 1-d arrays, got "
                            f"shapes {komi.shape}, {points.shape}, {games.shape}")
    if np.any(np.diff(komi) <= 0):
        raise IntervalError(f"komi values must increase strictly, got {komi.tolist()}")
    if np.any(games <= 0) or np.any(points < 0) or np.any(points > games):
        raise IntervalError("need games > 0 and 0 <= points <= games at every komi")
    return komi, points, games


def monotone_scores(points, games) -> np.ndarray:
    """Black's score per komi, made non-increasing by pooling adjacent violators (the
    weighted isotonic regression, weights = games).  [K] -> [K]"""
    points = np.asarray(points, dtype=np.float64)
    games = np.asarray(games, dtype=np.float64)
    # Blocks of pooled komi values: (sum of points, sum of games, count).
    blocks: list[list[float]] = []
    for p, g in zip(points, games, strict=True):
        blocks.append([p, g, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]:
            p2, g2, n2 = blocks.pop()
            blocks[-1][0] += p2
            blocks[-1][1] += g2
            blocks[-1][2] += n2
    return np.concatenate([np.full(int(n), p / g) for p, g, n in blocks])


def crossing_point(komi, score, level: float = HALF) -> float:
    """Where a non-increasing score falls through `level` (one half), interpolated linearly
    between the last komi above it and the next one; a flat stretch at exactly the level
    gives its middle. -inf when the score is below the level everywhere, +inf when above."""
    komi = np.asarray(komi, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64) - level + HALF
    at_half = np.flatnonzero(np.isclose(score, HALF))
    if at_half.size:
        return float(0.5 * (komi[at_half[0]] + komi[at_half[-1]]))
    above = np.flatnonzero(score > HALF)
    if not above.size:
        return -math.inf
    last = int(above.max())
    if last == komi.size - 1:
        return math.inf
    fraction = (score[last] - HALF) / (score[last] - score[last + 1])
    return float(komi[last] + fraction * (komi[last + 1] - komi[last]))


def bracket_interval(komi, points, games, z: float = Z_95,
                     min_games: int = 1) -> tuple[float, float]:
    """(low, high): low is the largest swept komi whose Wilson interval lies above 1/2 with
    no komi at or below it whose interval lies below 1/2; high the smallest whose interval
    lies below 1/2 with no komi at or above it whose interval lies above. Noise that puts a
    significant White win left of a significant Black win widens the bracket instead of
    reversing it. -inf / +inf where no such komi was swept. A komi with fewer than
    `min_games` games counts as neither: 0 of 4 games clears 1/2 by Wilson's interval, and
    among a dozen komis swept with 4 games each some do by chance."""
    komi, points, games = _checked(komi, points, games)
    wilson_low, wilson_high = wilson_interval(points, games, z)
    enough = games >= min_games
    black = (wilson_low > HALF) & enough  # Black wins significantly at this komi
    white = (wilson_high < HALF) & enough
    white_at_or_below = np.cumsum(white) > 0
    black_at_or_above = np.cumsum(black[::-1])[::-1] > 0
    lows = komi[black & ~white_at_or_below]
    highs = komi[white & ~black_at_or_above]
    low = float(lows.max()) if lows.size else -math.inf
    high = float(highs.min()) if highs.size else math.inf
    return low, high


def bootstrap_crossing(komi, points, games, resamples: int = 1000, seed: int = 0,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the monotone fit's crossing over binomial resamples of each
    komi's games (a parametric bootstrap over games). Percentiles are taken without
    interpolation so open ends stay infinite."""
    komi, points, games = _checked(komi, points, games)
    if resamples < 1:
        raise IntervalError(f"resamples must be >= 1, got {resamples}")
    rng = np.random.default_rng([seed, 41])
    counts = games.astype(np.int64)
    drawn = rng.binomial(counts[None, :], (points / games)[None, :],
                         size=(resamples, komi.size))  # [R, K]
    crossings = np.array([crossing_point(komi, monotone_scores(row, games)) for row in drawn])
    tail = (1.0 - level) / 2.0
    low = float(np.quantile(crossings, tail, method="lower"))
    high = float(np.quantile(crossings, 1.0 - tail, method="higher"))
    return low, high


@dataclass(frozen=True)
class CrossingEstimate:
    """The crossing of one sweep: the point, the bracket and the bootstrap interval."""

    estimate: float  # the monotone fit's crossing, clipped into the bracket
    low: float  # bracket_interval
    high: float
    bootstrap_low: float
    bootstrap_high: float


def estimate_crossing(komi, points, games, resamples: int = 1000, seed: int = 0,
                      min_games: int = 1) -> CrossingEstimate:
    """The crossing of Black's score through one half with both intervals (module doc); a
    bracket end needs `min_games` games (`bracket_interval`)."""
    komi, points, games = _checked(komi, points, games)
    low, high = bracket_interval(komi, points, games, min_games=min_games)
    point = crossing_point(komi, monotone_scores(points, games))
    if math.isfinite(point):
        point = float(min(max(point, low), high))
    boot_low, boot_high = bootstrap_crossing(komi, points, games, resamples, seed)
    return CrossingEstimate(point, low, high, boot_low, boot_high)


@dataclass(frozen=True)
class ZeroMargin:
    """Where Black's mean margin is zero: the point, its bracket, the margin's spread there."""

    estimate: float  # the monotone fit's zero crossing, clipped into the bracket
    low: float  # the bracket (NaN where the sweep kept no spread; +-inf: an open end)
    high: float
    spread: float  # the margin's standard deviation at the swept komi nearest the estimate


def zero_margin_komi(komi, mean_margin, margin_sd, games, z: float = Z_95,
                     min_games: int = 2) -> ZeroMargin:
    """The komi at which Black's mean margin crosses zero (interpolated on the monotone fit
    of the means, weighted by games) and its bracket: the largest swept komi whose mean's
    95% interval (z sd / sqrt(n - 1), sd over n games) lies wholly above zero with none at
    or below it wholly below, and the smallest wholly below with none at or above it wholly
    above; komis with fewer than `min_games` games count as neither. Without the spread
    (NaN: a sweep recorded before it was kept) the bracket is NaN. Arrays [K], komi
    increasing."""
    komi, mean, games, spread = (np.asarray(a, dtype=np.float64)
                                 for a in (komi, mean_margin, games, margin_sd))
    if komi.ndim != 1 or komi.size == 0 or \
            not komi.shape == mean.shape == games.shape == spread.shape:
        raise IntervalError(f"komi, margins, spreads and games must be equal-length 1-d arrays, "
                            f"got shapes {komi.shape}, {mean.shape}, {spread.shape}, "
                            f"{games.shape}")
    if np.any(np.diff(komi) <= 0) or np.any(games <= 0):
        raise IntervalError("need increasing komi values and games > 0 at every komi")
    totals = mean * games
    point = crossing_point(komi, monotone_scores(totals, games), level=0.0)
    nearest = int(np.argmin(np.abs(komi - point))) if math.isfinite(point) else \
        (0 if point < 0 else komi.size - 1)
    if np.any(np.isnan(spread)):
        return ZeroMargin(point, math.nan, math.nan, float(spread[nearest]))
    error = z * spread / np.sqrt(np.maximum(games - 1, 1e-12))
    enough = games >= min_games
    positive = (mean - error > 0) & enough
    negative = (mean + error < 0) & enough
    lows = komi[positive & ~(np.cumsum(negative) > 0)]
    highs = komi[negative & ~(np.cumsum(positive[::-1])[::-1] > 0)]
    low = float(lows.max()) if lows.size else -math.inf
    high = float(highs.min()) if highs.size else math.inf
    if math.isfinite(point):
        point = float(min(max(point, low), high))
    return ZeroMargin(point, low, high, float(spread[nearest]))


def mean_interval(values, z: float = Z_95) -> tuple[float, float, float]:
    """(mean, low, high): the normal-approximation 95% interval of a mean.  values: [N]"""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise IntervalError(f"need a non-empty 1-d array of values, got shape {values.shape}")
    mean = float(values.mean())
    if values.size == 1:
        return mean, -math.inf, math.inf
    half_width = z * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, mean - half_width, mean + half_width


def score_of_margin(margin: float) -> float:
    """Black's score (1 win, 0.5 draw, 0 loss) of a final margin from Black's view."""
    return 1.0 if margin > 0 else 0.0 if margin < 0 else 0.5


def score_interval(points, games, z: float = Z_95) -> tuple[float, float, float]:
    """(score, low, high): a score (wins + draws / 2 per game) and its Wilson interval."""
    if games <= 0:
        raise IntervalError(f"games must be >= 1, got {games}")
    low, high = wilson_interval(np.array([points]), np.array([games]), z)
    return float(points / games), float(low[0]), float(high[0])
