"""export_model: from a training checkpoint or a track's champion, with Elo and steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.arena.elo import EloFit, write_elo_csv
from catena_zero.arena.registry import ChampionEntry, ChampionRegistry, Track
from catena_zero.cli.common import ConfigError
from catena_zero.cli.export import main as export_main
from catena_zero.export.exporter import LADDER_REFERENCE, export_model
from catena_zero.export.model_file import load_model_file
from catena_zero.rules import Engine, Rules, observe
from catena_zero.train import CheckpointError, Counters, TrainConfig, Trainer, save_checkpoint
from tests.export.tiny_model import tiny_network

RULES = {"side": 3, "game_type": "komi", "scoring": "standard"}


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    torch.set_num_threads(1)
    directory = tmp_path_factory.mktemp("checkpoints")
    trainer = Trainer(tiny_network(3, seed=5), TrainConfig(), device="cpu")
    return save_checkpoint(directory, trainer, Counters(step=0, iteration=1), config={},
                           rules=RULES)


def test_checkpoint_export_matches_the_checkpoint_network(checkpoint: Path, tmp_path: Path):
    meta = export_model(checkpoint, tmp_path / "m.pt", elo=321.0)
    model = load_model_file(tmp_path / "m.pt")
    assert model.metadata == meta
    assert (meta.side, meta.elo, meta.elo_reference) == (3, 321.0, LADDER_REFERENCE)
    assert meta.training_steps == 0 and str(checkpoint) in meta.source
    engine = Engine(Rules(side=3))
    planes, globals_ = observe(engine, engine.new_games(2, komi=np.array([0, 9])))
    with torch.no_grad():
        expected = tiny_network(3, seed=5)(torch.from_numpy(planes), torch.from_numpy(globals_))
    np.testing.assert_allclose(model.run(planes, globals_)["policy_logits"],
                               expected.policy_logits.numpy(), atol=1e-5)


def test_champion_export_with_ladder_elo(checkpoint: Path, tmp_path: Path):
    registry = tmp_path / "champions.json"
    track = Track(3, "komi", "standard")
    ChampionRegistry(registry).promote(track, ChampionEntry(checkpoint=str(checkpoint), step=0))
    fit = EloFit(names=["random", "ckpt"], steps=[None, 0], elo=np.array([0.0, 250.0]),
                 stderr=np.array([0.0, 25.0]), games=np.array([40, 40]),
                 score=np.array([0.2, 0.8]), anchor="random", iterations=1)
    elo_csv = write_elo_csv(tmp_path / "elo.csv", fit)
    meta = export_model(track, tmp_path / "champion.pt", registry=registry, elo_csv=elo_csv)
    assert meta.elo == 250.0 and "champion of side3-komi-standard" in meta.source
    with pytest.raises(ValueError, match="no champion for track side4"):
        export_model(Track(4, "komi", "standard"), tmp_path / "x.pt", registry=registry)
    assert not (tmp_path / "x.pt").exists()


def test_cli_export_and_refusals(checkpoint: Path, tmp_path: Path, capsys):
    output = tmp_path / "cli.pt"
    assert export_main([f"checkpoint={checkpoint}", f"output={output}"]) == 0
    assert "side 3 komi/standard, 0 training steps, unrated" in capsys.readouterr().out
    assert load_model_file(output).metadata.elo is None
    with pytest.raises(ConfigError, match="does not exist"):
        export_main([f"checkpoint={tmp_path / 'missing.pt'}", f"output={tmp_path / 'y.pt'}"])
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(checkpoint.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="truncated"):  # a damaged file, not a config
        export_main([f"checkpoint={damaged}", f"output={tmp_path / 'y.pt'}"])
    with pytest.raises(ConfigError, match="exactly one source"):
        export_main([f"output={tmp_path / 'y.pt'}"])
    assert not (tmp_path / "y.pt").exists()


def test_export_of_a_run_with_averaged_weights_exports_the_average(tmp_path: Path):
    torch.set_num_threads(1)
    trainer = Trainer(tiny_network(3, seed=5), TrainConfig(ema_decay=0.9), device="cpu")
    with torch.no_grad():  # stands in for training: the average now differs from the weights
        for parameter in trainer.ema_net.parameters():
            parameter.add_(0.1)
    path = save_checkpoint(tmp_path / "ck", trainer, Counters(step=0, iteration=1), config={},
                           rules=RULES)
    export_model(path, tmp_path / "m.pt")
    model = load_model_file(tmp_path / "m.pt")
    engine = Engine(Rules(side=3))
    planes, globals_ = observe(engine, engine.new_games(2, komi=np.array([0, 9])))
    inputs = torch.from_numpy(planes), torch.from_numpy(globals_)
    with torch.no_grad():
        averaged, trained = trainer.ema_net(*inputs), trainer.net.eval()(*inputs)
    exported = model.run(planes, globals_)["policy_logits"]
    np.testing.assert_allclose(exported, averaged.policy_logits.numpy(), atol=1e-5)
    assert not np.allclose(exported, trained.policy_logits.numpy(), atol=1e-3)
