"""What a run records of itself: `<run_dir>/metrics.jsonl` (versioned JSON lines), the same
numbers in TensorBoard, and the PNG report drawn from them. Both runtimes log through
`RunLog` (inline: the loop; Ray: the learner actor).

Each line of metrics.jsonl is one record::

    {"format": "catena_zero.run_metrics", "format_version": 1, "kind": "iteration",
     "iteration": 12, "step": 384, "time": 1764590000.0, "values": {"loss/total": 1.9, ...}}

kinds: `iteration` (the iteration's scalars: self-play rates, losses, ...), `probe` (the
strength probe's win rates, `probe/<track>/<baseline>/win_rate`) and `gate` (one gated track
of one checkpoint: `gate/<track>/win_rate`, `gate/<track>/elo`, `gate/<track>/accepted`).
Lines are appended whole, one write each; a reader skips a last line cut short by a kill.
A resumed run first drops the lines of iterations after its checkpoint (rewriting the file
atomically), as TensorBoard's purge_step does for its events.

Gate results reach the log from the gate records in `<run_dir>/gates/` (written by the
training gate wherever it runs: inline, or in the Ray evaluator actor), read each iteration.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from catena_zero.arena.stats import elo_from_score
from catena_zero.arena.training_gate import read_gate_record
from catena_zero.data.atomic import atomic_write_text

METRICS_FILE = "metrics.jsonl"
METRICS_FORMAT = "catena_zero.run_metrics"
METRICS_FORMAT_VERSION = 1
KINDS = ("iteration", "probe", "gate")
ELO_LIMIT = 800.0  # a gate won or lost 100% is plotted at +-800 Elo, not at infinity


class MetricsError(ValueError):
    """A metrics file that cannot be read (named, with the reason)."""


def metrics_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / METRICS_FILE


def _record(kind: str, iteration: int, step: int, values: dict[str, float]) -> dict[str, Any]:
    return {"format": METRICS_FORMAT, "format_version": METRICS_FORMAT_VERSION, "kind": kind,
            "iteration": int(iteration), "step": int(step), "time": time.time(),
            "values": {name: float(value) for name, value in values.items()
                       if value is not None and math.isfinite(float(value))}}


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """The records of a run's metrics.jsonl, in order ([] when there is none). A last line
    cut short is skipped; any other bad line raises MetricsError naming the file and line."""
    path = metrics_path(run_dir)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    except OSError as error:
        raise MetricsError(f"{path}: cannot be read ({error})") from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            if number == len(lines):
                break  # the write a kill cut short
            raise MetricsError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(record, dict) or record.get("format") != METRICS_FORMAT:
            raise MetricsError(f"{path}:{number}: not a {METRICS_FORMAT} record")
        if record.get("format_version") != METRICS_FORMAT_VERSION:
            raise MetricsError(f"{path}:{number}: format version "
                               f"{record.get('format_version')!r}, this code reads "
                               f"{METRICS_FORMAT_VERSION}")
        if record.get("kind") not in KINDS or not isinstance(record.get("values"), dict):
            raise MetricsError(f"{path}:{number}: kind must be one of {KINDS} with values")
        records.append(record)
    return records


def gate_values(entry: dict[str, Any]) -> dict[str, float]:
    """TensorBoard/metrics numbers of one track's entry in a gate record: win rate (draws as
    half), the Elo it implies (clipped to +-ELO_LIMIT) and whether it was accepted."""
    track = entry["track"]
    values = {f"gate/{track}/accepted": float(bool(entry.get("promoted")))}
    score = entry.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool) and entry.get("games"):
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
                 report_every: int = 0):
        self.run_dir = Path(run_dir)
        self.path = metrics_path(self.run_dir)
        self.report_every = report_every
        self.writer = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.run_dir / "tensorboard"),
                                        purge_step=start_iteration + 1)
        self.gates_seen: set[tuple[int, str]] = set()
        self._truncate(start_iteration)
        self.report_failed = False

    def _truncate(self, start_iteration: int) -> None:
        """Keep the records of iterations up to the checkpoint resumed from (the work after it
        is done again); remember the gates already logged."""
        if not self.path.exists():
            return
        try:
            records = read_metrics(self.run_dir)
        except MetricsError as error:  # keep the file for the user; log beside it anew
            self.path.replace(self.path.with_name(self.path.name + ".unreadable"))
            print(f"warning: {error}; kept as {self.path.name}.unreadable", file=sys.stderr)
            return
        kept = [record for record in records
                if record["iteration"] <= start_iteration or record["kind"] == "gate"]
        self.gates_seen = {(record["iteration"], name.split("/")[1])
                           for record in kept if record["kind"] == "gate"
                           for name in record["values"]}
        if len(kept) != len(records):
            atomic_write_text(self.path, "".join(json.dumps(record, sort_keys=True) + "\n"
                                                 for record in kept))

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
            if record is None or not isinstance(record.get("iteration"), int):
                continue
            for entry in gate_entries(record):
                key = (record["iteration"], entry["track"])
                if key in self.gates_seen:
                    continue
                self.gates_seen.add(key)
                values = gate_values(entry)
                self._append("gate", record["iteration"], int(record.get("step", -1)), values)
                self._scalars(record["iteration"], values)
                logged.append(values)
        return logged

    def write_report(self) -> Path | None:
        """Draw `<run_dir>/report.png`; a failure is said once and does not stop the run."""
        from catena_zero.pipeline.report import write_report

        try:
            return write_report(self.run_dir)
        except Exception as error:  # noqa: BLE001 - a plot must never stop training
            if not self.report_failed:
                self.report_failed = True
                print(f"warning: report not drawn: {type(error).__name__}: {error}",
                      file=sys.stderr)
            return None

    def close(self) -> None:
        self.poll_gates()
        if self.report_every:
            self.write_report()
        if self.writer is not None:
            self.writer.close()
            self.writer = None
