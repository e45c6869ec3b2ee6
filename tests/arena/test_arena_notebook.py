"""notebooks/training_report.ipynb executes on a tiny synthetic run and draws its curves."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from catena_zero.arena.elo import PairwiseResults, fit_bradley_terry, write_elo_csv

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "training_report.ipynb"


def _synthetic_run(run_dir: Path) -> None:
    """TensorBoard losses over 5 steps and an Elo CSV of two checkpoints and two baselines."""
    import torch

    torch.set_num_threads(1)
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=str(run_dir / "tensorboard"))
    for step in range(5):
        writer.add_scalar("loss/policy", 2.0 / (step + 1), step)
        writer.add_scalar("loss/value", 1.0 / (step + 1), step)
        writer.add_scalar("selfplay/positions_per_second", 100.0 + step, step)
    writer.close()
    results = PairwiseResults(["random", "greedy", "step2", "step4"], [None, None, 2, 4])
    results.add("greedy", "random", 12, 0, 8)
    results.add("step2", "random", 15, 1, 4)
    results.add("step4", "random", 18, 0, 2)
    results.add("step4", "step2", 13, 0, 7)
    results.add("step4", "greedy", 14, 0, 6)
    write_elo_csv(run_dir / "elo" / "elo.csv", fit_bradley_terry(results))


def test_training_report_executes(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    run_dir = tmp_path / "run"
    _synthetic_run(run_dir)
    monkeypatch.setenv("CATENA_RUN_DIR", str(run_dir))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # The kernel is a fresh process: make the package importable even without an install.
    repo_root = str(NOTEBOOK.parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (repo_root, os.environ.get("PYTHONPATH", "")) if p))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "3 scalar tags" in text and "loss/policy" in text
    assert "step4" in text
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 2  # the learning curves and the Elo plot
    summary = next(line for line in text.splitlines() if line.startswith("SUMMARY"))
    assert "'best_step': 4" in summary and "'elo_players': 4" in summary
    assert np.isfinite(float(summary.split("'last_elo': ")[1].rstrip("}")))
