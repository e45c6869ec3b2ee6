"""Mixed minibatches cut into buckets of board sides (`train.side_buckets`): each bucket on
its own grid, batch norm over all of them, so a step is that of the one padded batch."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from catena_zero.data import MixedBatch
from catena_zero.train import TrainConfig, Trainer
from catena_zero.train.trainer import LOSS_NAMES, side_buckets
from tests.data.test_data_samples import random_samples
from tests.train.test_train_mixed import general_net

torch.set_num_threads(1)


def wide_batch(seed: int = 0) -> MixedBatch:
    """Sides 3 to 10, a few samples each, as the general mix's minibatches hold them."""
    sizes = {3: 5, 4: 9, 5: 3, 6: 12, 7: 6, 8: 5, 9: 2, 10: 3}
    return MixedBatch([random_samples(side, count, seed=seed + side)
                       for side, count in sizes.items()])


def trainer_with(net, buckets: list[int], **changes) -> Trainer:
    values = {"learning_rate": 3e-3, "warmup_steps": 0, "lr_schedule": "constant",
              "score_belief_weight": 0.5, "side_buckets": buckets, **changes}
    return Trainer(net, TrainConfig(**values), device="cpu")


def test_buckets_group_parts_by_the_bounds_with_shares_of_the_sample_weight() -> None:
    batch = wide_batch()
    buckets = side_buckets(batch, [6, 8, 10])
    assert [sorted(part.side for part in bucket.parts) for bucket, _ in buckets] == [
        [3, 4, 5, 6], [7, 8], [9, 10]]
    weights = [sum(float(part.weight.sum()) for part in bucket.parts) for bucket, _ in buckets]
    assert [share for _, share in buckets] == pytest.approx(
        [weight / sum(weights) for weight in weights])
    assert sum(share for _, share in buckets) == pytest.approx(1.0)
    # A side above the last bound makes a bucket of its own; one part stays a Samples.
    tail = side_buckets(batch, [4])
    assert [bucket.side if not isinstance(bucket, MixedBatch) else sorted(bucket.sides)
            for bucket, _ in tail] == [[3, 4], 5, 6, 7, 8, 9, 10]


def test_no_bounds_one_board_or_a_padded_batch_stay_whole() -> None:
    batch = wide_batch()
    assert side_buckets(batch, []) == [(batch, 1.0)]
    one = random_samples(6, 4)
    assert side_buckets(one, [6, 8, 10]) == [(one, 1.0)]
    single = MixedBatch([one])
    assert side_buckets(single, [6, 10]) == [(single, 1.0)]


def test_zero_weight_buckets_share_by_sample_counts() -> None:
    batch = wide_batch()
    for part in batch.parts:
        part.weight[:] = 0.0
    shares = [share for _, share in side_buckets(batch, [6, 10])]
    assert shares == pytest.approx([29 / 45, 16 / 45])


@pytest.mark.parametrize("bounds", [[6, 8, 10], [3, 4, 5, 6, 7, 8, 9, 10], [5]])
def test_a_bucketed_step_is_the_padded_step(bounds: list[int]) -> None:
    """Same losses, same gradients, same batch-norm running statistics and the same
    weights after a few optimiser steps as one batch padded to the 19 x 19 grid."""
    padded = trainer_with(general_net(seed=3), [])
    bucketed = trainer_with(copy.deepcopy(padded.net), bounds)
    batches = [wide_batch(seed) for seed in range(3)]
    padded.net.train()
    bucketed.net.train()
    whole, cut = padded.losses(batches[0]), bucketed.losses(batches[0])
    for name in LOSS_NAMES:
        torch.testing.assert_close(getattr(cut, name), getattr(whole, name), atol=2e-5,
                                   rtol=2e-5, msg=name)
    whole.total.backward()
    cut.total.backward()
    for (name, a), b in zip(padded.net.named_parameters(), bucketed.net.parameters(),
                            strict=True):
        torch.testing.assert_close(b.grad, a.grad, atol=2e-5, rtol=2e-4, msg=name)
    padded_metrics = padded.train_steps(batches)
    bucketed_metrics = bucketed.train_steps(batches)
    assert bucketed_metrics.loss_total == pytest.approx(padded_metrics.loss_total, rel=1e-4)
    # The global inputs' bias feeds batch norm, which cancels it: its gradient is rounding
    # noise that AdamW scales up to full steps, in either layout. Every other tensor agrees.
    for (name, a), b in zip(padded.net.state_dict().items(), bucketed.net.state_dict().values(),
                            strict=True):
        if name != "global_linear.bias":
            torch.testing.assert_close(b, a, atol=1e-4, rtol=1e-3, msg=name)


def test_bucketed_training_without_normalisation_matches_too() -> None:
    padded = trainer_with(general_net("none", seed=5), [])
    bucketed = trainer_with(copy.deepcopy(padded.net), [6, 8])
    batch = wide_batch(7)
    torch.testing.assert_close(bucketed.losses(batch).total, padded.losses(batch).total,
                               atol=2e-5, rtol=2e-5)


def test_eval_mode_buckets_give_each_sample_its_own_outputs() -> None:
    """In eval mode (running statistics) a bucket's outputs are those of its samples alone."""
    net = general_net(seed=2).eval()
    batch = wide_batch(1)
    trainer = trainer_with(net, [6, 10])
    inputs = []
    for bucket, _ in side_buckets(batch, [6, 10]):
        planes, globals_, _, sides = trainer._to_device(bucket)
        inputs.append((planes, globals_, sides))
    with torch.no_grad():
        outputs = net.forward_buckets(inputs)
        alone = [net(planes, globals_, sides=sides) for planes, globals_, sides in inputs]
    for output, single in zip(outputs, alone, strict=True):
        torch.testing.assert_close(output.policy_logits, single.policy_logits)
        torch.testing.assert_close(output.value_logits, single.value_logits)
        assert np.array_equal(output.sides.numpy(), single.sides.numpy())


def test_forward_buckets_refuses_no_buckets() -> None:
    with pytest.raises(ValueError, match="at least one bucket"):
        general_net().forward_buckets([])


def test_side_buckets_config_is_checked() -> None:
    with pytest.raises(ValueError, match="side_buckets"):
        TrainConfig(side_buckets=[6, 4])
    with pytest.raises(ValueError, match="side_buckets"):
        TrainConfig(side_buckets=[0])
