"""Value trajectories (per-move root values of the agent, wins per colour) and value
generalisation (the value loss on fresh games beside the run's newest shards)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.arena.agents import RandomAgent, SearchAgent
from catena_zero.cli.main import main
from catena_zero.data import list_shards, read_shard
from catena_zero.evaluate.values import (
    last_winning_move,
    mean_by_move,
    summarise_trajectories,
    trace_games,
)
from catena_zero.mcts import SearchConfig, UniformEvaluator
from catena_zero.rules import BLACK, WHITE, Engine, Rules
from catena_zero.train import build_network, latest_checkpoint, load_checkpoint
from tests.evaluate.conftest import train_tiny_run


def test_traces_hold_one_finite_value_per_agent_move_and_match_the_results() -> None:
    engine = Engine(Rules(side=2))
    agent = SearchAgent(UniformEvaluator(engine.num_actions),
                        SearchConfig(num_simulations=4, gumbel_scale=0.0))
    for colour in (BLACK, WHITE):
        won, values = trace_games(engine, agent, RandomAgent(), colour, 12, 2,
                                  np.random.default_rng(colour))
        assert won.shape == (12,) and len(values) == 12
        for trajectory in values:
            assert trajectory and all(-1.0 <= v <= 1.0 for v in trajectory)
        summary = summarise_trajectories(won, values)
        assert summary["wins"] == int(won.sum()) and summary["games"] == 12
        assert len(summary["lost_last_winning_move"]) == 12 - summary["wins"]


def test_summaries_average_over_the_games_that_reached_each_move() -> None:
    assert mean_by_move([[0.5, -0.5], [0.1]]) == [0.3, -0.5]
    assert last_winning_move([0.2, 0.4, -0.1, -0.9]) == 1
    assert last_winning_move([-0.2, -0.4]) == -1


def test_value_trajectories_plays_at_the_self_play_komi_too(tiny_run: Path, tmp_path: Path,
                                                          capsys) -> None:
    out = tmp_path / "trajectories.json"
    assert main(["evaluate", "trajectories", f"run_dir={tiny_run}", "games=1",
                 "opponents=[random]", "komi_games=2", f"json={out}"]) == 0
    report = json.loads(out.read_text())
    assert report["komi_from"] == "selfplay"
    assert report["komi"] == min(max(round(report["selfplay_fair_komi"]["fair_komi"]), 0), 15)
    assert [report[colour]["games"] for colour in ("black", "white")] == [1, 1]
    assert "self-play" in capsys.readouterr().out
    assert main(["evaluate", "trajectories", f"run_dir={tiny_run}", "komi_games=0"]) == 2
    assert "komi_games must be >= 1" in capsys.readouterr().err


def test_reports_fresh_and_shard_losses_of_a_tiny_run(tiny_run: Path, tmp_path: Path,
                                                      capsys) -> None:
    out = tmp_path / "report.json"
    assert main(["evaluate", "generalisation", f"run_dir={tiny_run}", "games=4", "shards=2",
                 f"json={out}"]) == 0
    report = json.loads(out.read_text())
    assert report["fresh"]["games"] == 4 and report["fresh"]["positions"] > 0
    shards = list_shards(tiny_run / "shards")[-2:]
    assert [entry["shard"] for entry in report["shards"]] == [path.name for path in shards]
    # The reported shard loss is the value head's cross-entropy on that shard.
    net = build_network(load_checkpoint(latest_checkpoint(tiny_run / "checkpoints")))
    samples, _ = read_shard(shards[-1])
    with torch.inference_mode():
        output = net.eval()(torch.as_tensor(samples.planes, dtype=torch.float32),
                            torch.as_tensor(samples.globals, dtype=torch.float32))
        expected = -(torch.as_tensor(samples.value_target, dtype=torch.float32)
                     * torch.log_softmax(output.value_logits, dim=1)).sum(dim=1).mean()
    assert report["shards"][-1]["value_cross_entropy"] == pytest.approx(float(expected), rel=1e-4)
    assert np.isfinite(report["fresh"]["value_cross_entropy"])
    assert "value cross-entropy" in capsys.readouterr().out


def test_bad_arguments_are_refused(tiny_run: Path, tmp_path: Path, capsys) -> None:
    assert main(["evaluate", "generalisation", f"run_dir={tmp_path}", "games=0"]) == 2
    assert main(["evaluate", "generalisation", f"run_dir={tmp_path}"]) == 2  # no checkpoint
    assert main(["evaluate", "generalisation", f"run_dir={tiny_run}",
                 "search.algorithm=puct"]) == 2  # it plays the run's own search
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 3 and "no checkpoint" in errors[1] and "generalisation" in errors[2]


def test_fresh_games_start_on_the_empty_board_whatever_games_file_the_run_used(
        tmp_path: Path) -> None:
    games = tmp_path / "games.json"
    games.write_text(json.dumps({
        "format": "catena_zero.loss_study_games", "format_version": 1,
        "track": "3/komi/standard",
        "matches": {"side3": {"games": [{"actions": [1, 16, 15, 12, 4, 14, 2, 3, 6, 11, 7],
                                         "a_points": 0.0}]}}}))
    run = train_tiny_run(tmp_path / "run", "iterations=1", f"selfplay.start_positions={games}",
                         "selfplay.start_share=0.5")
    games.unlink()  # the run's games file is gone by the time the run is evaluated
    # (in a process of its own: this one holds the file as the run read it)
    evaluated = subprocess.run([sys.executable, "-m", "catena_zero.cli.main", "evaluate",
                                "generalisation", f"run_dir={run}", "games=2", "shards=1"],
                               capture_output=True, text=True, timeout=300)
    assert evaluated.returncode == 0, evaluated.stderr
    assert "fresh games     2 games" in evaluated.stdout


def test_fresh_games_are_the_networks_own_whatever_league_the_run_played(
        tmp_path: Path, capsys) -> None:
    run = train_tiny_run(tmp_path / "run", "iterations=1", "selfplay.opponent_share=1.0",
                         "selfplay.opponents=[uct:2]")
    assert main(["evaluate", "generalisation", f"run_dir={run}", "games=2", "shards=1"]) == 0
    assert "fresh games     2 games" in capsys.readouterr().out
