"""The training gate: copies that never pass for another run's candidate, and gates that happen
exactly once, with no orphaned copies, when the run is killed during one."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from catena_zero.arena import gating, training_gate
from catena_zero.arena.config import GateConfig, TrainingGateConfig
from catena_zero.arena.registry import ChampionRegistry, Track
from catena_zero.arena.training_gate import (
    PENDING_SUFFIX,
    PendingGate,
    TrainingGate,
    gate_record_path,
    read_gate_record,
)
from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.pipeline.inline import train_loop

REPO = Path(__file__).resolve().parents[2]
torch.set_num_threads(1)


class Crash(Exception):
    """Stands in for the process dying in the middle of a gate match."""


def _loop_config(run_dir: Path, *overrides: str):
    config = build_config(compose("train", ["preset=tiny", "runtime=inline", "tensorboard=false",
                                            f"run_dir={run_dir}", *overrides]))
    return dataclasses.replace(config, loop=dataclasses.replace(config.loop,
                                                                run_dir=str(run_dir)))


def _gate(config, registry: Path, every: int = 1, games: int = 2, log=None) -> TrainingGate:
    settings = TrainingGateConfig(every_iterations=every, opening_plies=0,
                                  gate=GateConfig(num_games=games, registry=str(registry)))
    return gating.make_training_gate(config.rules, settings, search_config=config.search,
                                     device="cpu", seed=config.loop.seed, log=log)


def _store(registry: Path, config) -> Path:
    return registry.parent / "champions" / Track.from_rules(config.rules).key


def _records(run_dir: Path) -> list[dict]:
    return [read_gate_record(path) for path in sorted((run_dir / "gates").glob("*.json"))]


def _assert_no_orphans(registry: Path, config) -> None:
    """Every copy in the store is a registry entry's checkpoint; no marker is left."""
    track = Track.from_rules(config.rules)
    registry_file = ChampionRegistry(registry)
    named = {Path(entry.checkpoint).name for entry in registry_file.history(track)}
    store = _store(registry, config)
    assert sorted(path.name for path in store.iterdir()) == sorted(named)


def test_a_rerun_of_a_run_directory_name_gates_its_own_checkpoint(tmp_path: Path) -> None:
    registry = tmp_path / "R" / "champions.json"
    run_dir = tmp_path / "D"
    config = _loop_config(run_dir, "iterations=1")
    train_loop(config, on_checkpoint=_gate(config, registry))
    first = ChampionRegistry(registry).champion(Track.from_rules(config.rules))
    shutil.rmtree(run_dir)
    # The same directory name and checkpoint name, other weights: a candidate, not the champion.
    rerun = _loop_config(run_dir, "iterations=1", "seed=1")
    results = []
    gate = _gate(rerun, registry)
    train_loop(rerun, on_checkpoint=lambda event: results.append(gate(event)))
    (result,) = results
    assert result.champion == first.checkpoint and result.candidate != first.checkpoint
    assert result.match is not None and result.match.num_games == 2
    assert Path(result.candidate).name.startswith("D-checkpoint-step000000004-iter000001-")
    assert Path(first.checkpoint).is_file()  # the old champion's weights are kept
    (record,) = _records(run_dir)
    assert record["candidate"] == result.candidate and record["promoted"] == result.promoted
    _assert_no_orphans(registry, config)


def test_a_gate_interrupted_by_a_crash_is_played_once_on_resume(tmp_path: Path,
                                                                monkeypatch) -> None:
    registry = tmp_path / "champions.json"
    run_dir = tmp_path / "run"
    config = _loop_config(run_dir, "iterations=2")
    real_play_match = gating.play_match

    def crash(*args, **kwargs):
        raise Crash("killed")

    monkeypatch.setattr(gating, "play_match", crash)
    with pytest.raises(Crash):
        train_loop(config, on_checkpoint=_gate(config, registry))
    # Iteration 1 crowned the first champion; the match of iteration 2 never finished.
    (marker,) = _store(registry, config).glob("*" + PENDING_SUFFIX)
    pending = PendingGate.from_file(marker)
    assert pending.iteration == 2 and Path(pending.candidate).is_file()
    assert [record["iteration"] for record in _records(run_dir)] == [1]

    monkeypatch.setattr(gating, "play_match", real_play_match)
    lines: list[str] = []
    resumed = _loop_config(run_dir, "iterations=2", "resume=true")
    summary = train_loop(resumed, on_checkpoint=_gate(resumed, registry, log=lines.append))
    assert summary["counters"]["iteration"] == 2  # nothing left to train: only the gate
    records = _records(run_dir)
    assert [record["iteration"] for record in records] == [1, 2]
    assert records[1]["candidate"] == pending.candidate and records[1]["games"] == 2
    assert any("playing the gate of iteration 2 again" in line for line in lines)
    _assert_no_orphans(registry, config)
    # A second resume finds nothing to do: the gate of iteration 2 happened exactly once.
    again = _gate(resumed, registry)
    assert again.recover(run_dir) == []
    assert _records(run_dir) == records


