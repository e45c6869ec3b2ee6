"""A damaged metrics.jsonl: a resumed run and the report skip its bad lines, say so in one
line naming the file and the line, and go on; a FIFO or other non-regular file is refused
without being opened for a blocking read."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catena_zero.cli.main import EXIT_BAD_FILE, main
from catena_zero.pipeline.metrics import (
    METRICS_FORMAT,
    RECORD_FIELDS,
    MetricsError,
    RunLog,
    metrics_path,
    read_metrics,
    read_metrics_file,
    resume_metrics,
)
from catena_zero.pipeline.report import write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NESTED = 100_000  # deeper than the interpreter's recursion limit


def _record(of: str = "iteration", at: int = 1, **fields) -> dict:
    """A sound record of kind `of` at iteration `at`, with `fields` replaced."""
    names = {"iteration": "loss/policy", "probe": "probe/side3-komi-standard/greedy/win_rate",
             "gate": "gate/side3-komi-standard/win_rate"}
    record = {"format": METRICS_FORMAT, "format_version": 1, "kind": of, "iteration": at,
              "step": 4 * at, "time": 1764590000.0, "values": {names[of]: 0.5}}
    record.update(fields)
    return record


def _line(record) -> bytes:
    return json.dumps(record).encode() + b"\n"


GOOD = _line(_record(at=1))


def _wrong_fields() -> dict[str, bytes]:
    """A line for each field set to each value of the wrong type or range."""
    wrong = {
        "format": ["catena_zero.other", 1, None, [], {}],
        "format_version": [2, 0, "1", 1.0, True, None, [], {}],
        "kind": ["weird", "", ["iteration"], {"kind": "probe"}, None, 1],
        "iteration": ["abc", None, {}, [], True, 1.5, -1, 2**53 + 1, 10**30],
        "step": ["abc", None, {}, [], False, 2.5, -2, 10**30],
        "time": ["abc", None, {}, [], True],
        "values": ["abc", None, [], 1, True],
    }
    lines = {}
    for field, values in wrong.items():
        for value in values:
            lines[f"{field}={value!r}"[:60]] = _line(_record(**{field: value}))
    for value in ("abc", {}, None, [], True, 1e300, -1e16, 10**400):
        lines[f"value={value!r}"[:60]] = _line(_record(values={"loss/policy": value}))
    lines["value NaN"] = GOOD.replace(b"0.5", b"NaN")
    lines["value Infinity"] = GOOD.replace(b"0.5", b"-Infinity")
    lines["value 1e999"] = GOOD.replace(b"0.5", b"1e999")
    lines["a gate value without its track"] = _line(_record("gate", values={"gate/x": 1.0}))
    lines["a gate value of another kind"] = _line(_record("gate", values={"loss/x": 1.0}))
    lines["a probe value of another kind"] = _line(_record("probe", values={"gate/a/b": 1.0}))
    return lines


DAMAGES: dict[str, bytes] = {
    "0xFF byte": b"\xff\n",
    "0xFF inside a record": GOOD.replace(b"loss/policy", b"loss/\xffpolicy"),
    "a UTF-8 sequence cut short": b'{"format": "\xc3"}\n',
    "NUL bytes": b"\x00" * 16 + b"\n",
    "not JSON": b"garbage\n",
    "an array": b"[]\n",
    "a number": b"7\n",
    "a string": b'"iteration"\n',
    "null": b"null\n",
    "an empty object": b"{}\n",
    "nested arrays": b"[" * NESTED + b"]" * NESTED + b"\n",
    "nested objects": b'{"a":' * NESTED + b"1" + b"}" * NESTED + b"\n",
    "nested values": GOOD.replace(b"0.5", b"[" * NESTED + b"]" * NESTED),
    "an integer of 5000 digits": GOOD.replace(b"0.5", b"1" * 5000),
    "a line cut short": GOOD[:len(GOOD) // 2] + b"\n",
    "a line cut short by one byte": GOOD[:-2] + b"\n",
    "two records on one line": GOOD[:-1] + GOOD,
    **_wrong_fields(),
}


def _write(run_dir: Path, *lines: bytes) -> Path:
    path = metrics_path(run_dir)
    path.write_bytes(b"".join(lines))
    return path


def _damaged_run(run_dir: Path, damage: bytes) -> Path:
    """metrics.jsonl of three lines, the second damaged."""
    return _write(run_dir, GOOD, damage, _line(_record(at=2)))


@pytest.mark.parametrize("name", list(DAMAGES))
def test_the_report_reader_skips_each_damage_and_names_its_line(tmp_path, name) -> None:
    path = _damaged_run(tmp_path, DAMAGES[name])
    said: list[str] = []
    records = read_metrics(tmp_path, log=said.append)
    assert [record["iteration"] for record in records] == [1, 2]
    assert len(said) == 1 and said[0].startswith(f"warning: {path}:2: "), said
    assert "\n" not in said[0] and len(said[0]) < 300


@pytest.mark.parametrize("name", list(DAMAGES))
def test_a_resumed_run_skips_each_damage_keeps_the_file_and_logs_on(tmp_path, name) -> None:
    path = _damaged_run(tmp_path, DAMAGES[name])
    original = path.read_bytes()
    said: list[str] = []
    log = RunLog(tmp_path, 5, tensorboard=False, log=said.append)
    assert len(said) == 1 and said[0].startswith(f"warning: {path}:2: "), said
    assert "kept as metrics.jsonl.unreadable" in said[0]
    assert path.with_name("metrics.jsonl.unreadable").read_bytes() == original
    log.log(6, 24, {"loss/policy": 0.25})
    log.close()
    again: list[str] = []
    assert [record["iteration"] for record in read_metrics(tmp_path, log=again.append)] == [
        1, 2, 6]
    assert again == []


def test_a_sound_file_is_left_byte_for_byte(tmp_path) -> None:
    path = _write(tmp_path, GOOD, _line(_record("gate", 9)))
    before = path.stat().st_mtime_ns, path.read_bytes()
    assert resume_metrics(tmp_path, 5, log=None) == {(9, "side3-komi-standard")}
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before


def test_the_report_draws_what_is_readable_of_every_damage_at_once(tmp_path, capsys) -> None:
    lines = [_line(_record(at=1, values={"loss/policy": 2.0, "loss/value": 1.0})),
             *DAMAGES.values(),
             # sound records a report must also draw: a baseline path in a probe's name, `$`
             # (matplotlib's mathematics) in names, the largest iteration and values
             _line(_record("probe", 2, values={
                 "probe/side3-komi-standard/checkpoint/tmp/a.pt/win_rate": 0.5,
                 "probe/$\\frac$/greedy/win_rate": 0.25, "probe/seconds": 1.0})),
             _line(_record("gate", 2, values={"gate/$\\frac$/win_rate": 0.5,
                                              "gate/$\\frac$/elo": 0.0,
                                              "gate/$\\frac$/accepted": 1.0})),
             _line(_record("probe", 3, values={"probe/\ud800/x\n\x00/win_rate": 0.5,
                                               "probe/" + "x" * 3000 + "/y/win_rate": 0.2})),
             _line(_record(at=2**53, step=2**53,
                           values={"loss/policy": -1e15, "loss/value": 1e15}))]
    path = _write(tmp_path, *lines)
    assert main(["report", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"wrote {tmp_path / 'report.png'}\n"
    error_lines = captured.err.splitlines()
    assert len(error_lines) == 1 and error_lines[0].startswith(f"warning: {path}:2: ")
    assert f"with {len(DAMAGES) - 1} more bad lines" in error_lines[0]
    assert "Traceback" not in captured.err
    assert (tmp_path / "report.png").read_bytes().startswith(PNG_MAGIC)


def _without_hanging(call, seconds: float = 60.0):
    """call() in a thread; fails the test instead of hanging when it blocks."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return thread.is_alive(), outcome


