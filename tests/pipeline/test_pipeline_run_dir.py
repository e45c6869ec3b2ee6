"""A run writes everything inside its run directory: the report, metrics, the gate's
champion registry; nothing in the current directory or elsewhere."""

from __future__ import annotations

import json
import os

import pytest
import torch

from catena_zero.arena.config import GateConfig, TrainingGateConfig
from catena_zero.cli.main import main
from catena_zero.pipeline.metrics import read_metrics
from catena_zero.pipeline.run import registry_in_run_dir

torch.set_num_threads(1)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _tree(root) -> set[str]:
    return {os.path.relpath(os.path.join(folder, name), root)
            for folder, folders, files in os.walk(root) for name in folders + files}


@pytest.mark.slow  # two tiny iterations, a gate and the report: ~20 CPU seconds
def test_a_tiny_run_leaves_its_report_in_run_dir_and_nothing_outside(tmp_path, monkeypatch,
                                                                        capsys) -> None:
    # Gating wrote runs/champions.json relative to the current directory, outside run_dir.
    cwd, home = tmp_path / "cwd", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    (cwd / "kept.txt").write_text("the user's file\n")
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(home))
    before = _tree(cwd)
    assert main(["train", "preset=tiny", "runtime=inline", "run_dir=D",
                 "gating.every_iterations=2", "gating.gate.num_games=2"]) == 0
    assert _tree(cwd) - before == {"D"} | {f"D/{path}" for path in _tree(cwd / "D")}
    run_dir = cwd / "D"
    assert (run_dir / "report.png").read_bytes().startswith(PNG_MAGIC)
    registry = json.loads((run_dir / "champions.json").read_text())
    assert "side3-komi-standard" in json.dumps(registry)  # the first checkpoint was crowned
    kinds = [record["kind"] for record in read_metrics(run_dir)]
    assert kinds == ["iteration", "iteration", "gate"]
    assert json.loads((run_dir / "summary.json").read_text())["counters"]["iteration"] == 2
    assert capsys.readouterr().err.startswith("train: tracks 3/komi/standard; net 1x16;")


def test_a_relative_registry_is_taken_inside_run_dir_and_an_absolute_one_kept(tmp_path):
    gating = TrainingGateConfig()
    assert registry_in_run_dir(gating, "runs/a").gate.registry == "runs/a/champions.json"
    shared = TrainingGateConfig(gate=GateConfig(registry=str(tmp_path / "shared.json")))
    assert registry_in_run_dir(shared, "runs/a").gate.registry == str(tmp_path / "shared.json")
