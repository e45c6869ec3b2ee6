"""Smoke runs of the single-game search benchmarks: the speed table, a two-setting match and
timed GTP games, each on the smallest setting that exercises it."""

from __future__ import annotations

import pytest

from benchmarks import bench_single_search, gtp_time_games, search_settings_match
from catena_zero.play.model_player import PlayerConfig


def test_speed_table_compares_settings(capsys) -> None:
    bench_single_search.main(["--side", "3", "--simulations", "16", "--leaves", "1", "4",
                              "--positions", "2"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 2 and rows[0].endswith("| 1.00 |")


def test_settings_match_at_equal_simulations_and_equal_time(capsys) -> None:
    search_settings_match.main(["--side", "3", "--games", "2", "--a", "leaves_per_call=4",
                                "--b", "leaves_per_call=1", "simulations=8"])
    assert "A scores" in capsys.readouterr().out
    search_settings_match.main(["--side", "3", "--games", "2", "--seconds", "0.02",
                                "--simulations-cap", "16", "--a", "leaves_per_call=4"])
    out = capsys.readouterr().out
    assert "0.02 s a move" in out and "simulations a move" in out


def test_settings_are_checked() -> None:
    config = search_settings_match.player_config(["leaves_per_call=8", "noise=true"],
                                                 PlayerConfig())
    assert config.leaves_per_call == 8 and config.noise is True
    with pytest.raises(SystemExit, match="bad setting"):
        search_settings_match.player_config(["leaves=8"], PlayerConfig())


@pytest.mark.slow  # a GTP process and a timed game: about 10 s
def test_a_timed_gtp_game_ends_in_time(capsys) -> None:
    code = gtp_time_games.main(["--side", "3", "--games", "1", "--main", "3",
                                "player.simulations=16"])
    out = capsys.readouterr().out
    assert code == 0 and "0 time losses" in out and "first genmove" in out
