"""Hostile lines for the analysis engine: what a line may hold (length, UTF-8, nesting,
digits), refused before parsing with one error line each, the engine going on; echoes of
the client's values cut short; every line written back valid UTF-8 JSON."""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from catena_zero.play import analysis_engine as engine_module
from catena_zero.play.analysis_engine import AnalysisConfig, AnalysisEngine, json_line
from catena_zero.play.analysis_input import (
    MAX_LINE_BYTES,
    MAX_NESTING,
    MAX_NUMBER_DIGITS,
    OverlongLine,
    leading_id,
    load_line,
    read_lines,
    structure,
)
from catena_zero.play.analysis_protocol import QueryError, QueryLimits, parse_line
from catena_zero.play.bundled import ModelLibrary
from tests.export.tiny_model import tiny_model_file

LIMITS = QueryLimits(default_visits=4, max_visits=64)
FIRST = '{"id":"q1","side":3,"maxVisits":2}'
ECHO_LIMIT = 40 + len("...")  # gtp.ECHO_CHARS and the cut's mark


@pytest.fixture(scope="module")
def engine() -> AnalysisEngine:
    torch.set_num_threads(1)
    return AnalysisEngine(ModelLibrary(tiny_model_file(3)), AnalysisConfig(visits=4))


def run_stream(engine: AnalysisEngine, data: bytes) -> list[dict]:
    """Feed `data` to `engine.run` as sys.stdin would (a text stream over bytes); every line
    written back must be valid UTF-8 JSON."""
    output = io.StringIO()
    engine.run(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"), output)
    raw = output.getvalue().encode("utf-8")  # raises on a lone surrogate
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]


def refusal(line: str | bytes | dict) -> QueryError:
    with pytest.raises(QueryError) as caught:
        parse_line(json.dumps(line) if isinstance(line, dict) else line, LIMITS)
    return caught.value


# ------------------------------------------------------------------ the reproductions
def test_deep_nesting_and_long_numbers_cost_one_line_each(engine) -> None:
    deep = '{"id":"d","x":' + "[" * 1000 + "]" * 1000 + "}"
    digits = '{"id":"b","komi":1' + "0" * 5000 + "}"
    answers = run_stream(engine, "\n".join([FIRST, deep, digits, FIRST]).encode() + b"\n")
    assert [a["id"] for a in answers] == ["q1", "d", "b", "q1"]
    assert answers[0]["moveInfos"] and answers[3]["moveInfos"]
    assert answers[1] == {"id": "d", "field": "line", "error":
                          f"line nests deeper than {MAX_NESTING} levels of arrays and objects"}
    assert answers[2] == {"id": "b", "field": "line", "error":
                          f"line holds a number of more than {MAX_NUMBER_DIGITS} digits"}


def test_a_line_that_is_not_utf8_names_the_encoding(engine) -> None:
    bad_id = b'{"id":"\xff\xfe","side":3}'
    bad_later = b'{"id":"k","side":3,"moves":["\xc3"]}'
    answers = run_stream(engine, b"\n".join([bad_id, bad_later, FIRST.encode()]) + b"\n")
    assert answers[0] == {"id": None, "field": "line",
                          "error": "line is not valid UTF-8: invalid start byte at byte 7"}
    assert answers[1]["id"] == "k" and answers[1]["field"] == "line"
    assert answers[1]["error"].startswith("line is not valid UTF-8")
    assert answers[2]["id"] == "q1" and answers[2]["moveInfos"]


def test_escaped_lone_surrogates_never_come_back(engine) -> None:
    lines = ['{"id":"\\udcff","side":3}',
             '{"id":"t","action":"terminate","terminateId":"\\ud800"}',
             '{"id":"m","side":3,"moves":["\\udcff"]}',
             '{"id":"u","side":3,"\\udcff":1}']
    answers = run_stream(engine, "\n".join(lines).encode() + b"\n")
    assert [(a["id"], a["field"]) for a in answers] == [
        (None, "id"), ("t", "terminateId"), ("m", "moves[0]"), ("u", "\\udcff")]
    assert "lone surrogate" in answers[0]["error"]


def test_an_overlong_line_is_skipped_without_holding_it(engine) -> None:
    long_move = b'{"id":"L","side":3,"moves":["' + b"x" * (4 * MAX_LINE_BYTES) + b'"]}'
    answers = run_stream(engine, long_move + b"\n" + FIRST.encode() + b"\n")
    assert answers[0] == {"id": "L", "field": "line", "error": (
        f"line is {len(long_move)} bytes, over the limit of {MAX_LINE_BYTES} bytes")}
    assert answers[1]["id"] == "q1" and answers[1]["moveInfos"]


