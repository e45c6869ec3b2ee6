"""How much the analysis engine takes on: the lines it reads ahead (bounded, none dropped),
the work one line may ask (maxVisits, maxTime), how often partial answers come, what
happens at the end of input while a search runs, and JSON's non-finite numbers."""

from __future__ import annotations

import io
import json
import os
import threading
import time

import pytest
import torch

from catena_zero.play.analysis_engine import AnalysisConfig, AnalysisEngine
from catena_zero.play.analysis_input import MAX_LINE_BYTES, MAX_QUEUED_LINES, PIECE
from catena_zero.play.analysis_protocol import (
    MIN_REPORT_SECONDS,
    QueryError,
    parse_line,
)
from catena_zero.play.bundled import ModelLibrary
from tests.export.tiny_model import tiny_model_file

VERSION = b'{"id":"v","action":"query_version"}'


@pytest.fixture(scope="module")
def library() -> ModelLibrary:
    torch.set_num_threads(1)
    return ModelLibrary(tiny_model_file(4))


class CountedLines:
    """A binary input of `count` copies of `line`, counting the lines handed out."""

    def __init__(self, line: bytes, count: int) -> None:
        self.line, self.left, self.read = line + b"\n", count, 0

    def readline(self, size: int = -1) -> bytes:
        assert len(self.line) <= size  # the reader asks for a whole piece at a time
        if self.left == 0:
            return b""
        self.left -= 1
        self.read += 1
        return self.line


class HeldOutput:
    """An output whose first write waits until the reader has stopped reading (it read all
    it will read ahead of the engine), recording how far ahead that was."""

    def __init__(self, source: CountedLines) -> None:
        self.source, self.lines, self.ahead = source, 0, None

    def write(self, text: str) -> None:
        if self.ahead is None:
            last, steady_since = -1, time.monotonic()
            while time.monotonic() - steady_since < 0.3 and self.source.left:
                if self.source.read != last:
                    last, steady_since = self.source.read, time.monotonic()
                time.sleep(0.01)
            self.ahead = self.source.read
        self.lines += text.count("\n")

    def flush(self) -> None:
        pass


# ------------------------------------------------------------ reading ahead, long lines
def test_the_reader_stays_a_bounded_number_of_lines_ahead(library) -> None:
    engine = AnalysisEngine(library, AnalysisConfig(visits=2, batch_size=16))
    source = CountedLines(VERSION, 2000)
    output = HeldOutput(source)
    engine.run(source, output)
    # the queue, the batch being answered and the line the reader holds while it waits
    assert output.ahead <= MAX_QUEUED_LINES + 16 + 1, output.ahead
    assert output.lines == 2000 and source.read == 2000  # every line answered


def test_an_overlong_line_names_its_length_and_the_limit(library) -> None:
    engine = AnalysisEngine(library, AnalysisConfig(visits=2))
    length = 5 * PIECE + 123
    line = b'{"id":"L","x":"' + b"x" * (length - 17) + b'"}'
    output = io.StringIO()
    engine.run(io.BytesIO(line + b"\r\n" + VERSION + b"\n"), output)
    answers = [json.loads(line) for line in output.getvalue().splitlines()]
    assert answers[0] == {"id": "L", "field": "line", "error": (
        f"line is {length} bytes, over the limit of {MAX_LINE_BYTES} bytes")}
    assert answers[1]["action"] == "query_version"


# ----------------------------------------------------------------- one line's work
def test_visits_and_time_have_a_documented_ceiling() -> None:
    limits = AnalysisConfig().limits
    query = {"id": "big", "side": 4, "maxVisits": 100_000}
    with pytest.raises(QueryError, match=f"maxVisits must be an integer in 1..{limits.max_visits}"):
        parse_line(json.dumps(query), limits)
    with pytest.raises(QueryError, match=f"maxTime must be a number of seconds in "
                                         f"\\(0, {limits.max_time:g}\\]"):
        parse_line(json.dumps({"id": "long", "side": 4, "maxTime": 3600}), limits)
    assert limits.max_visits <= 10_000 and limits.max_time <= 60


