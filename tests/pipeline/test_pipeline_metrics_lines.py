"""How metrics.jsonl is read line by line: a line longer than MAX_LINE_BYTES is never read
whole (the memory a reader takes stays bounded however long it is) and is skipped like any
damage, and a last line cut short (a kill or a power cut during a write) is named in the
warning and kept in metrics.jsonl.unreadable, not dropped without a word."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from catena_zero.cli.main import main
from catena_zero.pipeline.metrics import (
    MAX_LINE_BYTES,
    METRICS_FORMAT,
    RunLog,
    metrics_path,
    read_metrics,
    resume_metrics,
)

HUGE = 24 * MAX_LINE_BYTES  # 24 MB: far past the bound, quick to write
MEMORY_BOUND = 6 * MAX_LINE_BYTES  # what reading may take at its peak, whatever the line


def _line(iteration: int, **values) -> bytes:
    record = {"format": METRICS_FORMAT, "format_version": 1, "kind": "iteration",
              "iteration": iteration, "step": 4 * iteration, "time": 1764590000.0,
              "values": values or {"loss/policy": 0.5}}
    return json.dumps(record, sort_keys=True).encode() + b"\n"


def _write(run_dir: Path, *lines: bytes) -> Path:
    path = metrics_path(run_dir)
    path.write_bytes(b"".join(lines))
    return path


def _peak_memory(call) -> tuple[object, int]:
    """call()'s result and the peak of memory Python allocated while it ran."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _over_long(size: int = HUGE) -> bytes:
    """A record whose one value name is `size` bytes long: sound JSON, just too long."""
    return _line(7, **{"loss/" + "x" * size: 1.0})


def test_an_over_long_line_is_skipped_and_named_by_the_report_reader(tmp_path) -> None:
    path = _write(tmp_path, _line(1), _over_long(2 * MAX_LINE_BYTES), _line(2))
    said: list[str] = []
    records = read_metrics(tmp_path, log=said.append)
    assert [record["iteration"] for record in records] == [1, 2]
    assert said == [f"warning: {path}:2: longer than {MAX_LINE_BYTES} bytes; skipped"]


def test_a_line_of_exactly_the_bound_is_read(tmp_path) -> None:
    line = _line(3, **{"loss/x": 1.0})
    padded = line[:-2] + b" " * (MAX_LINE_BYTES - len(line)) + b"}\n"
    assert len(padded) == MAX_LINE_BYTES
    _write(tmp_path, padded, _line(4))
    said: list[str] = []
    assert [record["iteration"] for record in read_metrics(tmp_path, log=said.append)] == [3, 4]
    assert said == []


def test_reading_a_huge_line_takes_bounded_memory(tmp_path, capsys) -> None:
    path = _write(tmp_path, _line(1), _over_long(), _line(2))
    records, peak = _peak_memory(lambda: read_metrics(tmp_path, log=None))
    assert [record["iteration"] for record in records] == [1, 2]
    assert peak < MEMORY_BOUND, f"reading took {peak} bytes at its peak"
    code, peak = _peak_memory(lambda: main(["report", str(tmp_path)]))
    assert code == 0
    error = capsys.readouterr().err
    assert error == f"warning: {path}:2: longer than {MAX_LINE_BYTES} bytes; skipped\n"


def test_a_resumed_run_sets_a_huge_line_aside_with_bounded_memory(tmp_path) -> None:
    path = _write(tmp_path, _line(1), _over_long(), _line(2), _line(9))
    original_size = path.stat().st_size
    said: list[str] = []
    gates, peak = _peak_memory(lambda: resume_metrics(tmp_path, 5, log=said.append))
    assert gates == set() and peak < MEMORY_BOUND, f"resuming took {peak} bytes at its peak"
    assert said == [f"warning: {path}:2: longer than {MAX_LINE_BYTES} bytes; skipped; the "
                    f"file as it was is kept as metrics.jsonl.unreadable"]
    aside = path.with_name("metrics.jsonl.unreadable")
    assert aside.stat().st_size == original_size
    with aside.open("rb") as kept:
        assert kept.readline() == _line(1) and kept.read(12) == _over_long(8)[:12]
    assert path.read_bytes() == _line(1) + _line(2)


def test_an_over_long_last_line_without_its_newline_is_skipped(tmp_path) -> None:
    path = _write(tmp_path, _line(1), _over_long(2 * MAX_LINE_BYTES)[:-1])
    said: list[str] = []
    assert [record["iteration"] for record in read_metrics(tmp_path, log=said.append)] == [1]
    assert said == [f"warning: {path}:2: longer than {MAX_LINE_BYTES} bytes; skipped"]


def test_a_cut_last_line_is_named_and_kept_on_resume(tmp_path) -> None:
    # A power cut during the last write: the run says so, keeps the text and logs on.
    path = _write(tmp_path, _line(1), _line(2)[:20])
    original = path.read_bytes()
    said: list[str] = []
    log = RunLog(tmp_path, 5, tensorboard=False, log=said.append)
    assert said == [f"warning: {path}:2: cut short (the last line, without its newline); "
                    f"skipped; the file as it was is kept as metrics.jsonl.unreadable"]
    assert path.with_name("metrics.jsonl.unreadable").read_bytes() == original
    log.log(2, 8, {"loss/policy": 0.25})
    log.close()
    again: list[str] = []
    assert [record["iteration"] for record in read_metrics(tmp_path, log=again.append)] == [
        1, 2]
    assert again == []


def test_the_report_reader_names_a_cut_last_line(tmp_path) -> None:
    path = _write(tmp_path, _line(1), _line(2)[:-10])
    said: list[str] = []
    assert [record["iteration"] for record in read_metrics(tmp_path, log=said.append)] == [1]
    assert said == [f"warning: {path}:2: cut short (the last line, without its newline); "
                    f"skipped"]


def test_a_sound_last_line_without_its_newline_is_kept_and_ended(tmp_path) -> None:
    path = _write(tmp_path, _line(1), _line(2)[:-1])
    said: list[str] = []
    RunLog(tmp_path, 5, tensorboard=False, log=said.append).close()
    assert said == [] and not path.with_name("metrics.jsonl.unreadable").exists()
    assert path.read_bytes() == _line(1) + _line(2)