def test_the_reader_keeps_at_most_one_piece_of_a_line() -> None:
    limit = MAX_LINE_BYTES + 2
    exact = b"a" * MAX_LINE_BYTES + b"\r\n"
    stream = io.BytesIO(exact + b"b" * (3 * limit) + b"\nlast")
    lines: list = []
    read_lines(stream, lines.append)
    assert lines[0] == exact
    assert isinstance(lines[1], OverlongLine) and len(lines[1].head) == limit
    assert lines[1].length == 3 * limit
    assert lines[2] == b"last"
    with pytest.raises(QueryError, match=f"line is {MAX_LINE_BYTES + 2} bytes, over the "
                                         f"limit of {MAX_LINE_BYTES} bytes"):
        load_line("[" + " " * MAX_LINE_BYTES + "]")
    assert load_line("[" + " " * (MAX_LINE_BYTES - 2) + "]\r\n") == []


def test_echoes_of_client_values_are_cut(engine) -> None:
    huge = "Z" * 60000
    queries = [{"id": "a", "side": 3, "moves": [huge]},
               {"id": "b", "side": 3, "moves": ["C3", "Q" * 40]},
               {"id": "c", "side": 3, "rules": "komi/" + huge},
               {"id": "d", "side": 3, huge: 1},
               {"id": "e", "side": 3, "include": {huge: True}},
               {"id": "f", "side": 3, "perspective": huge},
               {"id": "g", "side": 3, "analyzeTurns": list(range(5000))},
               {"id": "h", "action": huge}]
    answers = engine.handle_lines([json.dumps(query) for query in queries])
    assert [a["id"] for a in answers] == list("abcdefgh")
    for answer in answers:
        assert len(json_line(answer)) < 300, answer
    assert answers[0]["error"] == ("move 0 must be a string like 'F6' or 'button', got '"
                                   + "Z" * 39 + "...")
    assert answers[3]["field"] == "Z" * 40 + "..."


def test_a_leading_id_is_recovered_only_when_unambiguous() -> None:
    assert leading_id(' { "id" : "a\\"b", "x": [[[') == 'a"b'
    assert leading_id('{"side": 3, "id": "a"') is None  # not first: would need parsing
    assert leading_id('{"id": "a", "x": {"id": "b"}') is None  # which one is meant
    assert leading_id('{"id": "\\udcff"') is None and leading_id('{"id": ""') is None
    assert refusal("{not json").query_id is None
    assert refusal('{"id": "p", "side": 3,,}').query_id == "p"


# ------------------------------------------------------------------------- properties
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.text(max_size=12)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=30)


def depth_of(value) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(item) for item in value.values()), default=0)
    return 0


def longest_digits(value) -> int:
    """The longest run of digits in the JSON of `value`'s numbers (strings left out)."""
    if isinstance(value, list | dict):
        items = value.values() if isinstance(value, dict) else value
        return max((longest_digits(item) for item in items), default=0)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return max(len(run) for run in re.findall(r"[0-9]+", json.dumps(value)))
    return 0


@settings(max_examples=100, deadline=None)
@given(value=json_values, indent=st.sampled_from([None, 1]), ascii_only=st.booleans())
def test_the_scan_measures_any_json_like_the_parser(value, indent, ascii_only) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    assert structure(text) == (depth_of(value), longest_digits(value))


# Values of every JSON type for the query's fields, kept small: the field checks are the
# subject here, not the scan.
any_value = (st.none() | st.booleans() | st.integers(-5, 20) | st.floats() | st.text(max_size=4)
             | st.lists(st.integers(-2, 5) | st.text(max_size=3), max_size=3)
             | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
query_values = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=4), "side": st.integers(2, 4) | any_value},
    optional={"rules": st.sampled_from(["komi/standard", "6/komi/standard", "\u00b2/komi/x",
                                        "1" * 5000 + "/komi/standard"]) | any_value,
              "komi": st.integers(-3, 20) | st.floats() | any_value,
              "moves": st.lists(st.sampled_from(["C3", "B2", "A1", "button", "pass", "C3x",
                                                 "", "\u00e9"]) | any_value, max_size=6),
              "analyzeTurns": st.lists(st.integers(-1, 7), max_size=4) | any_value,
              "maxVisits": st.integers(-1, 100) | any_value,
              "include": st.dictionaries(st.sampled_from(["pv", "ownership", "x"]),
                                         st.booleans() | any_value) | any_value,
              "perspective": st.sampled_from(["black", "white", "red"]) | any_value,
              "action": st.sampled_from(["query_version", "terminate", "reboot"]),
              "terminateId": any_value, "turnNumbers": any_value})


@settings(max_examples=200, deadline=None)
@given(query=query_values)
def test_any_query_object_is_answered_or_refused_with_one_short_line(query) -> None:
    line = json.dumps(query)
    try:
        parse_line(line, LIMITS)
    except QueryError as error:
        text = json_line(error.to_json())
        assert len(text) < 700 and "\n" not in text