def test_partial_answers_come_at_most_every_tenth_of_a_second(library) -> None:
    engine = AnalysisEngine(library, AnalysisConfig(visits=2, max_visits=1_000_000))
    start = time.monotonic()
    answers = engine.handle_lines([json.dumps(
        {"id": "p", "side": 4, "maxVisits": 1_000_000, "maxTime": 0.6,
         "reportDuringSearchEvery": 1e-9})])
    elapsed = time.monotonic() - start
    partial = sum(answer["isDuringSearch"] for answer in answers)
    assert 1 <= partial <= elapsed / MIN_REPORT_SECONDS + 1, (partial, elapsed)
    assert answers[-1]["isDuringSearch"] is False
    query = parse_line('{"id": "p", "side": 4, "reportDuringSearchEvery": 1e-9}',
                       engine.config.limits)
    assert query.report_every == MIN_REPORT_SECONDS  # rounded up, as KataGo does


# ------------------------------------------------------------------ the end of input
def run_on_pipe(engine: AnalysisEngine, *queries: dict) -> tuple[list[dict], float]:
    """Run `engine` on a pipe; once its first answer is out, close the pipe. The answers,
    and the seconds from the close to the end of `run`."""
    read_end, write_end = os.pipe()
    lines: list[str] = []
    started = threading.Event()

    class Output:
        def write(self, text: str) -> None:
            lines.append(text)
            started.set()

        def flush(self) -> None:
            pass

    with open(read_end, "rb") as source:
        runner = threading.Thread(target=engine.run, args=(source, Output()), daemon=True)
        runner.start()
        os.write(write_end, b"".join(json.dumps(query).encode() + b"\n"
                                     for query in queries))
        assert started.wait(30)
        os.close(write_end)
        closed = time.monotonic()
        runner.join(timeout=30)
        ended = time.monotonic() - closed
        assert not runner.is_alive()
    return [json.loads(line) for line in "".join(lines).splitlines()], ended


LONG_QUERY = {"id": "long", "side": 4, "maxVisits": 1_000_000, "maxTime": 20,
              "reportDuringSearchEvery": 0.2}


def test_the_end_of_input_stops_a_search_with_its_best_answer(library) -> None:
    engine = AnalysisEngine(library, AnalysisConfig(visits=2, max_visits=1_000_000,
                                                    end_of_input="stop"))
    # The second query's maxTime differs, so it waits for a search of its own.
    answers, ended = run_on_pipe(engine, LONG_QUERY, LONG_QUERY | {"id": "next",
                                                                   "maxTime": 30})
    assert ended < 3.0, ended
    final = [answer for answer in answers if not answer["isDuringSearch"]]
    assert [answer["id"] for answer in final] == ["long", "next"]
    for answer in final:
        assert answer["moveInfos"] and 1 <= answer["rootInfo"]["visits"] < 1_000_000
        assert "the input ended: the search stopped after" in answer["warning"]


def test_by_default_the_end_of_input_lets_the_search_finish(library) -> None:
    engine = AnalysisEngine(library, AnalysisConfig(visits=2, max_visits=1_000_000))
    answers, ended = run_on_pipe(engine, LONG_QUERY | {"maxTime": 1.5})
    assert ended > 0.5 and answers[-1]["isDuringSearch"] is False
    assert "warning" not in answers[-1]


# ------------------------------------------------------------------ JSON's numbers
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_json_numbers_are_refused(constant: str) -> None:
    limits = AnalysisConfig().limits
    for line in [f'{{"id":"n","side":4,"komi":{constant}}}',
                 f'{{"id":"n","side":4,"maxTime":{constant}}}',
                 f'{{"id":"n","side":4,"reportDuringSearchEvery":{constant}}}']:
        with pytest.raises(QueryError) as caught:
            parse_line(line, limits)
        assert caught.value.field == "json" and constant in str(caught.value), line
        assert caught.value.query_id == "n"
