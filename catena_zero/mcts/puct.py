"""AlphaZero PUCT (with Dirichlet noise at the root) and plain UCB1 selection rules.

Every function works on the R nodes being descended at one depth, as `[R, A]` arrays gathered
from the tree; Q-values are from the view of the player choosing at the node.
"""

from __future__ import annotations

import numpy as np

from catena_zero.mcts.config import SearchConfig


def mean_values(edge_visits: np.ndarray, edge_value_sums: np.ndarray) -> np.ndarray:
    """Mean backed-up value of each edge, 0 where unvisited.  # [R, A] float64"""
    return edge_value_sums / np.maximum(edge_visits, 1)


def puct_scores(
    edge_visits: np.ndarray,  # [R, A] int
    edge_value_sums: np.ndarray,  # [R, A] float, chooser's view
    prior: np.ndarray,  # [R, A] float (root: with noise)
    legal: np.ndarray,  # [R, A] bool
    node_visits: np.ndarray,  # [R] int
    node_value_sums: np.ndarray,  # [R] float, chooser's view
    config: SearchConfig,
) -> np.ndarray:
    """Q + c(N) * P * sqrt(N) / (1 + n), -inf on illegal actions.  # [R, A] float64

    c(N) = c_puct + log((N + c_base + 1) / c_base) as in AlphaZero; unvisited children take the
    first-play-urgency value (parent's mean value - fpu_reduction, or fpu_value).
    """
    node_visits = node_visits.astype(np.float64)
    if config.fpu_mode == "parent":
        unvisited_value = node_value_sums / np.maximum(node_visits, 1.0) - config.fpu_reduction
    else:
        unvisited_value = np.full(node_visits.shape, config.fpu_value)
    q_values = np.where(
        edge_visits > 0, mean_values(edge_visits, edge_value_sums), unvisited_value[:, None]
    )
    exploration = config.c_puct + np.log(
        (node_visits + config.c_puct_base + 1.0) / config.c_puct_base
    )
    scale = exploration * np.sqrt(node_visits)  # [R]
    scores = q_values + scale[:, None] * prior / (1.0 + edge_visits)
    return np.where(legal, scores, -np.inf)


def ucb1_scores(
    edge_visits: np.ndarray,  # [R, A] int
    edge_value_sums: np.ndarray,  # [R, A] float, chooser's view
    legal: np.ndarray,  # [R, A] bool
    node_visits: np.ndarray,  # [R] int
    config: SearchConfig,
) -> np.ndarray:
    """UCB1: Q + c * sqrt(ln N / n); unvisited legal actions first.  # [R, A] float64"""
    log_visits = np.log(np.maximum(node_visits, 1).astype(np.float64))[:, None]
    visits = np.maximum(edge_visits, 1)
    scores = mean_values(edge_visits, edge_value_sums) + config.c_uct * np.sqrt(log_visits / visits)
    scores = np.where(edge_visits > 0, scores, np.inf)
    return np.where(legal, scores, -np.inf)


def noisy_root_prior(
    prior: np.ndarray,  # [B, A] float
    legal: np.ndarray,  # [B, A] bool
    config: SearchConfig,
    rng: np.random.Generator,
) -> np.ndarray:
    """(1 - eps) * prior + eps * Dirichlet(alpha) over each root's legal actions.  # [B, A]"""
    if config.dirichlet_fraction == 0:
        return prior
    # A Dirichlet over a varying support is a normalised vector of Gamma(alpha) draws.
    gamma = rng.standard_gamma(config.dirichlet_alpha, size=prior.shape) * legal
    total = gamma.sum(axis=1, keepdims=True)
    noise = gamma / np.where(total > 0, total, 1.0)
    fraction = config.dirichlet_fraction
    return ((1.0 - fraction) * prior + fraction * noise).astype(np.float32)


def visit_policy(edge_visits: np.ndarray) -> np.ndarray:
    """Visit distribution at the roots (zeros where nothing was visited).  # [B, A] float32"""
    total = edge_visits.sum(axis=1, keepdims=True)
    return (edge_visits / np.maximum(total, 1)).astype(np.float32)


def most_visited(edge_visits: np.ndarray, q_values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Argmax of visits, ties broken by Q, never an illegal action.  # [B] int"""
    # Visits are integers, so a tie-break in [0, 0.5) cannot beat a higher count.
    tie_break = (np.clip(q_values, -1.0, 1.0) + 1.0) * 0.2
    scores = np.where(legal, edge_visits + tie_break, -np.inf)
    return np.argmax(scores, axis=1)
