"""Damaged files through the CLI: a checkpoint, a champion registry or a run's checkpoints are
refused in one line naming the file and the problem, exit status 1, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from catena_zero.cli.main import EXIT_BAD_FILE, main
from tests.arena.test_arena_cli import _checkpoint

REPO = Path(__file__).resolve().parents[2]
TRACK = "side3-komi-standard"


def _one_error_line(capsys, *named: str) -> str:
    error = capsys.readouterr().err
    lines = [line for line in error.splitlines() if line.strip()]
    assert len(lines) == 1, error
    assert "Traceback" not in error and "config error" not in lines[0]
    for text in named:
        assert text in lines[0], lines[0]
    return lines[0]


def _damaged(path: Path, how: str) -> Path:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif how == "flipped":
        damaged = bytearray(data)
        damaged[len(data) // 3] ^= 0x10
        path.write_bytes(bytes(damaged))
    else:
        path.write_bytes(b"")
    return path


@pytest.mark.parametrize(("how", "problem"), [("truncated", "truncated (zip archive"),
                                              ("flipped", "corrupt (SHA-256 mismatch"),
                                              ("empty", "empty file")])
def test_arena_with_a_damaged_checkpoint_agent(tmp_path, capsys, how, problem) -> None:
    bad = _damaged(_checkpoint(tmp_path, 1), how)
    assert main(["arena", "preset=tiny", f"arena.agent_a=checkpoint:{bad}",
                 "arena.num_games=2"]) == EXIT_BAD_FILE
    _one_error_line(capsys, "catena-zero arena: error: checkpoint", str(bad), problem)


def test_arena_with_a_missing_checkpoint_or_no_champion(tmp_path, capsys) -> None:
    assert main(["arena", "preset=tiny", f"arena.agent_a=checkpoint:{tmp_path / 'gone.pt'}",
                 "arena.num_games=2"]) == EXIT_BAD_FILE
    _one_error_line(capsys, "gone.pt: does not exist")
    assert main(["arena", "preset=tiny", "arena.agent_a=champion", "arena.num_games=2",
                 f"arena.gate.registry={tmp_path / 'none.json'}"]) == 2
    assert "no champion for track" in capsys.readouterr().err


REGISTRIES = {
    "truncated JSON": ('{"format": "catena_zero.champion_registry", "form', "not valid JSON"),
    "not JSON": ("champions", "not valid JSON"),
    "top level": ("[]", "top level is list"),
    "version": ('{"format": "catena_zero.champion_registry", "format_version": 3, '
                '"tracks": {}}', "format_version is 3"),
    "checkpoint 7": (json.dumps({"format": "catena_zero.champion_registry",
                                 "format_version": 1, "tracks": {TRACK: {
                                     "champion": {"checkpoint": 7}, "history": []}}}),
                     "field 'checkpoint'"),
    "elo x": (json.dumps({"format": "catena_zero.champion_registry", "format_version": 1,
                          "tracks": {TRACK: {"champion": None, "history": [
                              {"checkpoint": "a.pt", "score": "x"}]}}}), "field 'score'"),
    "history": (json.dumps({"format": "catena_zero.champion_registry", "format_version": 1,
                            "tracks": {TRACK: {"champion": None, "history": 5}}}),
                "'history' is int"),
}


@pytest.mark.parametrize("case", list(REGISTRIES))
def test_gate_and_export_with_a_corrupt_registry(tmp_path, capsys, case) -> None:
    content, problem = REGISTRIES[case]
    registry = tmp_path / "champions.json"
    registry.write_text(content)
    candidate = _checkpoint(tmp_path, 2)
    assert main(["arena", "preset=tiny", "arena=gate", f"arena.candidate=checkpoint:{candidate}",
                 f"arena.gate.registry={registry}", "arena.gate.num_games=2"]) == EXIT_BAD_FILE
    _one_error_line(capsys, "catena-zero arena: error:", str(registry), problem)
    assert main(["export", "champion=true", "side=3", f"registry={registry}",
                 f"output={tmp_path / 'model.pt'}"]) == EXIT_BAD_FILE
    _one_error_line(capsys, "catena-zero export: error:", str(registry), problem)
    assert registry.read_text() == content  # never rewritten
    assert not (tmp_path / "model.pt").exists()


def test_train_resume_skips_damaged_checkpoints_and_refuses_when_none_is_intact(
        tmp_path, capsys) -> None:
    run_dir = tmp_path / "run"
    arguments = ["train", "preset=tiny", "runtime=inline", "tensorboard=false",
                 "gating.enabled=false", f"run_dir={run_dir}"]
    assert main([*arguments, "iterations=2"]) == 0
    first, newest = sorted((run_dir / "checkpoints").iterdir())
    _damaged(newest, "truncated")
    capsys.readouterr()
    assert main([*arguments, "iterations=2", "resume=true"]) == 0
    captured = capsys.readouterr()
    assert f"warning: skipping checkpoint {newest}: truncated" in captured.err
    assert f"resuming from {first}" in captured.err
    summary = json.loads(captured.out)
    assert summary["resumed_from_iteration"] == 1 and summary["counters"]["iteration"] == 2
    for path in (run_dir / "checkpoints").iterdir():
        _damaged(path, "flipped")
    assert main([*arguments, "iterations=3", "resume=true"]) == EXIT_BAD_FILE
    line = _one_error_line(capsys, "catena-zero train: error: no intact checkpoint in")
    assert all(str(path) in line for path in (run_dir / "checkpoints").iterdir())


@pytest.mark.slow  # a fresh interpreter importing torch: ~10 s on a loaded 2-core box
def test_a_damaged_checkpoint_through_the_console_script(tmp_path) -> None:
    bad = _damaged(_checkpoint(tmp_path, 1), "truncated")
    completed = subprocess.run(
        [sys.executable, "-m", "catena_zero.cli.main", "arena", "preset=tiny",
         f"arena.agent_b=checkpoint:{bad}", "arena.num_games=2"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True,
        text=True, timeout=300)
    assert completed.returncode == EXIT_BAD_FILE
    assert completed.stderr.strip().splitlines() == [
        f"catena-zero arena: error: checkpoint {bad}: truncated (zip archive incomplete, "
        f"{bad.stat().st_size} bytes)"]
