"""The atlas's crossing intervals: they bracket the swept data where a logistic fit misses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from catena_zero.komi.intervals import (
    IntervalError,
    bootstrap_crossing,
    bracket_interval,
    crossing_point,
    estimate_crossing,
    mean_interval,
    monotone_scores,
)
from catena_zero.komi.sweep import fit_logistic


def test_monotone_scores_pool_adjacent_violators():
    pooled = monotone_scores([8, 4, 6, 0], [8, 8, 8, 8])
    assert pooled.tolist() == [1.0, 0.625, 0.625, 0.0]
    assert np.all(np.diff(pooled) <= 0)


def test_crossing_point_interpolates_and_opens_at_the_ends():
    assert crossing_point([0, 10], [1.0, 0.0]) == 5.0
    assert crossing_point([0, 4, 8], [0.9, 0.7, 0.1]) == pytest.approx(4 + 4 * 0.2 / 0.6)
    assert crossing_point([0, 15], [0.9, 0.8]) == math.inf
    assert crossing_point([0, 15], [0.3, 0.1]) == -math.inf
    assert crossing_point([0, 1, 2, 3], [1.0, 0.5, 0.5, 0.0]) == 1.5


def test_a_perfect_step_is_bracketed_by_its_two_komi_values():
    komi = np.arange(0, 16)
    games = np.full(16, 16)
    points = np.where(komi <= 10, 16, 0)  # perfect players: the exact fair komi is 10.5
    assert bracket_interval(komi, points, games) == (10.0, 11.0)
    result = estimate_crossing(komi, points, games, resamples=200)
    assert result.estimate == 10.5
    assert (result.bootstrap_low, result.bootstrap_high) == (10.5, 10.5)


def test_the_bracket_contains_the_data_crossing_where_the_logistic_interval_does_not():
    # An agent that also throws easy wins far from the crossing: the data cross 1/2 between
    # komi 9 and 10, but the lopsided tails drag a logistic fit's interval away from it.
    komi = np.array([0, 2, 4, 6, 8, 9, 10, 12, 14, 15])
    games = np.array([40, 40, 40, 40, 40, 400, 400, 40, 40, 40])
    points = np.array([26, 26, 25, 25, 24, 360, 40, 0, 0, 0])
    fit = fit_logistic(komi, points, games)
    low, high = bracket_interval(komi, points, games)
    assert (low, high) == (9.0, 10.0)
    assert not fit.low <= 9.5 <= fit.high  # the curve's interval misses the crossing
    assert low <= crossing_point(komi, monotone_scores(points, games)) <= high


def test_noise_widens_the_bracket_instead_of_reversing_it():
    komi = np.array([0, 4, 8, 12])
    games = np.full(4, 50)
    points = np.array([50, 0, 50, 0])  # a significant White win left of a Black win
    low, high = bracket_interval(komi, points, games)
    assert low == 0.0 and high == 12.0


def test_a_bracket_end_needs_enough_games():
    # a flat curve swept with 4 games a komi: 0 of 4 at komi 9 and 4 of 4 at komi 5 clear
    # one half by Wilson's interval, though Black's score is near one half throughout
    komi = np.array([3, 5, 7, 9, 11, 13])
    games = np.array([12, 4, 12, 4, 12, 12])
    points = np.array([10, 4, 6, 0, 5, 2])
    assert bracket_interval(komi, points, games) == (5.0, 9.0)
    assert bracket_interval(komi, points, games, min_games=12) == (3.0, 13.0)
    result = estimate_crossing(komi, points, games, resamples=50, min_games=12)
    assert (result.low, result.high) == (3.0, 13.0) and 3.0 <= result.estimate <= 13.0


def test_open_ends_when_black_always_wins():
    komi, games = np.array([0, 8, 15]), np.full(3, 20)
    low, high = bracket_interval(komi, np.full(3, 20), games)
    assert low == 15.0 and high == math.inf
    assert bootstrap_crossing(komi, np.full(3, 20), games, resamples=50)[1] == math.inf


def test_mean_interval_and_bad_input():
    mean, low, high = mean_interval([1.0, 3.0, 5.0])
    assert mean == 3.0 and low < 3.0 < high
    with pytest.raises(IntervalError, match="increase"):
        bracket_interval([0, 0], [1, 1], [2, 2])
    with pytest.raises(IntervalError, match="points"):
        bracket_interval([0, 1], [3, 1], [2, 2])
