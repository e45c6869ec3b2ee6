"""A run's games file of start positions is read, and refused, before the run starts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from catena_zero.cli.common import compose
from catena_zero.cli.main import main as cli_main
from catena_zero.cli.train import build_config
from catena_zero.pipeline.run import with_start_positions
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.selfplay.start_positions import StartPositionsError
from tests.selfplay.test_selfplay_start_positions import LOSS_STUDY, SIDE3_GAMES, write_games_file


def test_a_run_checks_the_games_file_before_it_starts(tmp_path: Path, monkeypatch) -> None:
    config = build_config(compose("train", ["preset=tiny", f"run_dir={tmp_path / 'run'}"]))
    games = write_games_file(tmp_path / "games.json", SIDE3_GAMES, [0.0, 0.0, 1.0])
    monkeypatch.chdir(tmp_path)
    selfplay = SelfPlayConfig(start_positions="games.json", start_share=0.25)
    checked = with_start_positions(dataclasses.replace(config, selfplay=selfplay))
    assert checked.selfplay.start_positions == str(games.resolve())
    side6 = SelfPlayConfig(start_positions=str(LOSS_STUDY), start_share=0.25)
    with pytest.raises(StartPositionsError, match=r"no track of this run \(3/komi/standard\)"):
        with_start_positions(dataclasses.replace(config, selfplay=side6))


def test_the_command_line_refuses_a_missing_games_file_before_the_run_dir(
        tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "run"
    status = cli_main(["train", "preset=tiny", f"run_dir={run_dir}",
                       f"selfplay.start_positions={tmp_path / 'missing.json'}",
                       "selfplay.start_share=0.25"])
    assert status == 1 and not run_dir.exists()
    assert capsys.readouterr().err.strip() == (
        f"catena-zero train: error: start positions file {tmp_path / 'missing.json'}: "
        f"no such file")


def test_a_run_against_a_league_records_the_networks_score(tmp_path: Path,
                                                           monkeypatch) -> None:
    """A tiny run whose every game is against a rollout MCTS of 2 simulations or a past
    checkpoint (named by a relative path, read by the Ray workers too): its metrics and
    shard say how many such games were played and the network's score, in all and by
    opponent."""
    from catena_zero.data.shards import list_shards, read_shard_meta
    from catena_zero.pipeline.metrics import read_metrics

    monkeypatch.chdir(tmp_path)
    assert cli_main(["train", "preset=tiny", "run_dir=past", "iterations=1", "progress=false",
                     "runtime=inline"]) == 0
    past = sorted(Path("past/checkpoints").glob("*.pt"))[-1]
    run_dir = tmp_path / "run"
    assert cli_main(["train", "preset=tiny", f"run_dir={run_dir}", "iterations=1",
                     "progress=false", "selfplay.opponent_share=1.0",
                     f"selfplay.opponents=[uct:2,checkpoint:{past}]",
                     "selfplay.opponent_sides=[3]"]) == 0
    record = [line for line in read_metrics(run_dir) if line["kind"] == "iteration"][-1]["values"]
    games = record["selfplay/opponent_games"]
    assert games >= 1 and 0.0 <= record["selfplay/opponent_score"] <= 1.0
    extra = read_shard_meta(list_shards(run_dir / "shards")[0]).extra
    assert extra["opponent_games"] == games
    assert extra["opponent_score"] == pytest.approx(record["selfplay/opponent_score"] * games)
    names = {"uct:2", f"checkpoint:{(tmp_path / past).resolve()}"}
    assert set(extra["opponent_results"]) <= names
    assert sum(result[0] for result in extra["opponent_results"].values()) == games
    for name, (played, score) in extra["opponent_results"].items():
        assert record[f"selfplay/opponent/{name}/score"] == pytest.approx(score / played)


def test_a_league_opponent_that_cannot_play_is_refused_before_the_run_dir(
        tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "run"
    missing = tmp_path / "missing.pt"
    assert cli_main(["train", "preset=tiny", f"run_dir={run_dir}", "selfplay.opponent_share=0.5",
                     f"selfplay.opponents=[uct:200,checkpoint:{missing}]"]) != 0
    assert not run_dir.exists()
    assert f"checkpoint {missing}: does not exist" in capsys.readouterr().err
    for spec, message in (("uct:0", "expected uct:N with N >= 1 playouts"),
                          ("champion", "'champion' is not an opponent of self-play")):
        assert cli_main(["train", "preset=tiny", f"run_dir={run_dir}",
                         "selfplay.opponent_share=0.5", f"selfplay.opponents=[{spec}]"]) != 0
        assert not run_dir.exists() and message in capsys.readouterr().err


def test_opponents_on_sides_no_track_plays_are_refused_before_the_run_dir(
        tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "run"
    assert cli_main(["train", "preset=tiny", f"run_dir={run_dir}",
                     "selfplay.opponent_share=0.5", "selfplay.opponent_sides=[8]"]) != 0
    assert not run_dir.exists()
    assert "selfplay.opponent_sides [8]: no track of this run is of those sides (it plays " \
           "sides 3)" in capsys.readouterr().err
