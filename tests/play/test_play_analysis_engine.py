"""The JSON-lines analysis engine: query validation (each bad field), answers, batching,
actions, the stream loop, and a real `catena-zero analysis` process."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.cli.analysis import build_engine
from catena_zero.cli.common import ConfigError
from catena_zero.play import analysis_engine as engine_module
from catena_zero.play.analysis_engine import AnalysisConfig, AnalysisEngine
from catena_zero.play.analysis_protocol import QueryError, QueryLimits, parse_line
from catena_zero.play.bundled import ModelLibrary
from catena_zero.rules import Engine, Game, Rules
from tests.export.tiny_model import tiny_model_file

REPOSITORY = Path(__file__).resolve().parents[2]
LIMITS = QueryLimits(default_visits=8, max_visits=64)
# RULES.md worked example 1 (side 6): ribbons C5-D5-E5 and G5-H6-H7.
EXAMPLE_ONE = ["C5", "G5", "D5", "H6", "E5", "H7"]


@pytest.fixture(scope="module")
def engine() -> AnalysisEngine:
    torch.set_num_threads(1)
    return AnalysisEngine(ModelLibrary(tiny_model_file(3)), AnalysisConfig(visits=8))


def ask(engine: AnalysisEngine, *queries: dict | str) -> list[dict]:
    return engine.handle_lines([q if isinstance(q, str) else json.dumps(q) for q in queries])


def refused(text: str | dict) -> QueryError:
    with pytest.raises(QueryError) as caught:
        parse_line(text if isinstance(text, str) else json.dumps(text), LIMITS)
    return caught.value


GOOD = {"id": "q", "side": 3, "komi": 0, "moves": ["C3"]}


@pytest.mark.parametrize(("query", "field", "words"), [
    ("{not json", "json", "bad JSON"),
    ("[1, 2]", "json", "JSON object"),
    ({"side": 3}, "id", "no id"),
    ({"id": 7, "side": 3}, "id", "non-empty string"),
    (GOOD | {"rules": "chess/standard"}, "rules", "unknown rules"),
    (GOOD | {"rules": {"game_type": "komi", "scoring": "area"}}, "rules", "unknown rules"),
    (GOOD | {"rules": "7/komi/standard"}, "rules", "names side 7"),
    (GOOD | {"side": 11}, "side", "2..10"),
    ({"id": "q", "moves": []}, "side", "no board side"),
    (GOOD | {"komi": 16}, "komi", "outside the range 0..15"),
    (GOOD | {"rules": "nokomi/standard", "komi": 3}, "komi", "outside the range 0..0"),
    (GOOD | {"komi": 2.5}, "komi", "whole number"),
    (GOOD | {"moves": "C3"}, "moves", "list"),
    (GOOD | {"moves": ["C3", "Z9"]}, "moves[1]", "not on the side-3 board"),
    (GOOD | {"moves": ["C3", "C3"]}, "moves[1]", "C3 is occupied"),
    (GOOD | {"analyzeTurns": [2]}, "analyzeTurns", "outside 0..1"),
    (GOOD | {"analyzeTurns": [0, 0]}, "analyzeTurns", "twice"),
    (GOOD | {"maxVisits": 0}, "maxVisits", "1..64"),
    (GOOD | {"maxVisits": 65}, "maxVisits", "1..64"),
    (GOOD | {"include": {"ownership": True, "heatmap": True}}, "include.heatmap",
     "unknown include key"),
    (GOOD | {"include": {"pv": "yes"}}, "include.pv", "true or false"),
    (GOOD | {"perspective": "red"}, "perspective", "perspective"),
    (GOOD | {"maxTime": 0}, "maxTime", "number of seconds"),
    (GOOD | {"maxTime": -1.5}, "maxTime", "number of seconds"),
    (GOOD | {"maxTime": "2"}, "maxTime", "number of seconds"),
    (GOOD | {"maxTime": True}, "maxTime", "number of seconds"),
    (GOOD | {"maxTime": 3601}, "maxTime", "number of seconds"),
    (GOOD | {"reportDuringSearchEvery": 0}, "reportDuringSearchEvery", "number of seconds"),
    (GOOD | {"boardsize": 3}, "boardsize", "unknown field"),
    ({"id": "a", "action": "reboot"}, "action", "unknown action"),
    ({"id": "a", "action": "terminate"}, "terminateId", "terminateId"),
])
def test_each_bad_field_is_named(query, field, words) -> None:
    error = refused(query)
    assert error.field == field and words in str(error)
    line = error.to_json()
    assert set(line) == {"id", "error", "field"}
    assert line["id"] == (query.get("id") if isinstance(query, dict)
                          and isinstance(query.get("id"), str) else None)


@pytest.mark.parametrize(("move", "words"), [
    ("D6", "would close a ring: D5 and C5 are in the same ribbon"),
    ("G6", "would have 3 stone neighbours"),
    ("I6", "branch at H6"),
])
def test_illegal_moves_say_why(move, words) -> None:
    # RULES.md worked example 1: B5 and F5 are legal, D6, G6 and I6 are not.
    for legal in ("B5", "F5"):
        parse_line(json.dumps({"id": "q", "side": 6, "moves": EXAMPLE_ONE + [legal]}), LIMITS)
    error = refused({"id": "q", "side": 6, "moves": EXAMPLE_ONE + [move]})
    assert error.field == "moves[6]" and f"move 6 {move} is illegal" in str(error)
    assert words in str(error)


@pytest.mark.parametrize(("rules", "moves", "words"), [
    ("komi/standard", ["button", "button"], "already been taken (by Black)"),
    ("nokomi/standard", ["button"], "first move must be a stone"),
    ("double/standard", ["C3", "button"], "no button"),
])
def test_illegal_button_says_why(rules, moves, words) -> None:
    error = refused({"id": "q", "side": 3, "rules": rules, "moves": moves})
    assert error.field == f"moves[{len(moves) - 1}]" and words in str(error)


def test_answers_list_legal_moves_visits_and_ownership(engine: AnalysisEngine) -> None:
    query = {"id": "one", "side": 3, "komi": 2, "moves": ["C3", "B2"], "maxVisits": 12,
             "analyzeTurns": [0, 2], "include": {"ownership": True, "policy": True}}
    answers = ask(engine, query)
    assert [(a["id"], a["turnNumber"]) for a in answers] == [("one", 0), ("one", 2)]
    board = Rules(side=3).board
    cells = {board.cell_name(c) for c in range(board.num_cells)}
    for answer, played in zip(answers, ([], ["C3", "B2"]), strict=True):
        game = Game(Rules(side=3), komi=2)
        for move in played:
            game.play(move)
        legal = {board.action_name(a) for a in game.legal_actions()}
        infos = answer["moveInfos"]
        assert infos and {info["move"] for info in infos} <= legal
        assert sum(info["visits"] for info in infos) == 12 == answer["rootInfo"]["visits"]
        assert [info["order"] for info in infos] == list(range(len(infos)))
        assert all(info["pv"][0] == info["move"] and 0 <= info["winrate"] <= 1
                   for info in infos)
        assert set(answer["ownership"]) == cells
        assert all(-1 <= value <= 1 for value in answer["ownership"].values())
        assert set(answer["policy"]) == legal
        assert answer["perspective"] == "side to move"
        assert answer["rootInfo"]["currentPlayer"] == "black"  # after 0 or 2 moves


def test_black_perspective_flips_every_number(engine: AnalysisEngine) -> None:
    base = {"side": 3, "moves": ["C3"], "maxVisits": 8, "include": {"ownership": True}}
    mover, black = ask(engine, base | {"id": "m"}, base | {"id": "b", "perspective": "black"})
    assert mover["rootInfo"]["currentPlayer"] == "white" and black["perspective"] == "black"
    for key in ("winrate", "rawWinrate"):
        assert black["rootInfo"][key] == pytest.approx(1 - mover["rootInfo"][key], abs=1e-4)
    for key in ("scoreLead", "rawScoreLead"):
        assert black["rootInfo"][key] == pytest.approx(-mover["rootInfo"][key], abs=1e-3)
    assert [i["move"] for i in black["moveInfos"]] == [i["move"] for i in mover["moveInfos"]]
    for flipped, own in zip(black["moveInfos"], mover["moveInfos"], strict=True):
        assert flipped["winrate"] == pytest.approx(1 - own["winrate"], abs=1e-4)
    for cell, value in mover["ownership"].items():
        assert black["ownership"][cell] == pytest.approx(-value, abs=1e-3)
    white = ask(engine, base | {"id": "w", "perspective": "white"})[0]
    assert white["rootInfo"]["winrate"] == pytest.approx(mover["rootInfo"]["winrate"], abs=1e-4)


def test_one_search_per_track_holds_every_turn(engine, monkeypatch) -> None:
    batches: list[tuple[int, int]] = []
    real_search = engine_module.search

    def counting_search(search_engine, states, *args, **kwargs):
        batches.append((search_engine.rules.side, states.batch_size))
        return real_search(search_engine, states, *args, **kwargs)

    monkeypatch.setattr(engine_module, "search", counting_search)
    answers = ask(engine,
                  {"id": "a", "side": 3, "moves": ["C3", "B2"], "analyzeTurns": [0, 1, 2]},
                  {"id": "b", "side": 3, "komi": 5, "moves": ["A1"], "maxVisits": 4},
                  {"id": "c", "side": 2, "moves": []})
    assert sorted(batches) == [(2, 1), (3, 4)]
    assert [a["id"] for a in answers] == ["a", "a", "a", "b", "c"]
    assert answers[3]["rootInfo"]["visits"] == 4


def test_errors_do_not_stop_the_batch_and_actions_answer(engine: AnalysisEngine) -> None:
    answers = ask(engine, "oops", {"id": "v", "action": "query_version"},
                  {"id": "x", "side": 3, "moves": ["C3", "C3"]},
                  {"id": "k", "side": 3, "moves": ["C3"], "analyzeTurns": [0, 1]},
                  {"id": "t", "action": "terminate", "terminateId": "k", "turnNumbers": [1]},
                  {"id": "z", "side": 3})
    assert answers[0]["field"] == "json"
    assert answers[1]["version"] and answers[1]["action"] == "query_version"
    assert answers[2] == {"id": "x", "field": "moves[1]",
                          "error": "move 1 C3 is illegal: C3 is occupied (a black stone)"}
    assert answers[3]["turnNumber"] == 0 and answers[3]["moveInfos"]
    assert answers[4] == {"id": "k", "turnNumber": 1, "isDuringSearch": False,
                          "noResults": True}
    assert answers[5] == {"id": "t", "action": "terminate", "terminateId": "k"}
    assert answers[6]["id"] == "z" and answers[6]["turnNumber"] == 0


def test_a_finished_game_is_answered_from_its_result(engine: AnalysisEngine) -> None:
    rules = Rules(side=2)
    batch_engine = Engine(rules)
    state = batch_engine.new_games(1)
    rng = np.random.default_rng(3)
    moves = []
    while not state.terminal[0]:
        action = batch_engine.random_actions(state, rng)
        moves.append(rules.board.action_name(int(action[0])))
        batch_engine.step(state, action)
    answer = ask(engine, {"id": "end", "side": 2, "moves": moves,
                          "include": {"ownership": True}})[0]
    assert answer["rootInfo"]["gameOver"] and answer["moveInfos"] == []
    assert answer["rootInfo"]["winrate"] in (0.0, 0.5, 1.0)
    assert set(answer["ownership"].values()) <= {-1.0, 0.0, 1.0}


def test_a_side_without_a_model_gets_an_error_line(tmp_path: Path) -> None:
    # A models folder holding only a side-4 champion (no general.pt, no side3.pt): the
    # package's own folder has a model for every side, so the library reads this one.
    (tmp_path / "side4.pt").write_bytes(tiny_model_file(4, program=False).read_bytes())
    library = ModelLibrary(directory=tmp_path)
    assert library.sides() == [4]
    bundled = AnalysisEngine(library, AnalysisConfig(visits=8))
    missing, present = ask(bundled, {"id": "s3", "side": 3, "moves": []},
                           {"id": "s4", "side": 4, "moves": []})
    assert missing == {"id": "s3", "field": "side", "error": (
        "no model for track 3/komi/standard: no bundled champion for side 3 (bundled "
        "sides: 4); pass --model FILE (see `catena-zero export`)")}
    assert present["id"] == "s4" and "error" not in present and present["moveInfos"]


def test_run_reads_until_end_of_input(engine: AnalysisEngine) -> None:
    lines = "\n".join([json.dumps({"id": "r1", "side": 3, "moves": []}), "",
                       '{"id": "r2", "side": 3, "maxVisits": 100001}']) + "\n"
    output = io.StringIO()
    engine.run(io.StringIO(lines), output)
    answers = [json.loads(line) for line in output.getvalue().splitlines()]
    assert [a["id"] for a in answers] == ["r1", "r2"] and answers[1]["field"] == "maxVisits"


def test_cli_config_is_checked() -> None:
    engine = build_engine([f"model={tiny_model_file(3)}", "visits=4", "batch_size=2"])
    assert engine.config.visits == 4 and engine.config.batch_size == 2
    with pytest.raises(ConfigError, match="visits must be an int >= 1"):
        build_engine(["visits=0"])
    with pytest.raises(ConfigError, match="algorithm"):
        build_engine(["algorithm=greedy"])


@pytest.mark.slow  # a fresh interpreter importing torch: ~10-40 s on a loaded 2-core box
def test_subprocess_client() -> None:
    environment = dict(os.environ, PYTHONPATH=str(REPOSITORY))
    process = subprocess.Popen(
        [sys.executable, "-m", "catena_zero.cli.main", "analysis",
         f"model={tiny_model_file(3)}", "visits=8", "threads=1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=REPOSITORY, env=environment)
    queries = [
        {"id": "q1", "side": 3, "moves": ["C3"], "include": {"ownership": True}},
        {"id": "q2", "side": 3, "moves": ["C3"], "perspective": "black", "maxVisits": 16},
        {"id": "bad", "side": 3, "moves": ["C3", "C3"]},
        {"id": "v", "action": "query_version"},
    ]
    stdout, stderr = process.communicate(
        "\n".join(json.dumps(q) for q in queries) + "\nnot json\n", timeout=240)
    assert process.returncode == 0, stderr
    answers = [json.loads(line) for line in stdout.splitlines()]
    assert [a["id"] for a in answers] == ["q1", "q2", "bad", "v", None]
    first, second = answers[0], answers[1]
    game = Game(Rules(side=3))
    game.play("C3")
    legal = {game.board.action_name(a) for a in game.legal_actions()}
    assert {i["move"] for i in first["moveInfos"]} <= legal
    assert sum(i["visits"] for i in first["moveInfos"]) == 8
    assert sum(i["visits"] for i in second["moveInfos"]) == 16
    assert set(first["ownership"]) == {game.board.cell_name(c)
                                       for c in range(game.board.num_cells)}
    assert second["perspective"] == "black" and first["rootInfo"]["currentPlayer"] == "white"
    assert second["rootInfo"]["rawWinrate"] == pytest.approx(
        1 - first["rootInfo"]["rawWinrate"], abs=1e-4)
    assert answers[2]["field"] == "moves[1]" and answers[4]["field"] == "json"


def test_max_time_bounds_the_search() -> None:
    torch.set_num_threads(1)
    timed = AnalysisEngine(ModelLibrary(tiny_model_file(4)),
                           AnalysisConfig(visits=8, max_visits=1_000_000))
    ask(timed, {"id": "warm", "side": 4, "moves": [], "maxVisits": 16})
    start = time.monotonic()
    answers = ask(timed, {"id": "t", "side": 4, "moves": [], "maxVisits": 1_000_000,
                          "maxTime": 0.3})
    elapsed = time.monotonic() - start
    visits = answers[0]["rootInfo"]["visits"]
    assert 1 <= visits < 1_000_000 and elapsed < 5.0
    assert answers[0]["isDuringSearch"] is False and answers[0]["moveInfos"]


def test_partial_answers_come_during_the_search() -> None:
    torch.set_num_threads(1)
    timed = AnalysisEngine(ModelLibrary(tiny_model_file(4)),
                           AnalysisConfig(visits=8, max_visits=1_000_000))
    answers = ask(timed, {"id": "p", "side": 4, "moves": [], "maxVisits": 1_000_000,
                          "maxTime": 0.6, "reportDuringSearchEvery": 0.1},
                  {"id": "quiet", "side": 4, "moves": [], "maxVisits": 1_000_000,
                   "maxTime": 0.6})
    partial = [a for a in answers if a["isDuringSearch"]]
    final = [a for a in answers if not a["isDuringSearch"]]
    assert len(partial) >= 2 and {a["id"] for a in partial} == {"p"}
    assert [a["id"] for a in final] == ["p", "quiet"]
    assert answers.index(partial[-1]) < answers.index(final[0])  # partial answers first
    visits = [a["rootInfo"]["visits"] for a in partial] + [final[0]["rootInfo"]["visits"]]
    assert visits == sorted(visits) and all(a["moveInfos"] for a in partial)


def test_partial_answers_are_written_at_once_by_run() -> None:
    torch.set_num_threads(1)
    timed = AnalysisEngine(ModelLibrary(tiny_model_file(4)),
                           AnalysisConfig(visits=8, max_visits=1_000_000))
    query = {"id": "s", "side": 4, "moves": [], "maxVisits": 1_000_000, "maxTime": 0.4,
             "reportDuringSearchEvery": 0.1}
    output = io.StringIO()
    timed.run(io.StringIO(json.dumps(query) + "\n"), output)
    answers = [json.loads(line) for line in output.getvalue().splitlines()]
    assert [a["isDuringSearch"] for a in answers][-1] is False
    assert sum(a["isDuringSearch"] for a in answers) >= 2
