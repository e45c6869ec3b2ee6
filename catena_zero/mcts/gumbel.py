"""Gumbel AlphaZero (Danihelka et al., 2022), following DeepMind's mctx.

Root: Gumbel-top-k sampling of up to `max_considered_actions` actions, then sequential halving
over the simulation budget, written (as in mctx) as a table of the visit count an action must
have to be simulated next. Interior nodes: the deterministic rule that matches the visit
distribution to the improved policy. Completed Q-values fill unvisited actions with the mixed
value; sigma(q) = (c_visit + max visits) * c_scale * q after min-max rescaling to [0, 1].
Improved policy target: softmax(logits + sigma(completed Q)).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from catena_zero.mcts.config import SearchConfig

LOW_LOGIT = -1e9  # floor of root scores, so that a finite score always beats -inf


@functools.lru_cache(maxsize=64)
def considered_visit_table(max_considered: int, num_simulations: int) -> np.ndarray:
    """Row m: the visit count an action needs at each simulation with m considered actions.

    int32 [max_considered + 1, num_simulations]; the sequential-halving schedule of mctx.
    """
    table = np.zeros((max_considered + 1, num_simulations), dtype=np.int32)
    for num_considered in range(max_considered + 1):
        table[num_considered] = _considered_visit_sequence(num_considered, num_simulations)
    table.setflags(write=False)
    return table


def _considered_visit_sequence(max_considered: int, num_simulations: int) -> list[int]:
    if max_considered <= 1:
        return list(range(num_simulations))
    log2max = int(math.ceil(math.log2(max_considered)))
    sequence: list[int] = []
    visits = [0] * max_considered
    num_considered = max_considered
    while len(sequence) < num_simulations:
        num_extra_visits = max(1, int(num_simulations / (log2max * num_considered)))
        for _ in range(num_extra_visits):
            sequence.extend(visits[:num_considered])
            for index in range(num_considered):
                visits[index] += 1
        num_considered = max(2, num_considered // 2)
    return sequence[:num_simulations]


def prior_logits(prior: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Log-prior on legal actions, -inf elsewhere.  # [R, A] float64"""
    with np.errstate(divide="ignore"):
        logits = np.log(np.maximum(prior.astype(np.float64), np.finfo(np.float64).tiny))
    return np.where(legal, logits, -np.inf)


def completed_sigma(
    edge_visits: np.ndarray,  # [R, A] int
    edge_value_sums: np.ndarray,  # [R, A] float, chooser's view
    prior: np.ndarray,  # [R, A] float, sums to 1 over legal actions, 0 elsewhere
    legal: np.ndarray,  # [R, A] bool
    raw_value: np.ndarray,  # [R] float, chooser's view
    config: SearchConfig,
    unvisited_elsewhere: np.ndarray | None = None,  # [R] bool, see below
) -> tuple[np.ndarray, np.ndarray]:
    """(sigma of the rescaled completed Q [R, A], completed Q [R, A]), both float64.

    The completed Q of an unvisited action is the mixed value: the network value blended with
    the prior-weighted mean Q of the visited actions (mctx `_compute_mixed_value`). Q is
    min-max rescaled over the legal actions; sigma is 0 on illegal ones.

    The columns may be a subset of the actions that holds every visited one; then
    `unvisited_elsewhere` marks rows with legal actions outside the subset, whose completed Q
    (the mixed value) still takes part in the min-max rescaling.
    """
    visits = edge_visits.astype(np.float64)
    unvisited = edge_visits == 0
    # Arithmetic instead of np.where: this runs at every root every simulation.
    q_values = edge_value_sums / np.maximum(visits, 1.0)  # 0 where unvisited
    visited_prior = prior * ~unvisited
    sum_prior = visited_prior.sum(axis=1)
    weighted_q = (visited_prior * q_values).sum(axis=1) / np.where(sum_prior > 0, sum_prior, 1.0)
    sum_visits = visits.sum(axis=1)
    mixed_value = (raw_value + sum_visits * weighted_q) / (sum_visits + 1.0)
    completed = q_values + unvisited * mixed_value[:, None]
    # Values lie in [-1, 1], so a pad of 4 keeps illegal actions out of the min and max.
    pad = ~legal * 4.0
    low = (completed + pad).min(axis=1, keepdims=True)
    high = (completed - pad).max(axis=1, keepdims=True)
    if unvisited_elsewhere is not None:
        outside = np.where(unvisited_elsewhere, mixed_value, np.nan)[:, None]
        low, high = np.fmin(low, outside), np.fmax(high, outside)
    span = np.maximum(high - low, 1e-8)
    scale = (config.c_visit + edge_visits.max(axis=1, keepdims=True)) * config.c_scale
    sigma = (completed - low) * (scale / span) * legal
    return sigma, completed


