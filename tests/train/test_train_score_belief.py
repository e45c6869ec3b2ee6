"""The score-belief head (KataGo's final-margin distribution): config, targets, loss, export."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from catena_zero.export.model_file import load_model_file, metadata_for, save_model_file
from catena_zero.network import NetworkConfig, PolicyValueNet
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Engine, Rules, get_board, observe
from catena_zero.train import TrainConfig, Trainer
from catena_zero.train.checkpoint import (
    Counters,
    build_network,
    load_checkpoint,
    save_checkpoint,
)
from catena_zero.train.losses import two_hot
from tests.data.test_data_samples import random_samples

torch.set_num_threads(1)

HEAD = dict(blocks=1, channels=16, global_pool_every=1, global_pool_channels=4,
            policy_head_channels=4, value_head_channels=4, value_hidden=16)


def net_with_head(bins: int = 21, span: float = 10.0, planes: int = NUM_PLANES,
                  globals_: int = NUM_GLOBALS) -> PolicyValueNet:
    """A side-3 net with the head; `random_samples` batches have 4 planes and 3 globals."""
    torch.manual_seed(0)
    board = get_board(3)
    config = NetworkConfig(**HEAD, score_belief_bins=bins, score_belief_range=span)
    return PolicyValueNet(planes, globals_, board.grid_size, board.cell_grid_index, config)


def test_centres_span_the_range_evenly() -> None:
    centres = NetworkConfig(score_belief_bins=5, score_belief_range=4.0).score_belief_centres()
    assert centres == [-4.0, -2.0, 0.0, 2.0, 4.0]
    assert NetworkConfig().score_belief_centres() == []


@pytest.mark.parametrize("field, value", [("score_belief_bins", 1), ("score_belief_bins", -3),
                                          ("score_belief_bins", True),
                                          ("score_belief_bins", 2.5),
                                          ("score_belief_range", 0.0),
                                          ("score_belief_range", -1.0)])
def test_bad_head_settings_are_refused_by_name(field: str, value) -> None:
    with pytest.raises(ValueError, match=f"NetworkConfig.{field}"):
        NetworkConfig(**{field: value})


def test_two_hot_keeps_the_mean_and_clips_to_the_ends() -> None:
    centres = torch.linspace(-10.0, 10.0, 21)
    margins = torch.tensor([-10.0, -3.5, 0.0, 0.25, 7.5, 10.0, 25.0, -40.0])
    target = two_hot(margins, centres)
    torch.testing.assert_close(target.sum(dim=1), torch.ones(8))
    assert (target >= 0).all() and ((target > 0).sum(dim=1) <= 2).all()
    torch.testing.assert_close(target @ centres, margins.clamp(-10.0, 10.0))
    assert target[6, -1] == 1.0 and target[7, 0] == 1.0


def test_head_is_optional_and_shaped() -> None:
    board = get_board(3)
    planes = torch.zeros(6, NUM_PLANES, board.grid_size, board.grid_size)
    globals_ = torch.zeros(6, NUM_GLOBALS)
    assert net_with_head(bins=21)(planes, globals_).score_belief_logits.shape == (6, 21)
    plain = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index,
                           NetworkConfig(**HEAD))
    assert plain(planes, globals_).score_belief_logits is None


def test_training_fits_the_margin_distribution() -> None:
    net = net_with_head(planes=4, globals_=3)
    batch = random_samples(3, 32, seed=4)
    trainer = Trainer(net, TrainConfig(learning_rate=5e-3, warmup_steps=0,
                                       lr_schedule="constant", score_belief_weight=1.0), "cpu")
    first = trainer.train_steps([batch])
    trainer.train_steps([batch] * 30)
    last = trainer.train_steps([batch])
    assert first.loss_score_belief > 0
    assert last.loss_score_belief < 0.8 * first.loss_score_belief
    assert "loss/score_belief" in last.as_dict()


def test_weight_without_a_head_is_refused() -> None:
    board = get_board(3)
    plain = PolicyValueNet(4, 3, board.grid_size, board.cell_grid_index, NetworkConfig(**HEAD))
    with pytest.raises(ValueError, match="score_belief_bins"):
        Trainer(plain, TrainConfig(score_belief_weight=0.5), "cpu")
    with pytest.raises(ValueError, match="TrainConfig.score_belief_weight"):
        TrainConfig(score_belief_weight=-1.0)


def test_head_survives_checkpoint_and_export(tmp_path) -> None:
    net = net_with_head()
    trainer = Trainer(net, TrainConfig(score_belief_weight=0.5), "cpu")
    path = save_checkpoint(tmp_path, trainer, Counters(), config={},
                           rules={"side": 3, "game_type": "komi", "scoring": "standard"})
    restored = build_network(load_checkpoint(path))
    assert restored.config.score_belief_bins == 21
    for name, value in restored.state_dict().items():
        torch.testing.assert_close(value, net.state_dict()[name])
    rules = Rules(side=3)
    net.eval()
    metadata = metadata_for(net, rules, network_config=net.config.to_dict(), elo=None,
                            training_steps=trainer.step, source="test")
    model = load_model_file(save_model_file(net, metadata, tmp_path / "model.pt"))
    engine = Engine(rules)
    planes, globals_ = observe(engine, engine.new_games(3, komi=np.array([0, 5, 9])))
    with torch.no_grad():
        expected = net(torch.from_numpy(planes), torch.from_numpy(globals_))
    np.testing.assert_allclose(model.run(planes, globals_)["value_logits"],
                               expected.value_logits.numpy(), atol=1e-5)
