"""Training losses of the policy-value net. All per-sample losses are averaged with the
sample weights (playout cap: weight 0 samples contribute nothing).

Example::

    from catena_zero.train.losses import LossWeights, compute_losses
    losses = compute_losses(net(planes, globals_), targets, weights=LossWeights())
    losses.total.backward()
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from catena_zero.network.model import NetOutput

# Stands in for -inf on illegal actions: finite so that 0 * masked stays 0 (not NaN).
ILLEGAL_LOGIT = -1e9


@dataclass
class TargetBatch:
    """Training targets as tensors on the training device (see `Samples` for meanings)."""

    policy: torch.Tensor  # float [B, A], rows sum to 1
    value: torch.Tensor  # float [B, 3] win/draw/loss distribution
    score: torch.Tensor  # float [B] margin points, side to move's view
    ownership: torch.Tensor  # float [B, C] in {-1, 0, 1}
    legal: torch.Tensor  # bool [B, A]
    weight: torch.Tensor  # float [B]


@dataclass
class LossWeights:
    policy: float = 1.0
    value: float = 1.0
    score: float = 0.05
    ownership: float = 0.1
    score_scale: float = 10.0  # margin points per Huber unit
    huber_delta: float = 1.0  # Huber delta in scaled units


@dataclass
class Losses:
    total: torch.Tensor  # scalar, weighted sum (the one to backpropagate)
    policy: torch.Tensor  # scalar cross-entropy vs soft targets (nats)
    value: torch.Tensor  # scalar win/draw/loss cross-entropy (nats)
    score: torch.Tensor  # scalar Huber on scaled margins
    ownership: torch.Tensor  # scalar binary cross-entropy per cell (nats)


def _weighted_mean(per_sample: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return (per_sample * weight).sum() / weight.sum().clamp_min(1e-8)


def policy_loss(logits: torch.Tensor, target: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Cross-entropy [B] of soft targets [B, A] against logits [B, A] renormalised over legal
    actions (illegal logits are masked before the softmax)."""
    masked = torch.where(legal, logits.float(), torch.full_like(logits.float(), ILLEGAL_LOGIT))
    return -(target * F.log_softmax(masked, dim=1)).sum(dim=1)


def value_loss(value_logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy [B] of win/draw/loss targets [B, 3] against logits [B, 3]."""
    return -(target * F.log_softmax(value_logits.float(), dim=1)).sum(dim=1)


def score_loss(
    score: torch.Tensor, target: torch.Tensor, scale: float, delta: float
) -> torch.Tensor:
    """Huber [B] on margins divided by `scale` (quadratic within `delta`, linear beyond)."""
    return F.huber_loss(score.float() / scale, target / scale, reduction="none", delta=delta)


def ownership_loss(ownership_logit: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean over cells [B] of the binary cross-entropy of ownership = tanh(logit) vs target.

    tanh(z) = 2 sigmoid(2z) - 1, so p(own) = sigmoid(2z) against (1 + target) / 2; an empty
    cell (target 0) asks for 0.5. Off-board cells are not in the [B, C] gather at all.
    """
    probability_target = (target + 1) * 0.5
    cross_entropy = F.binary_cross_entropy_with_logits(
        2 * ownership_logit.float(), probability_target, reduction="none"
    )
    return cross_entropy.mean(dim=1)


def compute_losses(output: NetOutput, targets: TargetBatch, weights: LossWeights) -> Losses:
    """All losses, weighted by the sample weights and combined with `weights`."""
    if output.ownership_logit is None:
        raise ValueError("compute_losses needs NetOutput.ownership_logit (from net.forward)")
    policy = _weighted_mean(
        policy_loss(output.policy_logits, targets.policy, targets.legal), targets.weight
    )
    value = _weighted_mean(value_loss(output.value_logits, targets.value), targets.weight)
    score = _weighted_mean(
        score_loss(output.score, targets.score, weights.score_scale, weights.huber_delta),
        targets.weight,
    )
    ownership = _weighted_mean(
        ownership_loss(output.ownership_logit, targets.ownership), targets.weight
    )
    total = (
        weights.policy * policy
        + weights.value * value
        + weights.score * score
        + weights.ownership * ownership
    )
    return Losses(total=total, policy=policy, value=value, score=score, ownership=ownership)
