"""benchmarks/loss_study.py and loss_analysis.py: games kept with their players' hashes, and
the study of the lost ones."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from benchmarks import loss_analysis, loss_study
from catena_zero.data.game_record import load_record
from catena_zero.play.bundled import bundled_model_path
from catena_zero.rules import Engine, Rules

torch.set_num_threads(1)


def test_the_turning_point_is_where_the_value_stays_below_zero() -> None:
    assert loss_analysis.turning_point(np.array([0.3, -0.1, 0.2, -0.4, -0.9])) == 3
    assert loss_analysis.turning_point(np.array([-0.3, -0.1, -0.2])) == 0
    # never below zero for good: the turning point is past the last position
    assert loss_analysis.turning_point(np.array([-0.3, 0.1])) == 2
    assert loss_analysis.turning_point(np.array([0.0, -0.5])) == 1  # zero is not losing


def test_phases_split_the_legal_cells_in_thirds() -> None:
    shares = np.array([1.0, 0.7, 2 / 3, 0.5, 0.34, 1 / 3, 0.1, 0.0])
    assert loss_analysis.phase_of(shares).tolist() == [0, 0, 1, 1, 1, 2, 2, 2]


@pytest.mark.parametrize("seed", range(6))
def test_the_exact_scan_finds_the_move_that_threw_the_game_away(seed: int) -> None:
    from catena_zero.mcts.endgame import ExactEndgame

    rules = Rules(3)
    engine = Engine(rules)
    rng = np.random.default_rng(seed)
    komi = 10  # side 3's exact fair komi is 10.5: Black wins with perfect play
    state = engine.new_games(1, komi)
    actions = []
    while not state.terminal[0]:
        action = engine.random_actions(state, rng)
        actions.append(int(action[0]))
        engine.step(state, action)
    loser = 3 - int(engine.result(state).winner[0]) if engine.result(state).winner[0] else 1
    positions, alive = loss_analysis.replay_positions(engine, komi, [actions])
    legal = np.array([engine.legal_actions(p)[0, :-1].sum() for p in positions])
    found = loss_analysis.exact_decision(engine, positions, 0, len(actions), loser, legal,
                                         max_cells=rules.board.num_cells, budget=10**7)
    solver = ExactEndgame(rules)

    def loser_value(ply: int) -> float:
        if ply >= len(actions):
            return -1.0
        margin = solver.margins(positions[ply], np.array([0]))[0]
        return float(np.sign(margin)) * (1.0 if loser == 1 else -1.0)

    values = [loser_value(ply) for ply in range(len(actions))]
    if found["verdict"] == "thrown away":
        ply = found["ply"]
        assert positions[ply].to_move[0] == loser and values[ply] >= 0
        assert loser_value(ply + 1) < 0
        # no later move of the loser turned a held position into a lost one
        assert not any(positions[later].to_move[0] == loser and values[later] >= 0
                       and loser_value(later + 1) < 0
                       for later in range(ply + 1, len(actions)))
    else:
        assert found["verdict"] == "lost before the horizon"
        assert max(values) < 0


def test_entropy_counts_only_legal_moves() -> None:
    logits = np.array([[0.0, 0.0, 50.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    legal = np.array([[True, True, False, False], [True, True, True, True]])
    entropy = loss_analysis.legal_entropy(logits, legal)
    assert entropy == pytest.approx([np.log(2), np.log(4)])


def test_replayed_positions_are_those_of_the_games() -> None:
    rules = Rules(3)
    engine = Engine(rules)
    rng = np.random.default_rng(4)
    games = []
    for _ in range(3):
        state = engine.new_games(1, 5)
        actions = []
        while not state.terminal[0]:
            action = engine.random_actions(state, rng)
            actions.append(int(action[0]))
            engine.step(state, action)
        games.append(actions)
    positions, alive = loss_analysis.replay_positions(engine, 5, games)
    assert alive.sum(axis=1).tolist() == [len(actions) for actions in games]
    for game, actions in enumerate(games):
        state = engine.new_games(1, 5)
        for ply, action in enumerate(actions):
            assert np.array_equal(positions[ply].stones[game], state.stones[0])
            engine.step(state, np.array([action]))


def test_play_keeps_every_game_and_names_players_by_hash_then_analyse_studies_losses(
        tmp_path: Path, capsys) -> None:
    model = bundled_model_path(4)
    out = tmp_path / "loss"
    assert loss_study.main(["play", "--model", str(model), "--opponent", "uct:8",
                            "--track", "4/komi/standard", "--games", "4", "--komi", "15",
                            "--search", "rollout_mix=0",
                            "--simulations", "2", "--out", str(out)]) == 0
    report = json.loads((out / "games.json").read_text())
    assert report["model"]["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert report["model"]["search"]["num_simulations"] == 2
    assert report["model"]["search"]["rollout_mix"] == 0  # the network's value alone
    # at the top of the komi range White wins nearly every game: the model loses as Black
    assert report["komi"] == 15 and report["komi_source"] == "given"
    (match,) = report["matches"].values()
    assert list(report["matches"]) == ["side4-uct8"]
    assert match["opponent"] == {"spec": "uct:8",
                                 "search": {"algorithm": "uct", "playouts": 8}}
    assert len(match["games"]) == 4
    points = sum(game["a_points"] for game in match["games"])
    assert points == match["result"]["wins"] + 0.5 * match["result"]["draws"]
    for game in match["games"]:
        record = load_record(out / game["sgf"])
        assert record.actions == game["actions"] and record.result == game["result"]
    study = loss_analysis.analyse(loss_analysis_arguments(out), log=lambda line: None)
    assert study["lost"] == sum(game["a_points"] == 0 for game in match["games"])
    assert study["lost"] >= 1 and study["lost"] + study["won"] <= 4
    for loss in study["losses"]:
        assert 0 <= loss["turning_ply"] <= loss["plies"]
        assert loss["phase"] in loss_analysis.PHASES
        if "deep" in loss:
            assert -1 <= loss["deep"]["q_deep_choice"] <= 1
    written = json.loads((out / "study.json").read_text())
    assert written["summary"]["losses"] == study["lost"]
    assert {"lost_games", "won_games"} <= set(written["network"])
    for drawn in written["gallery"]:
        assert Path(drawn["file"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def loss_analysis_arguments(out: Path):
    import argparse

    parser = argparse.ArgumentParser()
    loss_analysis.add_arguments(parser)
    return parser.parse_args(["--games-file", str(out / "games.json"), "--out", str(out),
                              "--deep-factor", "4", "--gallery", "2"])


def test_bad_input_is_one_line(tmp_path: Path, capsys) -> None:
    assert loss_study.main(["play", "--model", str(tmp_path / "none.pt"),
                            "--opponent", "uct:10"]) == 1
    assert capsys.readouterr().err.strip().startswith("loss_study: --model")
    (tmp_path / "x.json").write_text('{"format": "other"}')
    assert loss_study.main(["analyse", "--games-file", str(tmp_path / "x.json")]) == 1
    assert "not a loss study games file" in capsys.readouterr().err


def test_the_picture_lays_cells_out_as_the_page_does() -> None:
    from benchmarks.board_picture import cell_positions

    rules = Rules(6)
    positions = cell_positions(rules)
    board = rules.board
    a1, f1, a6, f6 = (board.parse_action(name) for name in ("A1", "F1", "A6", "F6"))
    assert positions[a1, 1] == positions[f1, 1] < positions[a6, 1]  # row 1 at the bottom
    assert positions[f1, 0] - positions[a1, 0] == pytest.approx(5.0)
    distances = np.linalg.norm(positions[:, None] - positions[None], axis=2)
    for cell, neighbours in enumerate(board.neighbours):
        real = neighbours[neighbours < board.num_cells]
        assert distances[cell, real] == pytest.approx(np.ones(len(real)))
    assert positions[f6] == pytest.approx(positions.mean(axis=0))  # F6 is the centre
