"""What a run records of itself: `<run_dir>/metrics.jsonl` (versioned JSON lines), the same
numbers in TensorBoard, and the PNG report drawn from them. Both runtimes log through
`RunLog` (inline: the loop; Ray: the learner actor).

Each line of metrics.jsonl is one record::

    {"format": "catena_zero.run_metrics", "format_version": 1, "kind": "iteration",
     "iteration": 12, "step": 384, "time": 1764590000.0, "values": {"loss/total": 1.9, ...}}

kinds: `iteration` (the iteration's scalars: self-play rates, losses, ...), `probe` (the
strength probe's win rates, `probe/<track>/<baseline>/win_rate`) and `gate` (one gated track
of one checkpoint: `gate/<track>/win_rate`, `gate/<track>/elo`, `gate/<track>/accepted`).
Lines are appended whole, one write each. A resumed run first drops the lines of iterations
after its checkpoint (rewriting the file atomically), as TensorBoard's purge_step does for
its events.

A damaged file stops neither a resumed run nor the report: every line is checked (UTF-8,
JSON, each field's type and range), a bad one is skipped and the first is named in one
warning line with the count of the others, and a resumed run keeps the file as it was
beside it (`metrics.jsonl.unreadable`) before rewriting it with the sound records. A last
line cut short (a kill or a power cut during a write) is damage like any other, and so is a
line longer than MAX_LINE_BYTES: lines are read with that bound, so however long one is,
reading it takes no more memory than that (the rest of it is passed over). Only a file that
cannot be read at all is refused (MetricsError): anything but a regular file (a FIFO would
block its reader) is never opened for reading, and a resumed run moves it aside.

Gate results reach the log from the gate records in `<run_dir>/gates/` (written by the
training gate wherever it runs: inline, or in the Ray evaluator actor), read each iteration.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from catena_zero.arena.stats import elo_from_score
from catena_zero.arena.training_gate import read_gate_record
from catena_zero.data.atomic import (
    NotRegularFileError,
    atomic_open,
    atomic_write_text,
    open_regular_file,
)
from catena_zero.pipeline.report_figure import draw_report, run_directory

METRICS_FILE = "metrics.jsonl"
METRICS_FORMAT = "catena_zero.run_metrics"
METRICS_FORMAT_VERSION = 1
KINDS = ("iteration", "probe", "gate")
RECORD_FIELDS = ("format", "format_version", "kind", "iteration", "step", "time", "values")
ELO_LIMIT = 800.0  # a gate won or lost 100% is plotted at +-800 Elo, not at infinity
# The longest line read: a record of a run with many tracks is a few kilobytes, so a longer
# line is damage, and reading no more of it than this bounds a reader's memory.
MAX_LINE_BYTES = 1 << 20


class MetricsError(ValueError):
    """A metrics file that cannot be read at all (named, with the reason): not a regular
    file, or not readable. A bad line is skipped instead (`MetricsRead.bad_lines`)."""


# The largest iteration or step a record may hold: beyond it the plot's float axis no longer
# tells neighbouring integers apart, and no run comes near it.
MAX_COUNT = 2**53
# The largest magnitude of a value: no measurement comes near it, and the report's axes
# break on a range near the float limit (their width overflows).
MAX_VALUE = 1e15


def metrics_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / METRICS_FILE


def _record(kind: str, iteration: int, step: int, values: dict[str, float]) -> dict[str, Any]:
    """A record of `values`, without those a reader would refuse (not finite, too large)."""
    return {"format": METRICS_FORMAT, "format_version": METRICS_FORMAT_VERSION, "kind": kind,
            "iteration": int(iteration), "step": int(step), "time": time.time(),
            "values": {name: float(value) for name, value in values.items()
                       if value is not None and _is_finite_number(float(value), MAX_VALUE)}}


def warn(message: str) -> None:
    """A warning line on stderr (the default `log` of the readers here)."""
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class MetricsRead:
    """A metrics file as read: the records that are sound (in order, with the record's own
    fields only), the lines skipped as (line number, problem), and whether its last line was
    read whole with its newline (true of an empty file)."""

    path: Path
    records: list[dict[str, Any]]
    bad_lines: list[tuple[int, str]]
    ends_with_newline: bool

    def warning(self) -> str | None:
        """One line naming the file, the first bad line and its problem, and how many more
        were skipped; None when every line was sound."""
        if not self.bad_lines:
            return None
        number, problem = self.bad_lines[0]
        line = f"warning: {self.path}:{number}: {problem}; skipped"
        more = [str(number) for number, _ in self.bad_lines[1:]]
        if more:
            shown = ", ".join(more[:5]) + (", ..." if len(more) > 5 else "")
            line += f", with {len(more)} more bad line{'s' if len(more) > 1 else ''} ({shown})"
        return line


def read_metrics_file(run_dir: str | Path) -> MetricsRead | None:
    """The run's metrics.jsonl, line by line (None when there is none). A line that is not
    UTF-8, not JSON (nested too deeply, say), not a sound record, longer than MAX_LINE_BYTES,
    or a last line cut short is listed in `bad_lines` and skipped; MetricsError only when
    the file itself cannot be read (not a regular file, no permission). Anything but a
    regular file is refused before it is opened for reading: a FIFO with no writer would
    block the reader for ever (`data.atomic.open_regular_file`)."""
    path = metrics_path(run_dir)
    try:
        with open_regular_file(path) as handle:
            return _read_lines(path, handle)
    except FileNotFoundError:
        return None
    except NotRegularFileError as error:
        raise MetricsError(f"{path}: not a regular file ({error.kind}); not read") from None
    except OSError as error:
        raise MetricsError(f"{path}: cannot be read ({error.strerror or error})") from None


def _read_lines(path: Path, handle: BinaryIO) -> MetricsRead:
    records, bad_lines, ends_with_newline = [], [], True
    for number, raw in enumerate(_bounded_lines(handle), start=1):
        ends_with_newline = raw is not None and raw.endswith(b"\n")
        if raw is None:
            bad_lines.append((number, f"longer than {MAX_LINE_BYTES} bytes"))
            continue
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
            # No newline after it: the last write, cut short by a kill or a power cut.
            cut = not raw.endswith(b"\n")
            bad_lines.append((number, "cut short (the last line, without its newline)" if cut
                              else _undecodable(error)))
            continue
        problem = record_problem(record)
        if problem is not None:
            bad_lines.append((number, problem))
            continue
        records.append({name: record[name] for name in RECORD_FIELDS})
    return MetricsRead(path, records, bad_lines, ends_with_newline)


def _bounded_lines(handle: BinaryIO) -> Iterator[bytes | None]:
    """The lines of `handle` with their newlines; None for a line longer than
    MAX_LINE_BYTES, of which no more than that is held at once."""
    while True:
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):  # pass over the rest of the line
            raw = handle.readline(MAX_LINE_BYTES)
        yield None


def _undecodable(error: Exception) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text (byte {error.start} of the line)"
    if isinstance(error, RecursionError):
        return "not a JSON line (nested too deeply)"
    return "not a JSON line"


def read_metrics(run_dir: str | Path, log: Callable[[str], None] | None = warn
                 ) -> list[dict[str, Any]]:
    """The sound records of a run's metrics.jsonl, in order ([] when there is none). Bad
    lines (a last line cut short, a line longer than MAX_LINE_BYTES among them) are skipped,
    and said in one line through `log`. MetricsError when the file cannot be read at all."""
    read = read_metrics_file(run_dir)
    if read is None:
        return []
    if log is not None and read.warning() is not None:
        log(read.warning())
    return read.records


def _is_integer(value: Any, low: int, high: int = MAX_COUNT) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _is_finite_number(value: Any, limit: float = math.inf) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value)) and abs(float(value)) <= limit
    except OverflowError:  # an integer too large for a float
        return False


def _shown(value: Any) -> str:
    """A short description of a bad value for a message (no repr of a container, which may
    be nested deeply or be huge)."""
    if isinstance(value, dict | list):
        return f"an {'object' if isinstance(value, dict) else 'array'}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def record_problem(record: Any) -> str | None:
    """What is wrong with a decoded metrics line, None when it is a sound record: the format
    and its version, the kind, an iteration and a step that are integers in range, a finite
    time, and values mapping names to numbers within +-MAX_VALUE (a gate's names
    `gate/<track>/...`, a probe's `probe/...`)."""
    if not isinstance(record, dict):
        return f"not a {METRICS_FORMAT} record ({_shown(record)})"
    if record.get("format") != METRICS_FORMAT:
        return f"not a {METRICS_FORMAT} record (format {_shown(record.get('format'))})"
    version = record.get("format_version")
    if not _is_integer(version, METRICS_FORMAT_VERSION, METRICS_FORMAT_VERSION):
        return f"format version {_shown(version)}, this code reads {METRICS_FORMAT_VERSION}"
    kind = record.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        return f"kind {_shown(kind)}, expected one of {', '.join(KINDS)}"
    if not _is_integer(record.get("iteration"), 0):
        return f"iteration {_shown(record.get('iteration'))}, expected an integer >= 0"
    if not _is_integer(record.get("step"), -1):
        return f"step {_shown(record.get('step'))}, expected an integer >= -1"
    if not _is_finite_number(record.get("time")):
        return f"time {_shown(record.get('time'))}, expected a finite number"
    values = record.get("values")
    if not isinstance(values, dict):
        return f"values {_shown(values)}, expected an object of numbers"
    for name, value in values.items():
        if not _is_finite_number(value, MAX_VALUE):
            return (f"value {_shown(name)} is {_shown(value)}, expected a number within "
                    f"+-{MAX_VALUE:g}")
        if kind != "iteration" and not _fits_kind(name, kind):
            return f"value name {_shown(name)} does not fit a {kind} record"
    return None


def _fits_kind(name: str, kind: str) -> bool:
    """A gate's value names are `gate/<track>/<what>`; a probe's start with `probe/`."""
    parts = name.split("/")
    if kind == "gate":
        return len(parts) >= 3 and parts[0] == "gate" and bool(parts[1])
    return parts[0] == "probe"


def resume_metrics(run_dir: str | Path, start_iteration: int,
                   log: Callable[[str], None] | None = warn) -> set[tuple[int, str]]:
    """Make the run's metrics.jsonl fit a run resumed at `start_iteration`: keep the sound
    records of iterations up to it and every gate's (the work after it is done again, the
    gates are not); returns the (iteration, track) of the gates kept, logged already.

    Bad lines (a last line cut short among them) are dropped with one warning line through
    `log`, the file as it was kept beside it as metrics.jsonl.unreadable (copied a piece at
    a time, so a huge line is never held whole).
    A file that cannot be read at all (a FIFO, a directory, no permission) is moved aside
    to that name unopened and the run logs anew. The file is rewritten (atomically) only
    when something in it is dropped or its last line lacks its newline."""
    path = metrics_path(run_dir)
    aside = path.with_name(path.name + ".unreadable")
    try:
        read = read_metrics_file(run_dir)
    except MetricsError as error:  # keep it for the user; log beside it anew
        path.replace(aside)
        _say(log, f"warning: {error}; moved to {aside.name}, the run logs anew")
        return set()
    if read is None:
        return set()
    kept = [record for record in read.records
            if record["iteration"] <= start_iteration or record["kind"] == "gate"]
    if read.bad_lines:
        try:
            _keep_aside(path, aside)
            kept_as = f"the file as it was is kept as {aside.name}"
        except OSError as error:  # the bad lines are named all the same
            kept_as = f"the file as it was could not be kept as {aside.name} ({error})"
        _say(log, f"{read.warning()}; {kept_as}")
    # A last line without its newline would join the next one appended.
    if read.bad_lines or len(kept) != len(read.records) or not read.ends_with_newline:
        atomic_write_text(path, "".join(json.dumps(record, sort_keys=True) + "\n"
                                        for record in kept))
    return {(record["iteration"], name.split("/")[1])
            for record in kept if record["kind"] == "gate" for name in record["values"]}


def _keep_aside(path: Path, aside: Path) -> None:
    """Copy `path` to `aside` (atomically), a piece at a time: a line of any length is kept
    without being held whole."""
    with open_regular_file(path) as source, atomic_open(aside) as target:
        shutil.copyfileobj(source, target, MAX_LINE_BYTES)


def _say(log: Callable[[str], None] | None, line: str) -> None:
    if log is not None:
        log(line)


def gate_values(entry: dict[str, Any]) -> dict[str, float]:
    """TensorBoard/metrics numbers of one track's entry in a gate record: win rate (draws as
    half), the Elo it implies (clipped to +-ELO_LIMIT) and whether it was accepted."""
    track = entry["track"]
    values = {f"gate/{track}/accepted": float(bool(entry.get("promoted")))}
    score = entry.get("score")
    if _is_finite_number(score) and entry.get("games"):
        values[f"gate/{track}/win_rate"] = float(score)
        elo = float(elo_from_score(min(max(float(score), 0.0), 1.0)))
        values[f"gate/{track}/elo"] = max(-ELO_LIMIT, min(ELO_LIMIT, elo))
    return values


def gate_entries(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-track entries of a gate record (format 1: the record itself)."""
    entries = record.get("tracks")
    if isinstance(entries, list):
        return [entry for entry in entries
                if isinstance(entry, dict) and isinstance(entry.get("track"), str)]
    return [record] if isinstance(record.get("track"), str) else []


class RunLog:
    """TensorBoard scalars, metrics.jsonl and the report of one run; TensorBoard optional.

    log(iteration, step, scalars) after each iteration; log_probe(...) after a probe; gate
    records that appeared in `<run_dir>/gates/` since the last call are logged by both and
    by close(), which also draws the report a last time."""

    def __init__(self, run_dir: str | Path, start_iteration: int, tensorboard: bool = True,
                 report_every: int = 0, log: Callable[[str], None] | None = warn):
        self.run_dir = Path(run_dir)
        self.path = metrics_path(self.run_dir)
        self.report_every = report_every
        self.warning_log = log  # a damaged metrics file, a report not drawn
        self.writer = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.run_dir / "tensorboard"),
                                        purge_step=start_iteration + 1)
        self.gates_seen = resume_metrics(self.run_dir, start_iteration, log)
        self.report_failed = False
        self.said: set[str] = set()  # the report's reading warnings, each said once

    def _append(self, kind: str, iteration: int, step: int, values: dict[str, float]) -> None:
        line = json.dumps(_record(kind, iteration, step, values), sort_keys=True) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)  # one write of a whole line

    def _scalars(self, iteration: int, values: dict[str, float]) -> None:
        if self.writer is None:
            return
        for name, value in values.items():
            if value is not None and math.isfinite(value):
                self.writer.add_scalar(name, value, iteration)
        self.writer.flush()

    def log(self, iteration: int, step: int, scalars: dict[str, float]) -> None:
        """One iteration's scalars (TensorBoard and metrics.jsonl), new gate results, and the
        report every `report_every` iterations."""
        self._append("iteration", iteration, step, scalars)
        self._scalars(iteration, scalars)
        self.poll_gates()
        if self.report_every and iteration % self.report_every == 0:
            self.write_report()

    def log_probe(self, iteration: int, step: int, scalars: dict[str, float]) -> None:
        self._append("probe", iteration, step, scalars)
        self._scalars(iteration, scalars)

    def poll_gates(self) -> list[dict[str, float]]:
        """Log the tracks of gate records not logged yet; returns their values."""
        directory = self.run_dir / "gates"
        if not directory.is_dir():
            return []
        logged = []
        for path in sorted(directory.glob("gate-iter*.json")):
            record = read_gate_record(path)
            # A gate record is a file like any other: fields of the wrong type are passed
            # over here rather than stop the run (or be logged where the reader skips them).
            if record is None or not _is_integer(record.get("iteration"), 0):
                continue
            step = record.get("step")
            step = step if _is_integer(step, -1) else -1
            for entry in gate_entries(record):
                key = (record["iteration"], entry["track"])
                if key in self.gates_seen or not entry["track"] or "/" in entry["track"]:
                    continue
                self.gates_seen.add(key)
                values = gate_values(entry)
                self._append("gate", record["iteration"], step, values)
                self._scalars(record["iteration"], values)
                logged.append(values)
        return logged

    def write_report(self) -> Path | None:
        """Draw `<run_dir>/report.png`; a failure is said once and does not stop the run."""
        try:
            run_dir = run_directory(self.run_dir)
            return draw_report(run_dir, read_metrics(run_dir, log=self._warn_once))
        except Exception as error:  # noqa: BLE001 - a plot must never stop training
            if not self.report_failed:
                self.report_failed = True
                _say(self.warning_log,
                     f"warning: report not drawn: {type(error).__name__}: {error}")
            return None

    def _warn_once(self, line: str) -> None:
        """A warning of the report's reading, said once however often it is redrawn."""
        if line not in self.said:
            self.said.add(line)
            _say(self.warning_log, line)

    def close(self) -> None:
        self.poll_gates()
        if self.report_every:
            self.write_report()
        if self.writer is not None:
            self.writer.close()
            self.writer = None
