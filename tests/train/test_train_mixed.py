"""Training one net on several board sides at once: padded batches, losses, the window."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from catena_zero.data import (
    MixedBatch,
    ReplayWindow,
    ShardMeta,
    pad_samples,
    random_symmetries,
    shard_filename,
    write_shard,
)
from catena_zero.network import NetworkConfig, PolicyValueNet
from catena_zero.train import TrainConfig, Trainer
from tests.data.test_data_samples import random_samples

torch.set_num_threads(1)

LOSS_NAMES = ("total", "policy", "value", "score", "ownership", "score_belief")


def general_net(normalisation: str = "batch", seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    config = NetworkConfig(blocks=2, channels=16, global_pool_every=1, global_pool_channels=4,
                           policy_head_channels=4, value_head_channels=4, value_hidden=16,
                           normalisation=normalisation, score_belief_bins=5)
    return PolicyValueNet(4, 3, config)  # random_samples: 4 planes, 3 globals


def mixed_batch(seed: int = 0) -> MixedBatch:
    return MixedBatch([random_samples(3, 10, seed=seed), random_samples(4, 12, seed=seed + 1),
                       random_samples(6, 6, seed=seed + 2)])


def trainer_for(net: PolicyValueNet, **changes) -> Trainer:
    values = {"learning_rate": 3e-3, "warmup_steps": 0, "lr_schedule": "constant",
              "score_belief_weight": 0.5, **changes}
    return Trainer(net, TrainConfig(**values), device="cpu")


@pytest.mark.parametrize("normalisation,training", [("none", True), ("batch", False)])
def test_a_mixed_loss_is_the_weighted_mean_of_the_per_side_losses(normalisation: str,
                                                                  training: bool) -> None:
    """Without batch statistics (no normalisation, or batch norm in eval mode) a sample's
    loss does not depend on its batch, so the padded batch's loss is the per-side losses'
    mean weighted by each side's share of the sample weight."""
    net = general_net(normalisation)
    net.train(training)
    trainer = trainer_for(net)
    batch = mixed_batch()
    weights = np.array([part.weight.sum() for part in batch.parts])
    shares = weights / weights.sum()
    mixed = trainer.losses(batch)
    per_side = [trainer.losses(part) for part in batch.parts]
    for name in LOSS_NAMES:
        expected = sum(share * getattr(losses, name) for share, losses in zip(shares, per_side,
                                                                               strict=True))
        torch.testing.assert_close(getattr(mixed, name), expected, atol=1e-5, rtol=1e-5,
                                   msg=name)
    assert trainer.losses(pad_samples(batch)).total.item() == pytest.approx(mixed.total.item())


def test_a_fit_on_a_fixed_mixed_batch_lowers_the_loss() -> None:
    """Sides 3, 4 and 6 in every step: the net memorises the values of the fixed positions
    (random policy targets keep the policy loss near their entropy)."""
    trainer = trainer_for(general_net(), learning_rate=1e-2)
    batch = mixed_batch(seed=4)
    before = trainer.train_steps([batch])
    trainer.train_steps([batch] * 40)
    trainer.net.train()
    with torch.no_grad():
        after = trainer.losses(batch)
    assert after.total.item() < 0.75 * before.loss_total, (after.total, before.loss_total)
    assert after.value.item() < 0.2 * before.loss_value
    assert after.ownership.item() < before.loss_ownership


def test_the_trainer_trains_on_mixed_batches_from_the_window(tmp_path) -> None:
    for sequence, (side, game_type) in enumerate([(3, "komi"), (6, "double"), (3, "komi")]):
        write_shard(tmp_path / shard_filename(sequence), random_samples(side, 20, seed=sequence),
                    ShardMeta(side=side, game_type=game_type, scoring="standard"))
    window = ReplayWindow(tmp_path, window_samples=60, num_planes=4,
                          track_shares={"3/komi/standard": 1, "6/double/standard": 1})
    window.refresh()
    rng = np.random.default_rng(0)
    trainer = trainer_for(general_net())
    batches = (random_symmetries(batch, None, rng) for batch in window.batches(3, 16, rng))
    metrics = trainer.train_steps(batches)
    assert metrics.steps == 3 and metrics.samples == 48 and np.isfinite(metrics.loss_total)
