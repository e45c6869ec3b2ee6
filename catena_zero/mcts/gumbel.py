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
    prior: np.ndarray,  # [R, A] float, sums to 1 over legal actions
    legal: np.ndarray,  # [R, A] bool
    raw_value: np.ndarray,  # [R] float, chooser's view
    config: SearchConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """(sigma of the rescaled completed Q [R, A], completed Q [R, A]), both float64.

    The completed Q of an unvisited action is the mixed value: the network value blended with
    the prior-weighted mean Q of the visited actions (mctx `_compute_mixed_value`).
    """
    visited = edge_visits > 0
    q_values = edge_value_sums / np.maximum(edge_visits, 1)
    prior64 = np.maximum(prior.astype(np.float64), np.finfo(np.float32).tiny)
    visited_prior = np.where(visited, prior64, 0.0)
    sum_prior = visited_prior.sum(axis=1)
    weighted_q = (visited_prior * q_values).sum(axis=1) / np.where(sum_prior > 0, sum_prior, 1.0)
    sum_visits = edge_visits.sum(axis=1)
    mixed_value = (raw_value + sum_visits * weighted_q) / (sum_visits + 1.0)
    completed = np.where(visited, q_values, mixed_value[:, None])
    low = np.where(legal, completed, np.inf).min(axis=1, keepdims=True)
    high = np.where(legal, completed, -np.inf).max(axis=1, keepdims=True)
    span = np.maximum(high - low, 1e-8)
    rescaled = np.where(legal, (completed - np.where(np.isfinite(low), low, 0.0)) / span, 0.0)
    max_visits = edge_visits.max(axis=1, keepdims=True)
    sigma = (config.c_visit + max_visits) * config.c_scale * rescaled
    return sigma, completed


def interior_scores(
    edge_visits: np.ndarray,  # [R, A] int
    edge_value_sums: np.ndarray,  # [R, A] float
    prior: np.ndarray,  # [R, A] float
    legal: np.ndarray,  # [R, A] bool
    raw_value: np.ndarray,  # [R] float
    config: SearchConfig,
) -> np.ndarray:
    """Deterministic interior rule: improved policy - visits / (1 + total visits).  # [R, A]"""
    sigma, _ = completed_sigma(edge_visits, edge_value_sums, prior, legal, raw_value, config)
    improved = improved_policy(prior_logits(prior, legal), sigma, legal)
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
