"""Losses, learning-rate schedule and the Trainer."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from catena_zero.network import NetOutput, NetworkConfig, PolicyValueNet
from catena_zero.rules import get_board
from catena_zero.train import TrainConfig, Trainer, learning_rate_at
from catena_zero.train.losses import (
    LossWeights,
    TargetBatch,
    compute_losses,
    ownership_loss,
    policy_loss,
)
from tests.data.test_data_samples import random_samples

torch.set_num_threads(1)

TINY = NetworkConfig(
    blocks=1, channels=16, global_pool_every=1, global_pool_channels=4,
    policy_head_channels=4, value_head_channels=4, value_hidden=16,
)


def tiny_net(side: int = 3, seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    board = get_board(side)
    return PolicyValueNet(4, 3, board.grid_size, board.cell_grid_index, TINY)


def test_policy_loss_masks_illegal_actions() -> None:
    logits = torch.tensor([[1.0, 2.0, 3.0, 50.0]])
    target = torch.tensor([[0.2, 0.3, 0.5, 0.0]])
    legal = torch.tensor([[True, True, True, False]])
    loss = policy_loss(logits, target, legal)
    changed = policy_loss(logits.clone().index_fill_(1, torch.tensor([3]), -7.0), target, legal)
    torch.testing.assert_close(loss, changed)
    # At logits = log(target) the cross-entropy is the target's entropy.
    best = policy_loss(torch.log(torch.tensor([[0.2, 0.3, 0.5, 1.0]])), target, legal)
    entropy = -(target[:, :3] * target[:, :3].log()).sum()
    torch.testing.assert_close(best, entropy.view(1))
    assert torch.isfinite(loss).all()


def test_ownership_loss_is_smallest_at_the_target() -> None:
    target = torch.tensor([[1.0, -1.0, 0.0]])
    near = ownership_loss(torch.tensor([[4.0, -4.0, 0.0]]), target)
    far = ownership_loss(torch.tensor([[-4.0, 4.0, 2.0]]), target)
    assert near < far


def test_zero_weight_samples_do_not_count() -> None:
    torch.manual_seed(0)
    batch, actions, cells = 4, 5, 4

    def output(scale: float) -> NetOutput:
        return NetOutput(
            policy_logits=torch.randn(batch, actions) * scale,
            value_logits=torch.randn(batch, 3) * scale,
            score=torch.randn(batch) * scale,
            ownership=torch.zeros(batch, cells),
            ownership_logit=torch.randn(batch, cells) * scale,
        )

    targets = TargetBatch(
        policy=torch.full((batch, actions), 1 / actions),
        value=torch.eye(3)[[0, 1, 2, 0]],
        score=torch.tensor([3.0, -2.0, 0.0, 5.0]),
        ownership=torch.zeros(batch, cells),
        legal=torch.ones(batch, actions, dtype=torch.bool),
        weight=torch.tensor([1.0, 1.0, 0.0, 0.0]),
    )
    first, second = output(1.0), output(3.0)
    for name in ("policy_logits", "value_logits", "score", "ownership_logit"):
        getattr(second, name)[:2] = getattr(first, name)[:2]  # same on the weighted rows
    a = compute_losses(first, targets, LossWeights())
    b = compute_losses(second, targets, LossWeights())
    torch.testing.assert_close(a.total, b.total)


def test_learning_rate_schedules() -> None:
    cosine = TrainConfig(learning_rate=1.0, warmup_steps=10, total_steps=110, min_lr_fraction=0.1)
    assert learning_rate_at(0, cosine) == pytest.approx(0.1)
    assert learning_rate_at(9, cosine) == pytest.approx(1.0)
    assert learning_rate_at(10, cosine) == pytest.approx(1.0)
    assert learning_rate_at(60, cosine) == pytest.approx(0.55)
    assert learning_rate_at(110, cosine) == pytest.approx(0.1)
    assert learning_rate_at(10_000, cosine) == pytest.approx(0.1)
    step = TrainConfig(learning_rate=1.0, warmup_steps=0, lr_schedule="step",
                       step_milestones=[5, 8], step_gamma=0.5)
    assert [learning_rate_at(s, step) for s in (0, 4, 5, 7, 8, 100)] == [1, 1, .5, .5, .25, .25]
    constant = TrainConfig(learning_rate=0.3, warmup_steps=0, lr_schedule="constant")
    assert learning_rate_at(12345, constant) == pytest.approx(0.3)


def test_the_cosine_can_run_on_the_self_play_clock() -> None:
    timed = TrainConfig(learning_rate=1.0, warmup_steps=10, min_lr_fraction=0.1,
                        anneal_minutes=2.0)
    assert learning_rate_at(0, timed, selfplay_seconds=600.0) == pytest.approx(0.1)  # warmup
    assert learning_rate_at(50, timed, selfplay_seconds=0.0) == pytest.approx(1.0)
    assert learning_rate_at(50, timed, selfplay_seconds=60.0) == pytest.approx(0.55)
    assert learning_rate_at(50, timed, selfplay_seconds=120.0) == pytest.approx(0.1)
    assert learning_rate_at(10**6, timed, selfplay_seconds=30.0) == pytest.approx(
        learning_rate_at(11, timed, selfplay_seconds=30.0))  # the step no longer matters
    with pytest.raises(ValueError, match="anneal_minutes"):
        TrainConfig(anneal_minutes=-1)
    with pytest.raises(ValueError, match="anneal_minutes sets the cosine"):
        TrainConfig(anneal_minutes=5, lr_schedule="constant")


def test_train_config_refuses_bad_values() -> None:
    with pytest.raises(ValueError, match="learning_rate"):
        TrainConfig(learning_rate=0)
    with pytest.raises(ValueError, match="lr_schedule"):
        TrainConfig(lr_schedule="linear")
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig(batch_size=0)
    for bad in (-0.5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="samples_per_position"):
            TrainConfig(samples_per_position=bad)
    with pytest.raises(ValueError, match="step_milestones"):
        TrainConfig(step_milestones=[5, 2])
    with pytest.raises(ValueError, match="unknown TrainConfig"):
        TrainConfig.from_dict({"lr": 1.0})
    assert TrainConfig.from_dict(TrainConfig().to_dict()) == TrainConfig()


def test_loss_decreases_on_a_fixed_batch() -> None:
    net = tiny_net()
    batch = random_samples(3, 32, seed=4)
    config = TrainConfig(learning_rate=5e-3, warmup_steps=0, lr_schedule="constant",
                         score_weight=0.5, ownership_weight=1.0)
    trainer = Trainer(net, config, "cpu")
    net.eval()
    first = trainer.train_steps([batch])
    later = trainer.train_steps([batch] * 30)
    last = trainer.train_steps([batch])
    assert not net.training  # the mode it was found in
    assert trainer.step == 32
    assert later.steps == 30 and later.samples == 30 * 32
    assert last.loss_total < 0.8 * first.loss_total
    assert last.loss_policy < first.loss_policy
    assert last.loss_value < first.loss_value
    assert last.loss_ownership < first.loss_ownership
    metrics = last.as_dict()
    assert {"loss/total", "loss/policy", "loss/value", "loss/score", "loss/ownership", "lr",
            "grad_norm", "samples_per_second"} - set(metrics) == {"lr"}
    assert math.isclose(metrics["learning_rate"], 5e-3)


def test_weight_decay_skips_norms_and_biases() -> None:
    trainer = Trainer(tiny_net(), TrainConfig(weight_decay=0.5), "cpu")
    decay, no_decay = trainer.optimizer.param_groups
    assert decay["weight_decay"] == 0.5 and no_decay["weight_decay"] == 0.0
    assert all(p.dim() > 1 for p in decay["params"])
    assert all(p.dim() == 1 for p in no_decay["params"])


def test_empty_batch_is_refused() -> None:
    trainer = Trainer(tiny_net(), TrainConfig(), "cpu")
    with pytest.raises(ValueError, match="empty batch"):
        trainer.train_step(random_samples(3, 3).take(np.arange(0)))
