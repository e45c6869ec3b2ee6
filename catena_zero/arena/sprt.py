"""Sequential probability ratio test on Elo bounds, with draws (generalised SPRT).

H0: the candidate is `elo0` Elo points stronger than the opponent; H1: `elo1`
points (elo1 > elo0). Each game scores 1, 1/2 or 0. The log-likelihood ratio is
the generalised one for a trinomial: for each hypothesis the outcome
probabilities are the maximum-likelihood ones whose expected score equals the
hypothesis' score (the empirical frequencies reweighted by exponential tilting),
as in Van den Bergh's GSPRT used by Fishtest. Wald's bounds:
log(beta / (1 - alpha)) and log((1 - beta) / alpha).

Pairs of games from one opening are treated as independent games, which
slightly understates the variance when the opening favours one colour.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from catena_zero.arena.stats import score_from_elo

# A zero count is replaced by this pseudo-count: with only wins, say, no
# distribution on the observed outcomes has an expected score below 1, and the
# ratio would be undefined.
_ZERO_COUNT_REPLACEMENT = 1e-3

_OUTCOME_SCORES = np.array([0.0, 0.5, 1.0])  # loss, draw, win


class SprtDecision(StrEnum):
    ACCEPT = "accept"  # H1: the candidate is at least elo1 stronger (promote)
    REJECT = "reject"  # H0: it is at most elo0 stronger
    CONTINUE = "continue"  # not enough evidence yet


@dataclass(frozen=True)
class SprtConfig:
    elo0: float = 0.0  # Elo difference under H0 (the candidate is not better)
    elo1: float = 35.0  # Elo difference under H1 (35 Elo is about a 55% score)
    alpha: float = 0.05  # probability of accepting H1 when H0 holds
    beta: float = 0.05  # probability of accepting H0 when H1 holds

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError(f"need elo1 > elo0, got elo0={self.elo0}, elo1={self.elo1}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise ValueError(f"{name} must lie in (0, 0.5), got {value}")

    @property
    def lower_bound(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper_bound(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)


@dataclass(frozen=True)
class SprtResult:
    decision: SprtDecision
    llr: float  # log-likelihood ratio of H1 against H0
    lower_bound: float
    upper_bound: float


def _tilted_probabilities(frequencies: np.ndarray, target_score: float) -> np.ndarray:
    """Maximum-likelihood outcome probabilities with expected score `target_score`.

    frequencies: [3] empirical probabilities of loss/draw/win, all positive.
    The solution is p_i = f_i / (1 + lam * (a_i - s)); lam is found by bisection
    on the interval where every denominator stays positive. Plain floats: three
    terms are faster without numpy, and the SPRT is called after every chunk.
    """
    f = [float(x) for x in frequencies]
    d = [float(a) - target_score for a in _OUTCOME_SCORES]
    # 1 + lam * d_i > 0 for all i: lam in (-1 / max(d), -1 / min(d)).
    lam_low, lam_high = -1.0 / max(d), -1.0 / min(d)
    margin = 1e-12 * (lam_high - lam_low)
    lam_low, lam_high = lam_low + margin, lam_high - margin
    for _ in range(100):
        lam = 0.5 * (lam_low + lam_high)
        # Strictly decreasing in lam; its root makes the expected score equal the target.
        constraint = sum(fi * di / (1.0 + lam * di) for fi, di in zip(f, d, strict=True))
        if constraint > 0.0:
            lam_low = lam
        else:
            lam_high = lam
    lam = 0.5 * (lam_low + lam_high)
    probabilities = np.array([fi / (1.0 + lam * di) for fi, di in zip(f, d, strict=True)])
    return probabilities / probabilities.sum()


def sprt_llr(wins: float, draws: float, losses: float, elo0: float, elo1: float) -> float:
    """Generalised log-likelihood ratio of H1 (elo1) against H0 (elo0) for a trinomial."""
    counts = np.array([losses, draws, wins], dtype=np.float64)
    if np.any(counts < 0) or not np.all(np.isfinite(counts)):
        raise ValueError(
            f"counts must be finite and non-negative, got W={wins} D={draws} L={losses}"
        )
    games = counts.sum()
    if games == 0:
        return 0.0
    regularised = np.where(counts == 0, _ZERO_COUNT_REPLACEMENT, counts)
    frequencies = regularised / regularised.sum()
    score0 = float(score_from_elo(elo0))
    score1 = float(score_from_elo(elo1))
    probabilities0 = _tilted_probabilities(frequencies, score0)
    probabilities1 = _tilted_probabilities(frequencies, score1)
    return float(games * np.sum(frequencies * np.log(probabilities1 / probabilities0)))


def sprt(wins: float, draws: float, losses: float, config: SprtConfig) -> SprtResult:
    """Decide from the results so far: accept H1, reject it (accept H0), or continue."""
    llr = sprt_llr(wins, draws, losses, config.elo0, config.elo1)
    if llr >= config.upper_bound:
        decision = SprtDecision.ACCEPT
    elif llr <= config.lower_bound:
        decision = SprtDecision.REJECT
    else:
        decision = SprtDecision.CONTINUE
    return SprtResult(decision, llr, config.lower_bound, config.upper_bound)
