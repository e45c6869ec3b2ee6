"""A solved track's result is one of three outcomes (komi.atlas.outcome): the interval holds the
exact value, the player is too weak by the solver's evidence, or the method erred. Checked on
recorded rows of the step-90144 model's atlas (tests/komi/data/atlas-step90144.json: docs/komi/
atlas.json as it was measured on 2026-12-04, all three outcomes among its rows) and on real
side-2 games of the model that made them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.cli.komi import load_atlas_model
from catena_zero.data.file_history import same_content_hashes
from catena_zero.komi.atlas import atlas_agent, file_sha256, run_atlas, track_rules
from catena_zero.komi.atlas.outcome import HOLDS, METHOD_ERROR, PLAYER_TOO_WEAK, exact_outcome
from catena_zero.komi.atlas.report import markdown_table
from catena_zero.komi.config import AtlasConfig
from catena_zero.komi.solver_agent import SolverAgent
from catena_zero.komi.strength import check_komis, solver_check
from catena_zero.mcts import SearchConfig
from catena_zero.rules import Engine, Rules

ROOT = Path(__file__).resolve().parents[2]
ATLAS = ROOT / "tests" / "komi" / "data" / "atlas-step90144.json"
MODELS = ROOT / "catena_zero" / "play" / "models"


def recorded(track: str) -> dict:
    return json.loads(ATLAS.read_text())["records"][track]


def atlas_model_path() -> Path:
    """The bundled file whose SHA-256 is the one the committed atlas names (or was, before
    a rewrite that kept its weights: catena_zero.data.file_history)."""
    wanted = recorded("side2-komi-standard")["model"]["sha256"]
    return next(path for path in sorted(MODELS.glob("*.pt"))
                if wanted in same_content_hashes(file_sha256(path)))


def test_solver_values_are_at_the_games_komi():
    """Side 2 komi/standard: the exact margin is +2.5 at komi 0, so -0.5 at komi 3 (half
    points: -1); the result a move keeps is judged at the komi the game is played at."""
    rules = Rules(side=2)
    engine = Engine(rules)
    states = engine.new_games(1, komi=3)
    values = SolverAgent().move_values(engine, states, 0)
    assert values[rules.board.parse_action("A1")] == -1
    assert values[rules.board.button_action] == -11


@pytest.mark.parametrize(("track", "outcome", "words"), [
    ("side2-komi-longest", HOLDS, None),  # above the range, as perfect play
    ("side3-komi-standard", HOLDS, "70% of 80 moves margin-optimal (bar 80%)"),
    ("side3-double-standard", PLAYER_TOO_WEAK, "78% of 72 moves margin-optimal (bar 80%)"),
    ("side3-nokomi-longest", PLAYER_TOO_WEAK, "54% of 74 moves margin-optimal (bar 80%)"),
    ("side2-komi-standard", METHOD_ERROR, "100% of 32 moves margin-optimal (bar 80%)"),
    ("side2-komi-quadratic", METHOD_ERROR, "92% of 26 moves margin-optimal (bar 80%)"),
])
def test_recorded_rows_get_exactly_one_outcome(track, outcome, words):
    record = recorded(track)
    found, note = exact_outcome(record)
    assert found == outcome
    if words:
        assert words in note
    if outcome == METHOD_ERROR:
        # the check of these rows began after two random moves it never looked at
        assert "misses the exact" in note and "two random moves" in note
    table = markdown_table({"records": {track: record}})
    assert f"| {outcome}" in table


def test_unsolved_tracks_have_no_outcome():
    assert exact_outcome(recorded("side4-komi-standard")) == (None, None)


def test_a_check_without_solver_evidence_is_a_method_error_when_the_interval_misses():
    record = {**recorded("side3-double-standard"), "strength": None}
    outcome, note = exact_outcome(record)
    assert outcome == METHOD_ERROR and "no solver check" in note


def test_the_check_plays_both_sides_of_the_exact_fair_komi():
    assert check_komis(Rules(side=2), 2.5) == [2, 3]
    assert check_komis(Rules(side=2, scoring="longest"), None) == [15]  # above the range
    assert check_komis(Rules(side=2, game_type="double"), 0.0) == [0]


@pytest.fixture(scope="module")
def side2_agent():
    torch.set_num_threads(1)
    model = load_atlas_model(str(atlas_model_path()), "cpu", "float32")
    record = recorded("side2-komi-standard")
    config = dataclasses.replace(AtlasConfig(), **{
        key: record["settings"]["atlas"][key] for key in ("simulations", "opening_moves")})
    return model, config


def test_the_check_sees_the_move_that_decides_side_2(side2_agent):
    """The model's own games from the empty board, as the sweep plays them: White's first
    reply gives away two points in every game, which turns komi 3 (perfect play: White by
    0.5) into a Black win. 5 moves in 6 are still margin-optimal, above the 80% bar; the
    result-keeping share falls below its bar."""
    model, config = side2_agent
    rules = track_rules(2, "komi/standard")
    agent = atlas_agent(rules, model, SearchConfig(), config)
    check = solver_check(rules, agent, games=8, min_share=0.8, komis=[2, 3],
                         min_result_share=0.95)
    assert check["komis"] == [2, 3] and check["games"] == 8 and check["moves"] == 48
    assert check["margin_optimal"]["share"] == pytest.approx(40 / 48)
    assert check["result_keeping"]["share"] == pytest.approx(44 / 48)
    assert check["black_score"] == {"2": 1.0, "3": 1.0}
    assert not check["strong_enough"]


def test_a_fresh_side_2_measurement_is_flagged_too_weak(side2_agent, tmp_path):
    """The track the recorded atlas calls a method error, measured again with the check of
    the model's own games: the interval misses 2.5 and the solver's evidence says why."""
    model, _ = side2_agent
    settings = recorded("side2-komi-standard")["settings"]["atlas"]
    keys = ("simulations", "opening_moves", "check_simulations", "target_width", "max_games",
            "strength_games", "min_optimal_share")
    config = AtlasConfig(sides=[2], variants=["komi/standard"],
                         output=str(tmp_path / "atlas.json"),
                         solver_cache=str(tmp_path / "cache.json"),
                         **{key: settings[key] for key in keys})
    record = run_atlas(config, lambda *track: model, progress=False,
                       log=lambda line: None)["records"]["side2-komi-standard"]
    assert record["exact"] == 2.5 and not record["exact_agrees"]
    assert record["exact_outcome"] == PLAYER_TOO_WEAK
    assert "result-keeping (bar 95%)" in record["exact_outcome_note"]
    assert np.isfinite(record["sweep"]["margin_sd"]).all()
