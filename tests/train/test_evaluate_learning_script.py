"""scripts/evaluate_learning.py: search overrides are typed, checked and named on error; the
script evaluates a run at either inference precision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.mcts import SearchConfig
from catena_zero.pipeline.inline import train_loop
from tests.script_loader import load_script


def test_search_overrides_take_the_field_types() -> None:
    script = load_script("evaluate_learning")
    base = SearchConfig()
    values = script.parse_overrides(
        ["algorithm=puct", "max_considered_actions=8", "c_scale=0.5", "tree_reuse=true"], base)
    assert values == {"algorithm": "puct", "max_considered_actions": 8, "c_scale": 0.5,
                      "tree_reuse": True}


@pytest.mark.parametrize("item, message", [
    ("bogus=1", "bogus=1"),
    ("max_considered_actions", "KEY=VALUE"),
    ("tree_reuse=maybe", "tree_reuse"),
    ("num_simulations=many", "many"),
])
def test_bad_search_overrides_are_named(item: str, message: str) -> None:
    script = load_script("evaluate_learning")
    with pytest.raises(ValueError, match=message):
        script.parse_overrides([item], SearchConfig())


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("evaluate") / "run"
    train_loop(build_config(compose("train", ["preset=tiny", f"run_dir={run_dir}",
                                              "tensorboard=false"])))
    return run_dir


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_evaluates_a_tiny_run_at_either_precision(tiny_run: Path, tmp_path: Path,
                                                  precision: str) -> None:
    out = tmp_path / "evaluation.json"
    # A small komi sweep: the default path, without the default's 1,024 self-play games.
    assert load_script("evaluate_learning").main([
        "--run-dir", str(tiny_run), "--games", "2", "--opponents", "random",
        "--precision", precision, "--komi-games", "2", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["precision"] == precision
    assert [match["games"] for match in report["matches"]] == [2]


def test_plays_at_the_komi_of_the_nets_self_play_balance(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "evaluation.json"
    assert load_script("evaluate_learning").main([
        "--run-dir", str(tiny_run), "--games", "2", "--opponents", "random",
        "--komi-games", "4", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    selfplay = report["selfplay_fair_komi"]
    assert report["komi_from"] == "selfplay"
    # The sweep covers the whole komi range (side 2: 0..15), 4 games at each komi.
    assert sorted(int(komi) for komi in selfplay["black_score"]) == list(range(16))
    assert selfplay["games_per_komi"] == 4
    assert 0 <= selfplay["fair_komi"] <= 15
    assert report["komi"] == min(max(round(selfplay["fair_komi"]), 0), 15)


def test_network_estimate_and_explicit_komi_skip_the_sweep(tiny_run: Path, tmp_path: Path) -> None:
    script = load_script("evaluate_learning")
    for extra, source in ((["--komi-from", "network"], "network"), (["--komi", "3"], "--komi")):
        out = tmp_path / f"{source}.json"
        assert script.main(["--run-dir", str(tiny_run), "--games", "2", "--opponents", "random",
                            "--json", str(out), *extra]) == 0
        report = json.loads(out.read_text())
        assert report["selfplay_fair_komi"] is None
        assert report["komi_from"] == source
        expected = 3 if source == "--komi" else min(max(round(report["fair_komi_estimate"]), 0),
                                                     15)
        assert report["komi"] == expected


def test_bad_komi_games_is_refused(tiny_run: Path, capsys) -> None:
    with pytest.raises(SystemExit):
        load_script("evaluate_learning").main(["--run-dir", str(tiny_run), "--komi-games", "0"])
    assert "--komi-games must be >= 1" in capsys.readouterr().err


def test_a_game_without_komi_plays_its_one_komi_without_a_sweep(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    train_loop(build_config(compose("train", ["preset=tiny", "rules=nokomi_standard",
                                              f"run_dir={run_dir}", "tensorboard=false"])))
    out = tmp_path / "evaluation.json"
    assert load_script("evaluate_learning").main([
        "--run-dir", str(run_dir), "--games", "2", "--opponents", "random",
        "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["selfplay_fair_komi"] is None
    assert (report["komi"], report["komi_from"]) == (0, "network")


def test_value_trajectories_plays_at_the_self_play_komi_too(tiny_run: Path, tmp_path: Path,
                                                          capsys) -> None:
    out = tmp_path / "trajectories.json"
    assert load_script("value_trajectories").main([
        "--run-dir", str(tiny_run), "--games", "1", "--opponent", "random",
        "--komi-games", "2", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["komi_from"] == "selfplay"
    assert report["komi"] == min(max(round(report["selfplay_fair_komi"]["fair_komi"]), 0), 15)
    assert "self-play" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        load_script("value_trajectories").main(["--run-dir", str(tiny_run), "--komi-games", "0"])
    assert "--komi-games must be >= 1" in capsys.readouterr().err


def test_exact_endgames_are_off_unless_asked_for(tmp_path: Path) -> None:
    """A run that trained with exact endgames is evaluated by its net alone by default."""
    run_dir = tmp_path / "run"
    train_loop(build_config(compose("train", ["preset=tiny", "mcts.exact_endgame_cells=4",
                                              f"run_dir={run_dir}", "tensorboard=false"])))
    script = load_script("evaluate_learning")
    for extra, expected in (([], 0), (["--search", "exact_endgame_cells=6"], 6)):
        out = tmp_path / f"evaluation-{expected}.json"
        assert script.main(["--run-dir", str(run_dir), "--games", "2", "--opponents", "random",
                            "--komi", "3", "--json", str(out), *extra]) == 0
        assert json.loads(out.read_text())["search"]["exact_endgame_cells"] == expected


def test_endgame_accuracy_judges_every_small_position(tiny_run: Path, tmp_path: Path,
                                                      capsys) -> None:
    out = tmp_path / "endgame.json"
    assert load_script("endgame_accuracy").main([
        "--run-dir", str(tiny_run), "--games", "4", "--opponent", "random", "--komi", "3",
        "--max-legal", "5", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    table = report["table"]
    assert table and all(1 <= line["legal_cells"] <= 5 for line in table)
    assert all(0.0 <= line["value_sign_agrees"] <= 1.0 for line in table)
    assert {line["to_move"] for line in table} <= {"net", "opponent"}
    # One entry per game that reached a position with at most 5 legal cells.
    assert 1 <= sum(report["transitions"].values()) <= 4
    assert "sign agrees" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        load_script("endgame_accuracy").main(["--run-dir", str(tiny_run), "--games", "3"])
    assert "--games must be an even number" in capsys.readouterr().err
