"""export_model: from a training checkpoint or a track's champion, with Elo and steps; a
size-general checkpoint with every track of its mix."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.arena.elo import EloFit, write_elo_csv
from catena_zero.arena.registry import ChampionEntry, ChampionRegistry, Track
from catena_zero.cli.common import ConfigError
from catena_zero.cli.export import main as export_main
from catena_zero.export.exporter import LADDER_REFERENCE, export_model
from catena_zero.export.model_file import PROGRAM_MEMBER, WEIGHTS_MEMBER, load_model_file
from catena_zero.rules import Engine, Rules, observe
from catena_zero.train import CheckpointError, Counters, TrainConfig, Trainer, save_checkpoint
from tests.export.tiny_model import tiny_general_network, tiny_network

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


def test_cli_export_writes_the_program_only_when_asked(checkpoint: Path, tmp_path: Path):
    """The torch.export program is most of a file and nothing in the project reads it: an
    export leaves it out unless program=true; the weights are the same either way."""
    plain, with_program = tmp_path / "plain.pt", tmp_path / "program.pt"
    assert export_main([f"checkpoint={checkpoint}", f"output={plain}"]) == 0
    assert export_main([f"checkpoint={checkpoint}", f"output={with_program}",
                        "program=true"]) == 0
    assert zipfile.ZipFile(plain).namelist() == ["catena_model.json", WEIGHTS_MEMBER]
    assert PROGRAM_MEMBER in zipfile.ZipFile(with_program).namelist()
    assert load_model_file(with_program, trust_program=True).program is not None
    assert zipfile.ZipFile(plain).read(WEIGHTS_MEMBER) == \
        zipfile.ZipFile(with_program).read(WEIGHTS_MEMBER)
    assert plain.stat().st_size < with_program.stat().st_size / 2


def test_an_export_again_at_the_same_source_date_gives_the_same_bytes(
        checkpoint: Path, tmp_path: Path, monkeypatch):
    """A recorded match names a model file by its SHA-256; with SOURCE_DATE_EPOCH (the
    reproducible-builds convention) exporting the checkpoint again gives that very file."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796644800")
    first, second = tmp_path / "first.pt", tmp_path / "second.pt"
    assert export_main([f"checkpoint={checkpoint}", f"output={first}"]) == 0
    assert export_main([f"checkpoint={checkpoint}", f"output={second}"]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert load_model_file(first).metadata.created_utc == "2026-12-07T12:00:00+00:00"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(ConfigError, match="SOURCE_DATE_EPOCH='yesterday'"):
        export_main([f"checkpoint={checkpoint}", f"output={tmp_path / 'bad.pt'}"])
    assert not (tmp_path / "bad.pt").exists()
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert export_main([f"checkpoint={checkpoint}", f"output={second}"]) == 0
    assert load_model_file(second).metadata.created_utc != "2026-12-07T12:00:00+00:00"


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


@pytest.fixture(scope="module")
def general_checkpoint(tmp_path_factory) -> Path:
    """A size-general run's checkpoint: its mix's tracks and fair komis in `extra`."""
    torch.set_num_threads(1)
    trainer = Trainer(tiny_general_network(seed=6), TrainConfig(), device="cpu")
    extra = {"tracks": ["3/komi/standard", "6/komi/standard", "4/nokomi/standard"],
             # A run records an estimate for its nokomi track too; its komi is fixed at 0
             # by the rules, so the model file must not call it a fair komi.
             "fair_komis": {"side3-komi-standard": 4.25, "side6-komi-standard": 8.2,
                            "side4-nokomi-standard": 0.0},
             "fair_komi": 4.25}
    return save_checkpoint(tmp_path_factory.mktemp("general"), trainer,
                           Counters(step=0, iteration=2), config={}, rules=RULES, extra=extra)


def test_a_general_checkpoint_exports_its_tracks(general_checkpoint: Path, tmp_path: Path):
    meta = export_model(general_checkpoint, tmp_path / "general.pt", elo=300.0,
                        elos={"side6-komi-standard": 500.0})
    assert meta.format_version == 3 and meta.is_general and meta.training_steps == 0
    assert [(str(t), t.elo, t.fair_komi) for t in meta.tracks] == [
        ("3/komi/standard", 300.0, 4.25), ("6/komi/standard", 500.0, 8.2),
        ("4/nokomi/standard", None, None)]
    assert meta.tracks[1].elo_reference == LADDER_REFERENCE
    assert meta.tracks[2].elo_reference is None
    model = load_model_file(tmp_path / "general.pt")
    assert model.metadata == meta
    for side in (2, 6, 10):
        engine = Engine(Rules(side=side))
        planes, globals_ = observe(engine, engine.new_games(2, komi=np.array([0, 5])))
        with torch.no_grad():
            expected = tiny_general_network(seed=6)(torch.from_numpy(planes),
                                                    torch.from_numpy(globals_))
        np.testing.assert_allclose(model.run(planes, globals_)["policy_logits"],
                                   expected.policy_logits.numpy(), atol=1e-5)


def test_given_tracks_replace_the_checkpoints(general_checkpoint: Path, tmp_path: Path):
    meta = export_model(general_checkpoint, tmp_path / "two.pt",
                        tracks=["5/double/longest", Track(3, "komi", "standard")],
                        fair_komis={"5/double/longest": 0.5})
    # The checkpoint's own track comes first; its fair komi is the checkpoint's.
    assert [(str(t), t.fair_komi) for t in meta.tracks] == [("3/komi/standard", 4.25),
                                                            ("5/double/longest", 0.5)]
    for arguments, message in [
        ({"elos": {"7/komi/standard": 1.0}}, "elos names track 7/komi/standard"),
        ({"fair_komis": {"3/komi/standard": float("nan")}}, "must be a finite number"),
        ({"tracks": []}, "one or more distinct tracks"),
        ({"tracks": ["4/komi/standard", "side4-komi-standard"]}, "distinct tracks"),
        ({"tracks": ["4/komi/standard"], "elo": 10.0}, "elo rates track 3/komi/standard"),
        ({"tracks": ["4/go/standard"]}, "unknown game type"),
    ]:
        with pytest.raises(ValueError, match=message):
            export_model(general_checkpoint, tmp_path / "refused.pt", **arguments)
        assert not (tmp_path / "refused.pt").exists()


def test_a_general_champion_of_any_of_its_tracks(general_checkpoint: Path, tmp_path: Path):
    registry = tmp_path / "champions.json"
    track = Track(6, "komi", "standard")
    ChampionRegistry(registry).promote(track, ChampionEntry(checkpoint=str(general_checkpoint),
                                                            step=0))
    meta = export_model(track, tmp_path / "champion.pt", registry=registry, elo=700.0)
    assert meta.side == 6 and (meta.elo, meta.tracks[0].fair_komi) == (700.0, 8.2)
    assert [str(t) for t in meta.tracks[1:]] == ["3/komi/standard", "4/nokomi/standard"]
    other = Track(5, "komi", "standard")
    ChampionRegistry(registry).promote(other, ChampionEntry(checkpoint=str(general_checkpoint),
                                                            step=0))
    with pytest.raises(ValueError, match="not on track side5-komi-standard"):
        export_model(other, tmp_path / "x.pt", registry=registry)


def test_cli_export_of_a_general_checkpoint(general_checkpoint: Path, tmp_path: Path, capsys):
    output = tmp_path / "cli-general.pt"
    assert export_main([f"checkpoint={general_checkpoint}", f"output={output}"]) == 0
    out = capsys.readouterr().out
    assert ("size-general network, tracks 3/komi/standard, 6/komi/standard, "
            "4/nokomi/standard, 0 training steps, 0 rated, format version 3") in out
