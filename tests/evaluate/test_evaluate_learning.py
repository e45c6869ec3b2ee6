"""`catena-zero evaluate learning`: a tiny run evaluated at either inference precision, at
the komi of its self-play balance, its network estimate or a given komi; exact endgames off
unless asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catena_zero.cli.main import main
from tests.evaluate.conftest import train_tiny_run


def evaluate(*arguments: str) -> int:
    return main(["evaluate", *arguments])


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_evaluates_a_tiny_run_at_either_precision(tiny_run: Path, tmp_path: Path,
                                                  precision: str) -> None:
    out = tmp_path / "evaluation.json"
    # A small komi sweep: the default path, without the default's 1,024 self-play games.
    assert evaluate("learning", f"run_dir={tiny_run}", "games=2", "opponents=[random]",
                    f"precision={precision}", "komi_games=2", f"json={out}") == 0
    report = json.loads(out.read_text())
    assert report["precision"] == precision
    assert [match["games"] for match in report["matches"]] == [2]
    assert (report["format"], report["format_version"]) == ("catena_zero.evaluation.learning", 1)


def test_plays_at_the_komi_of_the_nets_self_play_balance(tiny_run: Path, tmp_path: Path,
                                                         capsys) -> None:
    out = tmp_path / "evaluation.json"
    assert evaluate("learning", "--run-dir", str(tiny_run), "--games", "2",
                    "--opponents", "[random]", "--komi-games", "4", "--json", str(out)) == 0
    report = json.loads(out.read_text())
    selfplay = report["selfplay_fair_komi"]
    assert report["komi_from"] == "selfplay"
    # The sweep covers the whole komi range (side 3: 0..15), 4 games at each komi.
    assert sorted(int(komi) for komi in selfplay["black_score"]) == list(range(16))
    assert selfplay["games_per_komi"] == 4
    assert 0 <= selfplay["fair_komi"] <= 15
    assert report["komi"] == min(max(round(selfplay["fair_komi"]), 0), 15)
    # The printed JSON is the written one.
    printed = capsys.readouterr().out
    assert json.loads(printed[printed.index("\n{\n"):]) == report


def test_network_estimate_and_explicit_komi_skip_the_sweep(tiny_run: Path, tmp_path: Path) -> None:
    for extra, source in ((["komi_from=network"], "network"), (["komi=3"], "evaluate.komi")):
        out = tmp_path / f"{source}.json"
        assert evaluate("learning", f"run_dir={tiny_run}", "games=2", "opponents=[random]",
                        f"json={out}", *extra) == 0
        report = json.loads(out.read_text())
        assert report["selfplay_fair_komi"] is None
        assert report["komi_from"] == source
        expected = 3 if source == "evaluate.komi" else min(
            max(round(report["fair_komi_estimate"]), 0), 15)
        assert report["komi"] == expected


def test_bad_komi_games_is_refused(tiny_run: Path, capsys) -> None:
    assert evaluate("learning", f"run_dir={tiny_run}", "komi_games=0") == 2
    assert "komi_games must be >= 1" in capsys.readouterr().err


def test_a_game_without_komi_plays_its_one_komi_without_a_sweep(tmp_path: Path) -> None:
    run_dir = train_tiny_run(tmp_path / "run", "rules=nokomi_standard")
    out = tmp_path / "evaluation.json"
    assert evaluate("learning", f"run_dir={run_dir}", "games=2", "opponents=[random]",
                    f"json={out}") == 0
    report = json.loads(out.read_text())
    assert report["selfplay_fair_komi"] is None
    assert (report["komi"], report["komi_from"]) == (0, "network")


def test_exact_endgames_are_off_unless_asked_for(tmp_path: Path) -> None:
    """A run that trained with exact endgames is evaluated by its net alone by default."""
    run_dir = train_tiny_run(tmp_path / "run", "mcts.exact_endgame_cells=4")
    for extra, expected in (([], 0), (["search.exact_endgame_cells=6"], 6)):
        out = tmp_path / f"evaluation-{expected}.json"
        assert evaluate("learning", f"run_dir={run_dir}", "games=2", "opponents=[random]",
                        "komi=3", f"json={out}", *extra) == 0
        assert json.loads(out.read_text())["search"]["exact_endgame_cells"] == expected


def test_search_overrides_change_the_runs_search_only_where_named(tiny_run: Path,
                                                                   tmp_path: Path) -> None:
    out = tmp_path / "evaluation.json"
    assert evaluate("learning", f"checkpoint={sorted((tiny_run / 'checkpoints').iterdir())[0]}",
                    "games=2", "opponents=[random]", "komi=3", "simulations=6",
                    "search.c_scale=0.5", f"json={out}") == 0
    search = json.loads(out.read_text())["search"]
    # The tiny preset's search (max_considered_actions 4), the evaluation's simulations and
    # deterministic root, and the one override.
    assert (search["max_considered_actions"], search["num_simulations"],
            search["gumbel_scale"], search["c_scale"]) == (4, 6, 0.0, 0.5)
    assert json.loads(out.read_text())["counters"]["iteration"] == 1
