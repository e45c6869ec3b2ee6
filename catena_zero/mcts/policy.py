"""Policies over the legal actions of a batch of positions: the prior a search expands a node
with (the network's logits, softmaxed over the legal moves only) and the moves a player takes
from a search's policy (sampled at a temperature, or the most visited).
"""

from __future__ import annotations

import numpy as np

from catena_zero.rules import NO_ACTION


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Softmax of `logits` over legal actions, 0 elsewhere.  # [B, A] float32"""
    masked = np.where(legal, logits.astype(np.float32, copy=False), -np.inf)
    top = masked.max(axis=1, keepdims=True)
    weights = np.exp(masked - np.where(np.isfinite(top), top, 0.0))
    total = weights.sum(axis=1, keepdims=True)
    return (weights / np.where(total > 0, total, 1.0)).astype(np.float32)


def sample_actions(
    policy: np.ndarray, temperature: float | np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Sample from policy ** (1 / temperature) per row; temperature 0 takes the argmax.

    `policy`: [B, A] non-negative (visit counts or a distribution); `temperature`: scalar or
    [B]. Rows summing to 0 give NO_ACTION.  # [B] int64
    """
    policy = np.asarray(policy, dtype=np.float64)
    temperature = np.broadcast_to(np.asarray(temperature, dtype=np.float64), policy.shape[:1])
    if np.any(temperature < 0):
        raise ValueError(f"temperature must be >= 0, got {temperature.min()}")
    greedy = np.argmax(policy, axis=1)
    safe_temperature = np.where(temperature > 0, temperature, 1.0)[:, None]
    with np.errstate(divide="ignore"):
        log_weights = np.where(policy > 0, np.log(np.maximum(policy, 1e-300)), -np.inf)
    scaled = log_weights / safe_temperature
    top = scaled.max(axis=1, keepdims=True)
    weights = np.exp(scaled - np.where(np.isfinite(top), top, 0.0))
    cumulative = np.cumsum(weights, axis=1)
    total = cumulative[:, -1:]
    draws = rng.random((policy.shape[0], 1)) * total
    sampled = np.minimum((cumulative <= draws).sum(axis=1), policy.shape[1] - 1)
    actions = np.where(temperature > 0, sampled, greedy).astype(np.int64)
    return np.where(policy.sum(axis=1) > 0, actions, NO_ACTION)
