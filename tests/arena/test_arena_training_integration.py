"""A tiny real training run gated after every checkpoint, then its ladder and its report."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "training_report.ipynb"


@pytest.mark.slow
def test_tiny_run_gated_laddered_and_reported(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from catena_zero.arena.config import GateConfig, LadderConfig
    from catena_zero.arena.elo import read_elo_csv
    from catena_zero.arena.gating import make_gating_callback
    from catena_zero.arena.ladder import run_ladder
    from catena_zero.arena.registry import ChampionRegistry, Track
    from catena_zero.arena.specs import AgentFactory
    from catena_zero.cli.common import compose
    from catena_zero.cli.train import build_config
    from catena_zero.pipeline.inline import train_loop

    run_dir = tmp_path / "run"
    config = build_config(compose("train", [
        "preset=tiny", f"run_dir={run_dir}", "device=cpu", "iterations=3",
        "keep_checkpoints=0", "tensorboard=true"]))
    config = dataclasses.replace(config, loop=dataclasses.replace(config.loop,
                                                                  run_dir=str(run_dir)))
    gate = GateConfig(num_games=8, registry=str(tmp_path / "champions.json"))
    results = []
    callback = make_gating_callback(config.rules, gate, search_config=config.search,
                                    device="cpu", log=None)
    train_loop(config, on_checkpoint=lambda event: results.append(callback(event)))

    assert len(results) == 3 and results[0].reason == "first"
    assert all(r.match is not None and r.match.num_games == 8 for r in results[1:])
    history = ChampionRegistry(gate.registry).history(Track.from_rules(config.rules))
    assert len(history) == 1 + sum(r.promoted for r in results[1:])

    factory = AgentFactory(config.rules, search_config=config.search, device="cpu")
    ladder = run_ladder(config.rules, LadderConfig(run_dir=str(run_dir),
                                                   baselines=["random", "greedy"],
                                                   games_per_pair=4), factory)
    rows = read_elo_csv(ladder.csv_path)
    assert len(rows) == 5 and sum(row["step"] is not None for row in rows) == 3

    monkeypatch.setenv("CATENA_RUN_DIR", str(run_dir))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(NOTEBOOK.parents[1]), os.environ.get("PYTHONPATH", "")) if p))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "".join(o.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for o in cell.outputs if o.output_type == "stream")
    assert "loss/total" in text and "'elo_players': 5" in text
