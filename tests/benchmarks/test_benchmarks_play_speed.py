"""Smoke runs of the single-game search benchmarks: the speed table, the play speed by think
level and precision, a two-setting match and timed GTP games, each on the smallest setting
that exercises it."""

from __future__ import annotations

import math
import re

import pytest

from benchmarks import bench_play_speed, bench_single_search, gtp_time_games, search_settings_match
from catena_zero.play.model_player import PlayerConfig
from catena_zero.play.time_control import THINK_LEVELS
from tests.export.tiny_model import tiny_model_file


def test_speed_table_compares_settings(capsys) -> None:
    assert bench_single_search.main(["--side", "3", "--simulations", "16", "--leaves", "1",
                                     "4", "--positions", "2"]) == 0
    out = capsys.readouterr().out
    rows = [line.strip("|").split("|") for line in out.splitlines() if line.startswith("| 1 |")]
    assert [[cell.strip() for cell in row[:2]] for row in rows] == [["1", "1"], ["1", "4"]]
    rates = [float(row[2]) for row in rows]
    assert all(math.isfinite(rate) and rate > 0 for rate in rates)
    assert all(float(row[3]) >= 0 for row in rows)  # ms per move, rounded
    ratios = [float(row[4]) for row in rows]
    # Each ratio is the setting's simulations/s over the first setting's.
    assert ratios[0] == 1.0
    assert ratios[1] == pytest.approx(rates[1] / rates[0], rel=0.02, abs=0.006)
    assert 0.05 < ratios[1] < 50


def test_play_speed_prints_a_row_per_level_and_precision(capsys) -> None:
    code = bench_play_speed.main(["--side", "3", "--model", str(tiny_model_file(3)),
                                  "--seconds", "0.05", "--positions", "1", "--threads", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "at most 0.05 s a move" in out and "precision=auto plays" in out
    rows = {}
    for line in out.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 6 and cells[0] in THINK_LEVELS:
            rows[cells[0], cells[1]] = [float(cell) for cell in cells[2:]]
    assert sorted(rows) == sorted((level, precision) for level in THINK_LEVELS
                                  for precision in ("float32", "bfloat16"))
    for (level, _), (simulations, rate, milliseconds, ratio) in rows.items():
        assert 1 <= simulations <= THINK_LEVELS[level][1]
        assert simulations == rows[level, "float32"][0]  # both precisions search alike
        assert all(math.isfinite(value) and value > 0 for value in (rate, milliseconds, ratio))
        assert ratio == pytest.approx(rate / rows[level, "float32"][1], rel=0.02, abs=0.01)
    assert all(rows[level, "float32"][3] == 1.0 for level in THINK_LEVELS)


def test_play_speed_refuses_a_bad_time_bound(capsys) -> None:
    for bad in ("0", "-1", "inf", "nan"):
        with pytest.raises(SystemExit) as exit_:
            bench_play_speed.main(["--seconds", bad])
        assert exit_.value.code == 2
    assert "--seconds must be a number > 0" in capsys.readouterr().err
    for bad in ("-0.1", "1.5", "nan"):
        with pytest.raises(SystemExit) as exit_:
            bench_play_speed.main(["--rollout-mix", bad])
        assert exit_.value.code == 2
    assert "--rollout-mix must be in [0, 1]" in capsys.readouterr().err


def test_play_speed_names_the_rollout_mix_it_searched_with(capsys) -> None:
    """The header names the mix: without --rollout-mix the player's own (0.5)."""
    arguments = ["--side", "3", "--model", str(tiny_model_file(3)), "--seconds", "0.05",
                 "--positions", "1", "--threads", "1", "--levels", "quick"]
    assert bench_play_speed.main(arguments) == 0
    assert f"rollout_mix 0.5 ({PlayerConfig().rollout_mix_playouts} playout" in \
        capsys.readouterr().out
    assert bench_play_speed.main([*arguments, "--rollout-mix", "0"]) == 0
    assert "rollout_mix 0 (" in capsys.readouterr().out
    assert bench_play_speed.main([*arguments, "--rollout-playouts", "3"]) == 0
    assert "rollout_mix 0.5 (3 playouts a leaf)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        bench_play_speed.main([*arguments, "--rollout-playouts", "0"])
    assert exit_.value.code == 2
    assert "--rollout-playouts must be >= 1" in capsys.readouterr().err


def test_settings_match_at_equal_simulations_and_equal_time(capsys) -> None:
    assert search_settings_match.main(["--side", "3", "--games", "2", "--a",
                                       "leaves_per_call=4", "--b", "leaves_per_call=1",
                                       "simulations=8"]) == 0
    score, low, high = _score_line(capsys.readouterr().out)
    # Two games: A scores 0, 1 or 2 points, inside its Wilson interval.
    assert score in (0.0, 25.0, 50.0, 75.0, 100.0) and 0 <= low <= score <= high <= 100
    assert search_settings_match.main(["--side", "3", "--games", "2", "--seconds", "0.02",
                                       "--simulations-cap", "16", "--a",
                                       "leaves_per_call=4"]) == 0
    out = capsys.readouterr().out
    assert "equal simulations" not in out and "0.02 s a move" in out
    per_move = [int(found) for found in re.findall(r"(\d+) simulations a move", out)]
    assert len(per_move) == 2 and all(1 <= count <= 16 for count in per_move)
    score, low, high = _score_line(out)
    assert 0 <= low <= score <= high <= 100


def _score_line(out: str) -> tuple[float, float, float]:
    """(score, low, high) in % from the match's last line, "A scores S% [L, H] (T s)"."""
    found = re.search(r"^A scores ([\d.]+)% \[([\d.]+), ([\d.]+)\] \(\d+ s\)$", out,
                      re.MULTILINE)
    assert found, out[-500:]
    return float(found[1]), float(found[2]), float(found[3])


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