@pytest.mark.parametrize("text", [
    'x"' + '\\"' * (MAX_LINE_BYTES // 2 - 2),  # every quote starts an unterminated string
    '"' * MAX_LINE_BYTES, "[" * MAX_LINE_BYTES, '["' + "a" * (MAX_LINE_BYTES - 4) + '"]',
    '{"id":"s","x":"' + "\\u0041" * (MAX_LINE_BYTES // 6 - 4) + '"}'])
def test_the_scan_of_a_longest_line_is_quick(text) -> None:
    start = time.process_time()
    try:
        load_line(text)
    except QueryError:
        pass
    assert time.process_time() - start < 2.0  # ~20 ms; a quadratic scan took a minute


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_bytes_are_refused_or_read_never_raised_past(data) -> None:
    try:
        parse_line(data, LIMITS)
    except QueryError as error:
        json_line(error.to_json()).encode("ascii")  # one line, ASCII, valid


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(MAX_NESTING + 1, 3000),
       digits=st.integers(MAX_NUMBER_DIGITS + 1, 6000))
def test_structures_past_the_limits_are_refused_unparsed(seed, depth, digits) -> None:
    rng = random.Random(seed)
    opener = "".join(rng.choice("[{") for _ in range(depth))
    nested = '{"id":"n","x":' + "".join(
        '{"k":' if c == "{" else "[" for c in opener) + "0" + "".join(
        "}" if c == "{" else "]" for c in reversed(opener)) + "}"
    assert refusal(nested).field == "line" and refusal(nested).query_id == "n"
    number = '{"id":"n","komi":' + rng.choice(["", "-"]) + "1" * digits + ".5}"
    assert "digits" in str(refusal(number))
    assert refusal('["' + "2" * 4301 + '"]').field == "json"  # in a string: no digit limit


@pytest.mark.parametrize("track", ["\u00b2/komi/standard", "1" * 5000 + "/komi/standard",
                                   "06x/komi/standard"])
def test_a_track_side_is_ascii_digits(track) -> None:
    error = refusal({"id": "r", "rules": track})
    assert error.field == "rules" and "side must be 2..10" in str(error)
    assert len(str(error)) < 120


def test_a_huge_komi_is_out_of_range_not_echoed_whole() -> None:
    error = refusal('{"id": "k", "side": 3, "komi": 1e300}')
    assert str(error) == "komi 1e+300 is outside the range 0..15 of komi/standard"
    assert "outside the range 0..15" in str(refusal({"id": "k", "side": 3, "komi": 10**30}))


@pytest.mark.slow  # a fresh interpreter importing torch: ~10-40 s on a loaded 2-core box
def test_the_command_survives_hostile_lines() -> None:
    repository = Path(__file__).resolve().parents[2]
    lines = [FIRST.encode(), b'{"id":"d","x":' + b"[" * 1000 + b"]" * 1000 + b"}",
             b'{"id":"b","komi":1' + b"0" * 5000 + b"}", b'{"id":"\xff","side":3}',
             b'{"id":"m","side":3,"moves":["' + b"x" * 10**6 + b'"]}', FIRST.encode()]
    process = subprocess.run(
        [sys.executable, "-m", "catena_zero.cli.main", "analysis",
         f"model={tiny_model_file(3)}", "visits=4", "threads=1"],
        input=b"\n".join(lines) + b"\n", capture_output=True, cwd=repository, timeout=240,
        env=dict(os.environ, PYTHONPATH=str(repository)))
    assert process.returncode == 0 and process.stderr == b"", process.stderr[-2000:]
    answers = [json.loads(line) for line in process.stdout.decode("utf-8").splitlines()]
    assert [(a["id"], a.get("field")) for a in answers] == [
        ("q1", None), ("d", "line"), ("b", "line"), (None, "line"), ("m", "line"),
        ("q1", None)]
    assert max(len(line) for line in process.stdout.splitlines()) < 2000


def test_a_value_no_check_names_still_costs_one_line(engine, monkeypatch) -> None:
    def broken(*args):
        raise ValueError("a check the protocol lacks")

    monkeypatch.setattr(engine_module, "positions", broken)
    answers = engine.handle_lines(['{"id": "x", "side": 3}', '{"id": "v", "action":'
                                   ' "query_version"}'])
    assert answers[0] == {"id": "x", "field": None,
                          "error": "line refused: a check the protocol lacks"}
    assert answers[1]["action"] == "query_version"


def test_an_answer_with_a_lone_surrogate_is_never_written() -> None:
    line = json_line({"id": "\udcff", "turnNumber": 0})
    assert json.loads(line) == {"id": None, "field": None,
                                "error": "an answer held text that is not valid Unicode"}
    assert json_line({"id": "é😀"}) == '{"id":"\\u00e9\\ud83d\\ude00"}'  # pairs are text
