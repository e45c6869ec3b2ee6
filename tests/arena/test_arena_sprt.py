"""SPRT on Elo bounds with draws: likelihood ratios, decisions and error rates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from catena_zero.arena.sprt import SprtConfig, SprtDecision, sprt, sprt_llr
from catena_zero.arena.stats import score_from_elo


def test_without_draws_llr_is_the_binomial_ratio():
    s0, s1 = float(score_from_elo(0.0)), float(score_from_elo(35.0))
    wins, losses = 60, 40
    exact = wins * math.log(s1 / s0) + losses * math.log((1 - s1) / (1 - s0))
    assert sprt_llr(wins, 0, losses, 0.0, 35.0) == pytest.approx(exact, rel=1e-3)


def test_llr_matches_the_normal_approximation_for_many_games():
    wins, draws, losses = 550, 100, 350
    games = wins + draws + losses
    mean = (wins + 0.5 * draws) / games
    variance = (wins + 0.25 * draws) / games - mean**2
    s0, s1 = float(score_from_elo(0.0)), float(score_from_elo(35.0))
    approximation = games * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
    assert sprt_llr(wins, draws, losses, 0.0, 35.0) == pytest.approx(approximation, rel=0.06)


def test_decisions_on_synthetic_results():
    config = SprtConfig(elo0=0.0, elo1=35.0, alpha=0.05, beta=0.05)
    assert config.lower_bound == pytest.approx(math.log(0.05 / 0.95))
    assert config.upper_bound == pytest.approx(math.log(0.95 / 0.05))
    strong = sprt(650, 100, 250, config)  # 70% score
    assert strong.decision is SprtDecision.ACCEPT and strong.llr >= config.upper_bound
    weak = sprt(400, 100, 500, config)  # 45% score
    assert weak.decision is SprtDecision.REJECT and weak.llr <= config.lower_bound
    early = sprt(6, 2, 4, config)
    assert early.decision is SprtDecision.CONTINUE
    assert config.lower_bound < early.llr < config.upper_bound
    assert sprt(0, 0, 0, config).llr == 0.0


def test_draws_are_evidence_too():
    # The same score with fewer decisive games has less variance: a stronger verdict.
    decisive = sprt_llr(300, 0, 200, 0.0, 35.0)
    drawish = sprt_llr(200, 200, 100, 0.0, 35.0)
    assert drawish > decisive > 0


def test_extreme_results_stay_finite():
    for counts in [(30, 0, 0), (0, 0, 30), (0, 30, 0)]:
        assert math.isfinite(sprt_llr(*counts, 0.0, 35.0))
    assert sprt(200, 0, 0, SprtConfig()).decision is SprtDecision.ACCEPT
    assert sprt(0, 0, 200, SprtConfig()).decision is SprtDecision.REJECT


@pytest.mark.parametrize("kwargs", [
    {"elo0": 10.0, "elo1": 10.0}, {"alpha": 0.0}, {"beta": 0.6},
])
def test_bad_config_is_refused(kwargs):
    with pytest.raises(ValueError):
        SprtConfig(**kwargs)


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="W=-1"):
        sprt_llr(-1, 0, 0, 0.0, 35.0)


def _sequential_test(true_elo: float, config: SprtConfig, rng: np.random.Generator) -> bool:
    draw_rate = 0.2
    score = float(score_from_elo(true_elo))
    probabilities = [1 - score - draw_rate / 2, draw_rate, score - draw_rate / 2]
    counts = np.zeros(3, dtype=np.int64)
    for _ in range(200):
        counts += rng.multinomial(20, probabilities)
        decision = sprt(counts[2], counts[1], counts[0], config).decision
        if decision is not SprtDecision.CONTINUE:
            return decision is SprtDecision.ACCEPT
    return False


def test_error_rates_hold_in_simulation():
    config = SprtConfig(elo0=0.0, elo1=100.0, alpha=0.05, beta=0.05)
    rng = np.random.default_rng(12345)
    runs = 150
    false_accepts = sum(_sequential_test(0.0, config, rng) for _ in range(runs))
    true_accepts = sum(_sequential_test(100.0, config, rng) for _ in range(runs))
    # Looking every 20 games overshoots the bounds, so the rates sit below alpha / beta;
    # the slack covers the binomial noise of 150 runs (sd about 0.018).
    assert false_accepts / runs <= 0.05 + 0.05
    assert true_accepts / runs >= 0.95 - 0.05
