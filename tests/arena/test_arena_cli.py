"""`catena-zero arena` end to end (match, gate with real checkpoints, ladder) and its tables."""

from __future__ import annotations

import hashlib
import json

import pytest

from catena_zero.arena.match import play_match
from catena_zero.arena.registry import ChampionRegistry, Track
from catena_zero.arena.report import format_elo, format_matches, short_name
from catena_zero.arena.specs import AgentFactory, parse_agent_spec
from catena_zero.rules import Rules


def _checkpoint(directory, step: int, side: int = 3):
    """A real training checkpoint of a fresh 1-block network (untrained weights)."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(step)
    from catena_zero.network import NetworkConfig, PolicyValueNet
    from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, get_board
    from catena_zero.train.checkpoint import Counters, save_checkpoint
    from catena_zero.train.config import TrainConfig
    from catena_zero.train.trainer import Trainer

    board = get_board(side)
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index,
                         NetworkConfig(blocks=1, channels=8, global_pool_every=0))
    trainer = Trainer(net, TrainConfig(), "cpu")
    trainer.step = step
    return save_checkpoint(directory, trainer, Counters(step=step), config={},
                           rules={"side": side, "game_type": "komi", "scoring": "standard"},
                           keep=0)


def test_spec_parsing():
    assert str(parse_agent_spec("UCT:200")) == "uct:200"
    assert parse_agent_spec("checkpoint:a/b.pt").path == "a/b.pt"
    for bad, message in [("uct:0", "uct:N"), ("uct:x", "uct:N"), ("random:3", "no argument"),
                         ("checkpoint:", "PATH"), ("alphazero", "unknown agent spec"),
                         ("", "non-empty")]:
        with pytest.raises(ValueError, match=message):
            parse_agent_spec(bad)
    with pytest.raises(ValueError, match="registry"):
        AgentFactory(Rules(side=3))("champion")


def test_tables():
    result = play_match(Rules(side=3), AgentFactory(Rules(side=3))("greedy"),
                        AgentFactory(Rules(side=3))("random"), 4, name_a="greedy",
                        name_b="random")
    table = format_matches([result])
    header, rule, row = table.splitlines()
    assert header.split()[:3] == ["A", "B", "games"] and set(rule) <= {"-", " "}
    assert row.split()[:3] == ["greedy", "random", "4"]
    assert f"{result.wins}-{result.draws}-{result.losses}" in row
    markdown = format_matches([result], markdown=True)
    assert markdown.startswith("| A") and markdown.splitlines()[1].startswith("|--")
    assert short_name("checkpoint:runs/a/checkpoints/checkpoint-step000000500-iter000010.pt"
                      ) == "a/step500"
    assert short_name("uct:200") == "uct:200"
    # digits that are part of a name are not a step; a model file that says "step" is
    assert short_name("runs/ratings/svw50.pt") == "ratings/svw50"
    assert short_name("runs/ratings/ctrl.pt") == "ratings/ctrl"
    assert short_name("runs/ratings/general-step38752.pt") == "ratings/step38752"
    assert short_name("checkpoint:runs/b/model_step_70.pt") == "b/step70"


def test_checkpoint_agents_gate_and_ladder(tmp_path, capsys):
    pytest.importorskip("torch")
    from catena_zero.cli.arena import main

    run = tmp_path / "run"
    first = _checkpoint(run / "checkpoints", 10)
    second = _checkpoint(run / "checkpoints", 20)
    registry = tmp_path / "champions.json"
    common = ["board=side3", "mcts.num_simulations=2", "mcts.max_considered_actions=2",
              "arena.device=cpu", f"arena.gate.registry={registry}"]

    assert main(common + ["arena.agent_a=greedy", "arena.agent_b=random", "arena.num_games=8",
                          f"arena.opening_agent=checkpoint:{first}",
                          f"arena.results_json={tmp_path / 'match.json'}"]) == 0
    out = capsys.readouterr().out
    assert "greedy" in out and "95% CI" in out
    saved = json.loads((tmp_path / "match.json").read_text())
    assert saved["num_games"] == 8 and len(saved["games"]) == 8
    # The network's openings are sampled, so the four pairs start differently.
    openings = {tuple(g["actions"][:g["opening_plies"]]) for g in saved["games"]}
    assert saved["distinct_openings"] == len(openings) == 4

    assert main(common + ["arena=gate", f"arena.candidate=checkpoint:{first}"]) == 0
    assert "first" in capsys.readouterr().out
    assert main(common + ["arena=gate", f"arena.candidate=checkpoint:{second}",
                          "arena.gate.num_games=4"]) == 0
    out = capsys.readouterr().out
    assert "run/step20" in out and "run/step10" in out
    champion = ChampionRegistry(registry).champion(Track(3, "komi", "standard"))
    assert champion.checkpoint == str(second if "PROMOTED (threshold)" in out else first)

    assert main(common + ["arena=ladder", f"arena.ladder.run_dir={run}",
                          "arena.ladder.baselines=[random]",
                          "arena.ladder.games_per_pair=2"]) == 0
    out = capsys.readouterr().out
    assert "step20" in out and (run / "elo" / "elo.csv").exists()
    # The raw matches name each checkpoint by its content and search.
    players = json.loads((run / "elo" / "matches.json").read_text())["players"]
    by_step = {player["step"]: player["player"] for player in players if player["step"]}
    for step, path in ((10, first), (20, second)):
        assert by_step[step]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert by_step[step]["search"]["num_simulations"] == 2
    assert "Elo" in out.split("\n\n")[-2]

    # A network trained on side 3 plays side 4 too: no weight depends on the board's size.
    from catena_zero.mcts import SearchConfig

    search = SearchConfig(num_simulations=2, max_considered_actions=2)
    agent = AgentFactory(Rules(side=4), search_config=search, device="cpu")(f"checkpoint:{first}")
    result = play_match(Rules(side=4), agent, AgentFactory(Rules(side=4))("random"), 2)
    assert result.num_games == 2 and result.rules == "side4-komi-standard"


def test_format_elo_lists_players_by_rating():
    from catena_zero.arena.elo import PairwiseResults, fit_bradley_terry

    results = PairwiseResults(["random", "step5"], [None, 5])
    results.add("step5", "random", 7, 1, 2)
    lines = format_elo(fit_bradley_terry(results)).splitlines()
    assert lines[2].split()[0] == "step5" and lines[3].split()[:2] == ["random", "+0"]


def test_cli_refuses_bad_values():
    from catena_zero.cli.arena import main
    from catena_zero.cli.common import ConfigError

    with pytest.raises(ConfigError, match="bogus"):
        main(["board=side3", "arena.agent_a=bogus"])
    with pytest.raises(ConfigError, match="num_games"):
        main(["board=side3", "arena.num_games=3"])
    with pytest.raises(ConfigError, match="candidate"):
        main(["board=side3", "arena=gate"])
