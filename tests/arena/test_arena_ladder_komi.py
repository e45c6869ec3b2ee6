"""The Elo ladder plays at the track's fair komi unless a komi is given (komi 0 let the
colours decide most pairs on side 3, whose exact fair komi is 10.5)."""

from __future__ import annotations

import json

import pytest

from catena_zero.arena.agents import GreedyAgent, RandomAgent
from catena_zero.arena.config import ArenaConfig, LadderConfig
from catena_zero.arena.ladder import Player, ladder_komi, run_ladder
from catena_zero.komi.config import SolveConfig
from catena_zero.komi.exact import EXACT_FAIR_KOMI, exact_fair_komi, solve_exact
from catena_zero.rules import Rules


def _checkpoint(directory, step: int, extra: dict, side: int = 3):
    import torch

    from catena_zero.network import NetworkConfig, PolicyValueNet
    from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, get_board
    from catena_zero.train.checkpoint import Counters, save_checkpoint
    from catena_zero.train.config import TrainConfig
    from catena_zero.train.trainer import Trainer

    torch.set_num_threads(1)
    board = get_board(side)
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index,
                         NetworkConfig(blocks=1, channels=8, global_pool_every=0))
    trainer = Trainer(net, TrainConfig(), "cpu")
    trainer.step = step
    return save_checkpoint(directory, trainer, Counters(step=step), config={},
                           rules={"side": side, "game_type": "komi", "scoring": "standard"},
                           extra=extra, keep=0)


def _players(*paths_and_steps) -> list[Player]:
    return [Player("random", "random", None)] + [
        Player(f"step{step}", f"checkpoint:{path}", step) for path, step in paths_and_steps]


def test_the_exact_table_agrees_with_the_solver_on_side_2() -> None:
    for scoring in ("standard", "quadratic"):
        rules = Rules(side=2, scoring=scoring)
        solved = solve_exact(rules, SolveConfig(cache_path="", move_values=False))
        assert EXACT_FAIR_KOMI[f"side2-komi-{scoring}"] == solved["fair_komi"]
    assert exact_fair_komi(Rules(side=3)) == 10.5
    assert exact_fair_komi(Rules(side=6)) is None


def test_a_solve_cache_answers_what_the_table_does_not(tmp_path) -> None:
    cache = tmp_path / "solve_cache.json"
    cache.write_text(json.dumps({"format_version": 1, "results": {
        "side4-komi-standard": {"fair_komi": 3.5}}}))
    assert exact_fair_komi(Rules(side=4), cache) == 3.5
    assert exact_fair_komi(Rules(side=4), tmp_path / "missing.json") is None


def test_the_ladder_komi_is_given_else_exact_else_the_newest_estimate_else_0(tmp_path):
    rules = Rules(side=3)
    old = _checkpoint(tmp_path, 10, {"fair_komi": 7.2, "fair_komis": {}})
    new = _checkpoint(tmp_path, 20, {"fair_komi": 0.0,
                                     "fair_komis": {"side3-komi-standard": 9.4}})
    players = _players((old, 10), (new, 20))
    assert ladder_komi(rules, players, komi=4) == (4, "given")
    assert ladder_komi(rules, players, fair_komi=10.5) == (10, "exact")  # Black wins < 10.5
    assert ladder_komi(rules, players) == (9, "estimate")  # the newest checkpoint's, rounded
    assert ladder_komi(rules, _players((old, 10))) == (7, "estimate")  # its run's one track
    assert ladder_komi(rules, _players()) == (0, "none")
    with pytest.raises(ValueError, match="outside the range"):
        ladder_komi(rules, players, komi=99)


def test_run_ladder_plays_at_the_fair_komi_by_default(tmp_path) -> None:
    rules = Rules(side=3)
    agents = {"random": RandomAgent(), "greedy": GreedyAgent()}
    config = LadderConfig(baselines=["random", "greedy"], games_per_pair=2,
                          output_dir=str(tmp_path))
    result = run_ladder(rules, config, lambda spec: agents[spec], fair_komi=10.5)
    assert (result.komi, result.komi_source) == (10, "exact")
    assert all(match.komi == 10 for match in result.matches)
    saved = json.loads((tmp_path / "matches.json").read_text())
    assert (saved["komi"], saved["komi_source"]) == (10, "exact")
    assert run_ladder(rules, config, lambda spec: agents[spec], komi=0).komi == 0


def test_the_ladder_subcommand_says_its_komi_and_a_match_keeps_komi_0(tmp_path, capsys):
    from catena_zero.cli.arena import main

    assert ArenaConfig().komi is None  # null: per mode
    common = ["board=side3", "arena.device=cpu", f"arena.gate.registry={tmp_path / 'c.json'}"]
    assert main(common + ["arena=ladder", "arena.ladder.baselines=[random,greedy]",
                          "arena.ladder.games_per_pair=2",
                          f"arena.ladder.output_dir={tmp_path / 'elo'}"]) == 0
    out = capsys.readouterr().out
    assert "komi: 10 (the exact fair komi)  mode: ladder" in out
    assert main(common + ["arena.num_games=2"]) == 0
    assert "komi: 0  mode: match" in capsys.readouterr().out
