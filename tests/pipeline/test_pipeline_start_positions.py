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