def _release(fifo: Path) -> None:
    """Let a reader blocked on `fifo` go (a writer that opens and closes it)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_non_regular_metrics_file_is_refused_by_the_report(tmp_path, capsys, kind) -> None:
    path = metrics_path(tmp_path)
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    hung, outcome = _without_hanging(lambda: main(["report", str(tmp_path)]))
    if hung:
        _release(path)
    assert not hung, "the report blocked on metrics.jsonl"
    assert outcome == {"value": EXIT_BAD_FILE}
    error = capsys.readouterr().err
    what = "a FIFO" if kind == "fifo" else "a directory"
    assert error == (f"catena-zero report: error: {path}: not a regular file ({what}); "
                     f"not read\n")
    assert not (tmp_path / "report.png").exists()


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_non_regular_metrics_file_is_moved_aside_on_resume(tmp_path, kind) -> None:
    path = metrics_path(tmp_path)
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    said: list[str] = []
    hung, outcome = _without_hanging(
        lambda: RunLog(tmp_path, 3, tensorboard=False, log=said.append))
    if hung:
        _release(path)
    assert not hung, "resuming blocked on metrics.jsonl"
    assert "error" not in outcome
    assert said == [f"warning: {path}: not a regular file "
                    f"({'a FIFO' if kind == 'fifo' else 'a directory'}); not read; moved to "
                    f"metrics.jsonl.unreadable, the run logs anew"]
    aside = path.with_name("metrics.jsonl.unreadable")
    assert aside.is_fifo() if kind == "fifo" else aside.is_dir()
    outcome["value"].log(4, 16, {"loss/policy": 1.0})
    assert [record["iteration"] for record in read_metrics(tmp_path)] == [4]


def test_a_non_regular_file_is_a_metrics_error_for_the_library(tmp_path) -> None:
    os.mkfifo(metrics_path(tmp_path))
    with pytest.raises(MetricsError, match="not a regular file"):
        write_report(tmp_path)


# --- fuzz ----------------------------------------------------------------------------------

@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A sound name is one path segment: a "/" inside it would split the record's key anew.
@given(names=st.lists(st.text(st.characters(blacklist_characters="/"), min_size=1,
                              max_size=12), min_size=1, max_size=3),
       score=st.floats(-1e15, 1e15))
def test_the_report_draws_any_sound_names(names, score, tmp_path_factory) -> None:
    run_dir = tmp_path_factory.mktemp("run")
    values = {f"probe/{name}/{name}/win_rate": score for name in names}
    gates = {f"gate/{name}/{what}": score for name in names for what in ("win_rate", "elo")}
    _write(run_dir, _line(_record("probe", 1, values=values)),
           _line(_record("gate", 1, values=gates)))
    said: list[str] = []
    assert write_report(run_dir, log=said.append).read_bytes().startswith(PNG_MAGIC)
    assert said == []


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(RECORD_FIELDS), value=JSON_VALUES,
       kind=st.sampled_from(["iteration", "probe", "gate"]))
def test_any_value_of_any_field_is_read_or_skipped_never_raised(field, value, kind,
                                                                tmp_path_factory) -> None:
    run_dir = tmp_path_factory.mktemp("run")
    record = _record(kind, **{field: value})
    line = json.dumps(record, allow_nan=True).encode() + b"\n"
    _write(run_dir, GOOD, line)
    said: list[str] = []
    read = read_metrics(run_dir, log=said.append)
    assert len(read) + len(said) == 2 and len(said) <= 1
    resume_metrics(run_dir, 10**6, log=said.append)
    assert read_metrics_file(run_dir).bad_lines == []  # a resumed run's file is sound


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_bytes_damaged_anywhere_are_skipped_and_a_resumed_file_is_sound(data,
                                                                        tmp_path_factory) -> None:
    run_dir = tmp_path_factory.mktemp("run")
    sound = b"".join(_line(_record(kind, iteration))
                     for iteration, kind in enumerate(["iteration", "probe", "gate"] * 3))
    damaged = bytearray(sound)
    for _ in range(data.draw(st.integers(1, 6))):
        where = data.draw(st.integers(0, len(damaged)))
        how = data.draw(st.sampled_from(["insert", "overwrite", "delete"]))
        junk = data.draw(st.binary(min_size=1, max_size=4))
        if how == "insert":
            damaged[where:where] = junk
        elif how == "overwrite":
            damaged[where:where + len(junk)] = junk
        else:
            del damaged[where:where + len(junk)]
    path = _write(run_dir, bytes(damaged))
    said: list[str] = []
    records = read_metrics(run_dir, log=said.append)
    assert len(said) <= 1 and all(line.startswith(f"warning: {path}:") for line in said)
    assert len(records) <= 9
    resume_metrics(run_dir, 10**6, log=said.append)
    again: list[str] = []
    assert read_metrics(run_dir, log=again.append) == records and again == []
