"""Wilson intervals, match scores and the logistic Elo conversion against known values."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.arena.stats import (
    elo_from_score,
    match_score,
    score_from_elo,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("points", "games", "lower", "upper"),
    [
        # Reference values computed from the closed form (Wilson 1927), z = 1.96.
        (7, 10, 0.396778, 0.892209),
        (0, 10, 0.0, 0.277533),
        (10, 10, 0.722467, 1.0),
        (50, 100, 0.403832, 0.596168),
        (55, 100, 0.452446, 0.643855),
        (1, 1, 0.206549, 1.0),
    ],
)
def test_wilson_interval_known_values(points, games, lower, upper):
    low, high = wilson_interval(points, games)
    assert float(low) == pytest.approx(lower, abs=1e-5)
    assert float(high) == pytest.approx(upper, abs=1e-5)


def test_wilson_interval_vectorised_and_empty():
    low, high = wilson_interval(np.array([0.0, 5.5, 3.0]), np.array([0, 10, 3]))
    assert low.shape == high.shape == (3,)
    assert (low[0], high[0]) == (0.0, 1.0)  # no games: nothing known
    assert low[1] < 0.55 < high[1]


@pytest.mark.parametrize("games", [1, 3, 7, 10, 12, 13, 96, 1000])
def test_wilson_interval_reaches_the_ends_exactly_at_perfect_results(games):
    lower, upper = wilson_interval(np.array([0.0, games]), np.array([games, games]))
    assert lower[0] == 0.0 and upper[1] == 1.0
    assert upper[0] < 1.0 and lower[1] > 0.0


def test_wilson_interval_rejects_bad_counts():
    with pytest.raises(ValueError, match="points"):
        wilson_interval(11, 10)
    with pytest.raises(ValueError, match="points"):
        wilson_interval(-1, 10)


def test_match_score_counts_draws_as_half():
    assert float(match_score(3, 2, 5)) == pytest.approx(0.4)
    assert float(match_score(0, 4, 0)) == 0.5
    assert np.isnan(match_score(0, 0, 0))
    with pytest.raises(ValueError, match="draws"):
        match_score(1, -1, 0)


def test_elo_score_round_trip():
    elo = np.array([-400.0, -35.0, 0.0, 35.0, 400.0])
    assert np.allclose(elo_from_score(score_from_elo(elo)), elo)
    assert float(score_from_elo(400.0)) == pytest.approx(10 / 11)
    assert float(elo_from_score(0.5)) == 0.0
    assert float(elo_from_score(1.0)) == np.inf
    assert float(elo_from_score(0.0)) == -np.inf
