"""metrics.jsonl, gate results in TensorBoard and the PNG report drawn from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catena_zero.arena.training_gate import gate_record_path
from catena_zero.cli.main import main
from catena_zero.pipeline.metrics import (
    METRICS_FORMAT_VERSION,
    MetricsError,
    RunLog,
    gate_values,
    metrics_path,
    read_metrics,
)
from catena_zero.pipeline.report import ReportError, series, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _gate_record(run_dir: Path, iteration: int, entries: list[dict]) -> None:
    path = gate_record_path(run_dir, iteration)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"format": "catena_zero.gate_record", "format_version": 2,
                                "iteration": iteration, "step": 4 * iteration,
                                "tracks": entries, "pending": []}))


def _entry(track: str, score: float | None, promoted: bool, games: int = 40) -> dict:
    return {"track": track, "score": score, "games": games if score is not None else 0,
            "promoted": promoted, "reason": "threshold"}


def _scalars_in_tensorboard(directory: Path) -> dict[str, list[tuple[int, float]]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(directory))
    accumulator.Reload()
    return {tag: [(event.step, event.value) for event in accumulator.Scalars(tag)]
            for tag in accumulator.Tags()["scalars"]}


def test_gate_results_reach_tensorboard_and_metrics(tmp_path) -> None:
    # Gate records were written to gates/ but never reached TensorBoard.
    log = RunLog(tmp_path, 0, tensorboard=True)
    log.log(1, 4, {"loss/policy": 2.0})
    _gate_record(tmp_path, 1, [_entry("side4-komi-standard", 0.75, True),
                               _entry("side6-komi-standard", 0.25, False)])
    log.log(2, 8, {"loss/policy": 1.5})
    log.log(3, 12, {"loss/policy": 1.2})  # the same record is not logged twice
    log.close()
    scalars = _scalars_in_tensorboard(tmp_path / "tensorboard")
    assert scalars["gate/side4-komi-standard/win_rate"] == [(1, 0.75)]
    assert scalars["gate/side4-komi-standard/accepted"] == [(1, 1.0)]
    assert scalars["gate/side6-komi-standard/accepted"] == [(1, 0.0)]
    assert scalars["gate/side4-komi-standard/elo"][0][1] == pytest.approx(190.85, abs=0.01)
    records = read_metrics(tmp_path)
    assert [record["kind"] for record in records] == ["iteration", "iteration", "gate",
                                                      "gate", "iteration"]
    assert all(record["format_version"] == METRICS_FORMAT_VERSION for record in records)


def test_a_gate_won_outright_is_plotted_at_a_finite_elo() -> None:
    values = gate_values(_entry("side3-komi-standard", 1.0, True))
    assert values["gate/side3-komi-standard/elo"] == 800.0
    first = gate_values({"track": "side3-komi-standard", "score": None, "games": 0,
                         "promoted": True})
    assert first == {"gate/side3-komi-standard/accepted": 1.0}  # crowned without a match


def test_a_torn_last_line_and_a_damaged_line_are_skipped_and_named(tmp_path) -> None:
    log = RunLog(tmp_path, 0, tensorboard=False)
    log.log(1, 4, {"loss/value": 0.5, "nan": float("nan")})
    with open(metrics_path(tmp_path), "a", encoding="utf-8") as handle:
        handle.write('{"format": "catena_zero.run_')  # a kill during the write
    said: list[str] = []
    records = read_metrics(tmp_path, log=said.append)
    assert len(records) == 1 and records[0]["values"] == {"loss/value": 0.5}
    assert said == [f"warning: {metrics_path(tmp_path)}:2: cut short (the last line, without "
                    f"its newline); skipped"]
    said.clear()
    metrics_path(tmp_path).write_text('{"format": "catena_zero.run_metrics", '
                                      '"format_version": 99, "kind": "iteration", '
                                      '"values": {}}\n{}\n')
    assert read_metrics(tmp_path, log=said.append) == []
    assert said == [f"warning: {metrics_path(tmp_path)}:1: format version 99, this code "
                    f"reads 1; skipped, with 1 more bad line (2)"]
    metrics_path(tmp_path).unlink()
    metrics_path(tmp_path).mkdir()
    with pytest.raises(MetricsError, match="not a regular file"):  # no lines to read
        read_metrics(tmp_path)


def test_a_resumed_run_drops_the_records_after_its_checkpoint(tmp_path) -> None:
    log = RunLog(tmp_path, 0, tensorboard=False)
    for iteration in (1, 2, 3):
        log.log(iteration, iteration, {"loss/total": float(iteration)})
    log.log_probe(3, 3, {"probe/side3-komi-standard/greedy/win_rate": 0.5})
    _gate_record(tmp_path, 2, [_entry("side3-komi-standard", 0.6, True)])
    log.close()
    resumed = RunLog(tmp_path, 2, tensorboard=False)  # from the iteration-2 checkpoint
    assert resumed.poll_gates() == []  # logged already
    records = read_metrics(tmp_path)
    assert [(record["kind"], record["iteration"]) for record in records] == [
        ("iteration", 1), ("iteration", 2), ("gate", 2)]


def test_the_report_draws_probes_gates_and_losses(tmp_path) -> None:
    log = RunLog(tmp_path, 0, tensorboard=False, report_every=2)
    for iteration in (1, 2):
        log.log_probe(iteration, iteration, {
            "probe/side4-komi-standard/greedy/win_rate": 0.25 * iteration,
            "probe/side4-komi-standard/uct8/win_rate": 0.1 * iteration})
        log.log(iteration, iteration, {"loss/policy": 3.0 - iteration, "loss/value": 1.0,
                                       "loss/score": 0.5, "loss/ownership": 0.7})
    assert (tmp_path / "report.png").read_bytes().startswith(PNG_MAGIC)  # every 2
    _gate_record(tmp_path, 2, [_entry("side4-komi-standard", 0.6, True)])
    log.close()
    records = read_metrics(tmp_path)
    assert series(records, "probe", "probe/side4-komi-standard/greedy") == {
        "probe/side4-komi-standard/greedy/win_rate": ([1, 2], [0.25, 0.5])}
    assert series(records, "iteration", "loss/policy")["loss/policy"] == ([1, 2], [2.0, 1.0])
    other = write_report(tmp_path, tmp_path / "elsewhere.png")
    assert other.read_bytes().startswith(PNG_MAGIC)
    assert not list(tmp_path.glob("*.tmp-*"))  # written atomically


def test_an_empty_run_still_gets_a_report_and_a_missing_one_an_error(tmp_path) -> None:
    assert write_report(tmp_path).read_bytes().startswith(PNG_MAGIC)
    with pytest.raises(ReportError, match="does not exist"):
        write_report(tmp_path / "nope")


def test_the_report_subcommand(tmp_path, capsys) -> None:
    RunLog(tmp_path, 0, tensorboard=False).log(1, 1, {"loss/policy": 1.0})
    assert main(["report", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 'report.png'}\n"
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "run directory" in capsys.readouterr().err
    metrics_path(tmp_path).write_text("garbage\n\n{}\n")  # drawn without its bad lines
    assert main(["report", str(tmp_path)]) == 0
    assert capsys.readouterr().err == (f"warning: {metrics_path(tmp_path)}:1: not a JSON line; "
                                       f"skipped, with 1 more bad line (3)\n")