def interior_scores(
    edge_visits: np.ndarray,  # [R, A] int
    edge_value_sums: np.ndarray,  # [R, A] float
    prior: np.ndarray,  # [R, A] float, 0 on illegal actions
    legal: np.ndarray,  # [R, A] bool
    raw_value: np.ndarray,  # [R] float
    config: SearchConfig,
) -> np.ndarray:
    """Deterministic interior rule: improved policy - visits / (1 + total visits).  # [R, A]"""
    sigma, _ = completed_sigma(edge_visits, edge_value_sums, prior, legal, raw_value, config)
    # softmax(log prior + sigma) = prior * exp(sigma) / sum; sigma >= 0 is bounded, shift by max.
    weights = prior * np.exp(sigma - sigma.max(axis=1, keepdims=True))
    total = weights.sum(axis=1, keepdims=True)
    improved = weights / np.where(total > 0, total, 1.0)
    scores = improved - edge_visits / (1.0 + edge_visits.sum(axis=1, keepdims=True))
    return np.where(legal, scores, -np.inf)


def root_scores(
    gumbel: np.ndarray,  # [B, A] float, Gumbel(0, 1) * gumbel_scale
    logits: np.ndarray,  # [B, A] float, -inf on illegal actions
    sigma: np.ndarray,  # [B, A] float
    search_visits: np.ndarray,  # [B, A] int, visits gained in this search
    considered_visit: np.ndarray,  # [B] int
    legal: np.ndarray,  # [B, A] bool
) -> np.ndarray:
    """g + logits + sigma(q) on the actions due for a visit, -inf elsewhere.  # [B, A]"""
    scores = np.maximum(LOW_LOGIT, gumbel + logits + sigma)
    due = legal & (search_visits == considered_visit[:, None])
    return np.where(due, scores, -np.inf)


def due_choice(
    key: np.ndarray,  # [R, K] float, g + logits, -inf on illegal
    sigma: np.ndarray,  # [R, K] float
    search_visits: np.ndarray,  # [R, K] int, visits gained in this search
    considered_visit: np.ndarray,  # [R] int
    legal: np.ndarray,  # [R, K] bool
) -> np.ndarray:
    """The column sequential halving visits next: the best g + logits + sigma(q) among the
    actions due; should none be due (the schedule always leaves one), the best legal one.
    # [R] int"""
    scores = root_scores(key, 0.0, sigma, search_visits, considered_visit, legal)
    stuck = ~np.isfinite(scores.max(axis=1))
    if stuck.any():
        fallback = np.where(legal, np.maximum(LOW_LOGIT, key + sigma), -np.inf)
        scores[stuck] = fallback[stuck]
    return np.argmax(scores, axis=1)


def improved_policy(logits: np.ndarray, sigma: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """softmax(logits + sigma) over legal actions, 0 elsewhere.  # [R, A] float64"""
    combined = np.where(legal, logits + sigma, -np.inf)
    top = combined.max(axis=1, keepdims=True)
    weights = np.exp(combined - np.where(np.isfinite(top), top, 0.0))
    total = weights.sum(axis=1, keepdims=True)
    return weights / np.where(total > 0, total, 1.0)


def num_considered(legal: np.ndarray, config: SearchConfig) -> np.ndarray:
    """Actions considered at each root: min(max_considered_actions, legal count).  # [B] int"""
    return np.minimum(config.max_considered_actions, legal.sum(axis=1))