def test_recovery_records_a_promotion_made_just_before_the_crash(tmp_path: Path,
                                                                 monkeypatch) -> None:
    registry = tmp_path / "champions.json"
    run_dir = tmp_path / "run"
    config = _loop_config(run_dir, "iterations=1")
    gate = _gate(config, registry)

    def crash_before_the_record(pending, record):
        raise Crash("killed after the promotion")

    monkeypatch.setattr(gate, "_finish", crash_before_the_record)
    with pytest.raises(Crash):
        train_loop(config, on_checkpoint=gate)
    champion = ChampionRegistry(registry).champion(Track.from_rules(config.rules))
    assert champion.reason == "first" and not _records(run_dir)
    results = _gate(config, registry).recover(run_dir)
    assert [(result.promoted, result.reason) for result in results] == [(True, "first")]
    (record,) = _records(run_dir)
    assert record["candidate"] == champion.checkpoint and record["promoted"]
    _assert_no_orphans(registry, config)
    assert len(ChampionRegistry(registry).history(Track.from_rules(config.rules))) == 1


def test_orphans_go_and_other_runs_pending_copies_stay(tmp_path: Path) -> None:
    registry = tmp_path / "champions.json"
    config = _loop_config(tmp_path / "run", "iterations=1")
    gate = _gate(config, registry)
    store = gate.store
    store.mkdir(parents=True)
    orphan = store / "old-checkpoint-step000000004-iter000001.pt"
    orphan.write_bytes(b"a copy left by a killed gate")
    theirs = PendingGate(str(store / "other-checkpoint-x.pt"), "elsewhere.pt",
                         str(tmp_path / "other"), 10, 40, None)
    Path(theirs.candidate).write_bytes(b"another run's candidate, being played")
    theirs.marker.write_text(theirs.to_json())
    stale = store / "c.pt.tmp-123"
    stale.write_bytes(b"half a copy")
    os.utime(stale, (time.time() - 2 * training_gate.STALE_TEMP_SECONDS,) * 2)
    fresh = store / "d.pt.tmp-456"
    fresh.write_bytes(b"a copy being written")
    assert gate.recover(tmp_path / "run") == []
    assert sorted(path.name for path in store.iterdir()) == sorted(
        [Path(theirs.candidate).name, theirs.marker.name, fresh.name])


def test_a_checkpoint_is_prepared_once(tmp_path: Path) -> None:
    registry = tmp_path / "champions.json"
    run_dir = tmp_path / "run"
    config = _loop_config(run_dir, "iterations=2")
    events = []
    train_loop(config, on_checkpoint=events.append)
    gate = _gate(config, registry, every=2)
    assert gate.prepare(events[0]) is None  # iteration 1: not a gated iteration
    pending = gate.prepare(events[1])
    assert pending is not None and pending.marker.is_file()
    assert gate.prepare(events[1]) is None  # already due
    result = gate.gate(pending)
    assert result.reason == "first" and not pending.marker.exists()
    assert gate.prepare(events[1]) is None  # already gated
    assert gate(events[1]) is None
    assert [record["iteration"] for record in _records(run_dir)] == [2]
    assert json.loads(gate_record_path(run_dir, 2).read_text())["summary"] == result.summary()


@pytest.mark.slow  # a subprocess start plus tiny training and gating: ~20 s on 2 loaded cores
def test_a_run_killed_during_a_gate_plays_it_once_on_resume(tmp_path: Path) -> None:
    registry = tmp_path / "champions.json"
    run_dir = tmp_path / "run"
    gate_options = ["gating.every_iterations=1", f"gating.gate.registry={registry}",
                    "gating.opening_plies=0"]
    command = [sys.executable, "-m", "catena_zero.cli.main", "train", "preset=tiny",
               "runtime=inline", "iterations=2", f"run_dir={run_dir}", "tensorboard=false",
               "gating.gate.num_games=100000", *gate_options]
    config = _loop_config(run_dir)
    store = _store(registry, config)
    process = subprocess.Popen(command, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(REPO)),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not any(PendingGate.from_file(marker).iteration == 2
                      for marker in store.glob("*" + PENDING_SUFFIX)):
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "no gate of iteration 2 within 120 s"
            time.sleep(0.1)
        time.sleep(1.0)  # well into the match
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stderr.close()
    assert [record["iteration"] for record in _records(run_dir)] == [1]
    from catena_zero.cli.main import main

    assert main(["train", "preset=tiny", "runtime=inline", "iterations=2", f"run_dir={run_dir}",
                 "tensorboard=false", "resume=true", "gating.gate.num_games=2",
                 *gate_options]) == 0
    records = _records(run_dir)
    assert [record["iteration"] for record in records] == [1, 2]
    assert records[1]["games"] == 2
    _assert_no_orphans(registry, config)
