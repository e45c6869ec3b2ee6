"""Elo ladder: checkpoint discovery, pairings, and a small real ladder with its outputs."""

from __future__ import annotations

import itertools
import json

import pytest

from catena_zero.arena.agents import GreedyAgent, RandomAgent
from catena_zero.arena.config import LadderConfig
from catena_zero.arena.elo import read_elo_csv
from catena_zero.arena.ladder import (
    Player,
    find_checkpoints,
    ladder_pairings,
    ladder_players,
    run_ladder,
    select_evenly,
)
from catena_zero.arena.specs import AgentFactory
from catena_zero.rules import Rules


def _fake_run(tmp_path, steps):
    folder = tmp_path / "run" / "checkpoints"
    folder.mkdir(parents=True)
    for step in steps:
        (folder / f"step_{step:06d}.pt").write_bytes(b"x")
    (folder / "latest.pt").write_bytes(b"x")  # no step: skipped
    (folder / "step_000300.pt.tmp-12").write_bytes(b"x")  # a torn write: skipped
    return tmp_path / "run"


def test_find_checkpoints_sorted_by_step(tmp_path):
    run = _fake_run(tmp_path, [200, 50, 1000])
    found = find_checkpoints(run)
    assert [step for _, step in found] == [50, 200, 1000]
    assert found[0][0].name == "step_000050.pt"
    with pytest.raises(ValueError, match="not a directory"):
        find_checkpoints(tmp_path / "missing")


def test_players_and_even_selection(tmp_path):
    run = _fake_run(tmp_path, range(0, 1000, 100))
    config = LadderConfig(run_dir=str(run), max_checkpoints=4, baselines=["random", "greedy"])
    players = ladder_players(config)
    assert [p.name for p in players] == ["random", "greedy", "step0", "step300", "step600",
                                         "step900"]
    assert players[2].spec.startswith("checkpoint:") and players[2].step == 0
    assert select_evenly(list(range(10)), 0) == list(range(10))
    with pytest.raises(ValueError, match="anchor"):
        ladder_players(LadderConfig(baselines=["greedy"], anchor="random"))


def test_sampled_pairings_are_connected():
    players = [Player(f"p{i}", "random", None) for i in range(12)]
    pairs = ladder_pairings(players, LadderConfig(pairing="sampled", sampled_pairs=2), seed=4)
    assert all(i < j for i, j in pairs) and len(set(pairs)) == len(pairs)
    assert len(pairs) < 66
    reached, frontier = {0}, [0]
    while frontier:
        node = frontier.pop()
        for i, j in pairs:
            for a, b in ((i, j), (j, i)):
                if a == node and b not in reached:
                    reached.add(b)
                    frontier.append(b)
    assert reached == set(range(12))
    round_robin = ladder_pairings(players, LadderConfig())
    assert round_robin == list(itertools.combinations(range(12), 2))


class StubFactory:
    """Baselines as usual; a "checkpoint" is a greedy agent (its file holds nothing)."""

    def __init__(self, rules):
        self.inner = AgentFactory(rules)

    def __call__(self, spec):
        return GreedyAgent() if spec.startswith("checkpoint:") else self.inner(spec)


def test_small_ladder_writes_csv_plot_and_tensorboard(tmp_path):
    rules = Rules(side=3)
    run = _fake_run(tmp_path, [10, 20])
    config = LadderConfig(run_dir=str(run), baselines=["random", "uct:8"], games_per_pair=8)
    seen = []
    result = run_ladder(rules, config, StubFactory(rules), seed=1,
                        progress=lambda label, done, total: seen.append(label))
    assert len(result.matches) == 6  # 4 players, round robin
    assert all(m.num_games == 8 for m in result.matches)
    assert result.fit.rating("random") == 0.0
    rows = {row["player"]: row for row in read_elo_csv(run / "elo" / "elo.csv")}
    assert set(rows) == {"random", "uct:8", "step10", "step20"}
    assert rows["step20"]["step"] == 20 and rows["random"]["games"] == 24
    assert (run / "elo" / "elo.png").stat().st_size > 1000
    assert any((run / "elo" / "tensorboard").iterdir())
    saved = json.loads((run / "elo" / "matches.json").read_text())
    assert len(saved["matches"]) == 6
    assert all("player" not in player for player in saved["players"])  # the stub cannot say
    assert seen[0].startswith("[1/6]") and seen[-1].startswith("[6/6]")


def test_ladder_with_random_only_baseline_agents():
    # Two random players: the fit must stay finite and near 0 whatever the results.
    rules = Rules(side=3)
    players = [Player("random", "random", None), Player("random2", "random", None)]
    result = run_ladder(rules, LadderConfig(games_per_pair=20), lambda spec: RandomAgent(),
                        players=players)
    assert abs(result.fit.rating("random2")) < 400
    assert result.csv_path is None


def test_a_missing_checkpoint_fails_before_any_game(tmp_path):
    rules = Rules(side=3)
    players = [Player("random", "random", None),
               Player("step5", f"checkpoint:{tmp_path / 'gone-step5.pt'}", 5)]
    seen = []
    with pytest.raises(ValueError, match="does not exist"):
        run_ladder(rules, LadderConfig(games_per_pair=2), AgentFactory(rules), players=players,
                   progress=lambda *args: seen.append(args))
    assert seen == []
