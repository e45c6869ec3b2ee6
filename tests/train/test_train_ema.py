"""Averaged weights (`train.ema_decay`): the update rule, what is published, checkpoints of
both formats, exact resume."""

from __future__ import annotations

import hashlib
import io

import pytest
import torch

from catena_zero.pipeline.steps import make_weights_message
from catena_zero.train import (
    CheckpointError,
    Counters,
    TrainConfig,
    Trainer,
    build_network,
    load_checkpoint,
    restore_trainer,
    save_checkpoint,
)
from catena_zero.train import checkpoint as checkpoint_module
from catena_zero.train.trainer import ema_decay_at
from tests.data.test_data_samples import random_samples
from tests.train.test_train_checkpoint import RULES, assert_same_tensors
from tests.train.test_train_trainer import tiny_net

torch.set_num_threads(1)

EMA = TrainConfig(learning_rate=3e-3, warmup_steps=2, total_steps=20, batch_size=16,
                  ema_decay=0.9)


def batches(count: int, seed: int = 0) -> list:
    return [random_samples(3, 16, seed=seed + index) for index in range(count)]


def test_decay_is_capped_early_then_constant() -> None:
    assert ema_decay_at(1, 0.999) == pytest.approx(2 / 11)
    assert ema_decay_at(10, 0.999) == pytest.approx(11 / 20)
    assert ema_decay_at(100_000, 0.999) == 0.999
    assert ema_decay_at(5, 0.0) == 0.0


@pytest.mark.parametrize("decay", [-0.1, 1.0, 1.5, "0.9"])
def test_bad_decay_is_refused_naming_the_field(decay) -> None:
    with pytest.raises(ValueError, match="ema_decay"):
        TrainConfig(ema_decay=decay)


def test_without_decay_the_trained_net_is_published() -> None:
    trainer = Trainer(tiny_net(), TrainConfig(batch_size=16), "cpu")
    assert trainer.ema_net is None and trainer.published_net is trainer.net
    assert trainer.state_dict()["ema_model"] is None


def test_average_follows_the_update_rule_for_weights_and_norm_statistics() -> None:
    trainer = Trainer(tiny_net(seed=3), EMA, "cpu")
    expected = {key: value.clone() for key, value in trainer.net.state_dict().items()}
    for batch in batches(6):
        trainer.train_steps([batch])
        decay = ema_decay_at(trainer.step, EMA.ema_decay)
        for key, value in trainer.net.state_dict().items():
            expected[key] = (decay * expected[key] + (1 - decay) * value
                             if value.is_floating_point() else value.clone())
    averaged = trainer.ema_net.state_dict()
    assert any("running_mean" in key for key in averaged)  # the statistics are averaged too
    for key, value in expected.items():
        torch.testing.assert_close(averaged[key], value, rtol=1e-5, atol=1e-6)
    # The average lags the trained weights and is what self-play receives.
    trained = trainer.net.state_dict()
    assert any(not torch.equal(averaged[key], trained[key]) for key in trained)
    assert_same_tensors(make_weights_message(trainer).state_dict, averaged)
    assert not trainer.ema_net.training
    assert all(not parameter.requires_grad for parameter in trainer.ema_net.parameters())


def test_checkpoint_publishes_the_average_and_keeps_the_trained_weights(tmp_path) -> None:
    trainer = Trainer(tiny_net(), EMA, "cpu")
    trainer.train_steps(batches(4))
    path = save_checkpoint(tmp_path, trainer, Counters(), config={}, rules=RULES)
    checkpoint = load_checkpoint(path)
    assert checkpoint.format_version == checkpoint_module.CHECKPOINT_FORMAT_VERSION == 2
    assert_same_tensors(checkpoint.ema_state, trainer.ema_net.state_dict())
    assert_same_tensors(checkpoint.model_state, trainer.net.state_dict())
    assert_same_tensors(build_network(checkpoint).state_dict(), trainer.ema_net.state_dict())
    assert_same_tensors(checkpoint.net.state_dict(), trainer.ema_net.state_dict())
    assert_same_tensors(build_network(checkpoint, weights="trained").state_dict(),
                        trainer.net.state_dict())
    with pytest.raises(ValueError, match="weights"):
        build_network(checkpoint, weights="average")


def test_resume_with_an_average_is_exact(tmp_path) -> None:
    straight = Trainer(tiny_net(seed=5), EMA, "cpu")
    straight.train_steps(batches(6))

    first = Trainer(tiny_net(seed=5), EMA, "cpu")
    first.train_steps(batches(6)[:3])
    path = save_checkpoint(tmp_path, first, Counters(), config={}, rules=RULES)
    checkpoint = load_checkpoint(path)
    resumed = Trainer(build_network(checkpoint, load_weights=False), EMA, "cpu")
    restore_trainer(checkpoint, resumed)
    resumed.train_steps(batches(6)[3:])

    assert_same_tensors(resumed.net.state_dict(), straight.net.state_dict())
    assert_same_tensors(resumed.ema_net.state_dict(), straight.ema_net.state_dict())


def write_version_one(path, source) -> None:
    """`source`'s checkpoint rewritten as format version 1 (no averaged weights)."""
    data = source.read_bytes()
    body = data[len(checkpoint_module.MAGIC):].split(b"\n", 2)[2]
    payload = torch.load(io.BytesIO(body), weights_only=True)
    del payload["ema_model"]
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    body = buffer.getvalue()
    path.write_bytes(checkpoint_module.MAGIC + b"1\n"
                     + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)


def test_version_one_checkpoints_still_load_and_seed_a_new_average(tmp_path) -> None:
    plain = Trainer(tiny_net(), TrainConfig(batch_size=16), "cpu")
    plain.train_steps(batches(2))
    source = save_checkpoint(tmp_path / "new", plain, Counters(), config={}, rules=RULES)
    old = tmp_path / "old.pt"
    write_version_one(old, source)
    checkpoint = load_checkpoint(old)
    assert checkpoint.format_version == 1 and checkpoint.ema_state is None
    assert_same_tensors(checkpoint.net.state_dict(), plain.net.state_dict())
    # Turning the average on when resuming an older run starts it from the trained weights.
    resumed = Trainer(build_network(checkpoint, load_weights=False), EMA, "cpu")
    restore_trainer(checkpoint, resumed)
    assert_same_tensors(resumed.ema_net.state_dict(), plain.net.state_dict())
    # A version-1 body carrying the version-2 key is foreign, not silently accepted.
    body_with_key = source.read_bytes().replace(
        checkpoint_module.MAGIC + b"2\n", checkpoint_module.MAGIC + b"1\n", 1)
    bad = tmp_path / "mixed.pt"
    bad.write_bytes(body_with_key)
    with pytest.raises(CheckpointError, match="unexpected contents"):
        load_checkpoint(bad)


def test_average_of_a_mismatched_shape_is_refused(tmp_path) -> None:
    trainer = Trainer(tiny_net(), EMA, "cpu")
    trainer.train_steps(batches(1))
    checkpoint = load_checkpoint(save_checkpoint(tmp_path, trainer, Counters(), config={},
                                                 rules=RULES))
    name = next(iter(checkpoint.ema_state))
    checkpoint.ema_state[name] = torch.zeros(1)
    with pytest.raises(CheckpointError, match="does not fit"):
        build_network(checkpoint)
    with pytest.raises(CheckpointError, match="does not fit"):
        restore_trainer(checkpoint, Trainer(tiny_net(), EMA, "cpu"))
