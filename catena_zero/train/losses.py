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
    cells: torch.Tensor | None = None  # bool [B, C] each sample's own cells in a padded batch
    #   (grid layout, C = G * G); None when every column is a cell of every sample


@dataclass
class LossWeights:
    policy: float = 1.0
    value: float = 1.0
    score: float = 0.05
    ownership: float = 0.1
    score_scale: float = 10.0  # margin points per Huber unit
    huber_delta: float = 1.0  # Huber delta in scaled units
    score_belief: float = 0.0  # score-belief cross-entropy (needs the net's score-belief head)


@dataclass
class Losses:
    total: torch.Tensor  # scalar, weighted sum (the one to backpropagate)
    policy: torch.Tensor  # scalar cross-entropy vs soft targets (nats)
    value: torch.Tensor  # scalar win/draw/loss cross-entropy (nats)
    score: torch.Tensor  # scalar Huber on scaled margins
    ownership: torch.Tensor  # scalar binary cross-entropy per cell (nats)
    score_belief: torch.Tensor  # scalar final-margin distribution cross-entropy (nats); 0 if off


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


def ownership_loss(ownership_logit: torch.Tensor, target: torch.Tensor,
                   cells: torch.Tensor | None = None) -> torch.Tensor:
    """Mean over cells [B] of the binary cross-entropy of ownership = tanh(logit) vs target.

    tanh(z) = 2 sigmoid(2z) - 1, so p(own) = sigmoid(2z) against (1 + target) / 2; an empty
    cell (target 0) asks for 0.5. Off-board cells are not in a one-board [B, C] gather at all;
    in a padded batch `cells` bool [B, C] marks each sample's own, and the mean is over
    those, so a small board's cells weigh as much as on its own.
    """
    probability_target = (target + 1) * 0.5
    cross_entropy = F.binary_cross_entropy_with_logits(
        2 * ownership_logit.float(), probability_target, reduction="none"
    )
    if cells is None:
        return cross_entropy.mean(dim=1)
    on_board = cells.to(cross_entropy.dtype)
    return (cross_entropy * on_board).sum(dim=1) / on_board.sum(dim=1).clamp_min(1.0)


def two_hot(margin: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
    """[B] margins -> [B, K] distributions on the evenly spaced bin `centres` [K]: the weight
    splits between the two centres around the margin so that the mean is the margin (MuZero's
    categorical targets); margins beyond the ends go to the end bins."""
    bins = centres.shape[0]
    low, high = centres[0], centres[-1]
    position = (margin.float().clamp(low, high) - low) / (high - low) * (bins - 1)  # [B]
    lower = position.floor().clamp(max=bins - 2)
    upper_weight = position - lower  # [B] in [0, 1]
    target = torch.zeros(margin.shape[0], bins, device=margin.device)
    lower = lower.long()
    target.scatter_(1, lower[:, None], (1.0 - upper_weight)[:, None])
    target.scatter_add_(1, (lower + 1)[:, None], upper_weight[:, None])
    return target


def score_belief_loss(logits: torch.Tensor, margin: torch.Tensor,
                      centres: torch.Tensor) -> torch.Tensor:
    """Cross-entropy [B] of the two-hot final margin [B] against bin logits [B, K]."""
    return -(two_hot(margin, centres) * F.log_softmax(logits.float(), dim=1)).sum(dim=1)


def compute_losses(output: NetOutput, targets: TargetBatch, weights: LossWeights,
                   score_belief_centres: torch.Tensor | None = None) -> Losses:
    """All losses, weighted by the sample weights and combined with `weights`.

    A padded batch of several boards (grid layout, `targets.cells` set) gives each sample
    the loss it has on its own board: the policy softmax runs over its legal actions only and
    the ownership mean over its own cells, so the batch loss is the sample-weighted mean of
    the per-board losses.

    `score_belief_centres` [K]: the margin at each score-belief bin; needed (with the head's
    `NetOutput.score_belief_logits`) when `weights.score_belief` > 0.
    """
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
        ownership_loss(output.ownership_logit, targets.ownership, targets.cells), targets.weight
    )
    total = (
        weights.policy * policy
        + weights.value * value
        + weights.score * score
        + weights.ownership * ownership
    )
    score_belief = torch.zeros((), device=total.device)
    if weights.score_belief > 0:
        if output.score_belief_logits is None or score_belief_centres is None:
            raise ValueError("a score_belief loss weight > 0 needs a net with a score-belief "
                             "head (network.score_belief_bins > 0) and its bin centres")
        score_belief = _weighted_mean(
            score_belief_loss(output.score_belief_logits, targets.score, score_belief_centres),
            targets.weight,
        )
        total = total + weights.score_belief * score_belief
    return Losses(total=total, policy=policy, value=value, score=score, ownership=ownership,
                  score_belief=score_belief)
