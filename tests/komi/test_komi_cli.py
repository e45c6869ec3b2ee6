"""The solve and komi subcommands end to end on side 2, and the notebook on their CSVs."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from catena_zero.cli.main import main
from catena_zero.komi.exact import load_cache
from catena_zero.komi.tables import read_csv

ROOT = Path(__file__).resolve().parents[2]


def test_solve_prints_and_caches_the_exact_value(tmp_path, capsys):
    cache = tmp_path / "cache.json"
    assert main(["solve", "--side", "2", f"cache_path={cache}"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "exact fair komi = 2.5" in out and "optimal:" in out
    assert "solve side2-komi-standard at komi 0: started" in captured.err
    report = load_cache(cache)["side2-komi-standard"]
    assert report["margin"] == 2.5 and report["peak_rss_mb"] > 0
    assert main(["solve", "--side", "2", "rules=double_longest", f"cache_path={cache}"]) == 0
    assert "side2-double-longest" in load_cache(cache)


def test_solve_rejects_an_unknown_key(capsys):
    assert main(["solve", "--side", "2", "max_position=3"]) == 2
    assert "max_position" in capsys.readouterr().err


def test_komi_writes_csv_png_and_summary_then_the_notebook_redraws_them(tmp_path, capsys):
    out_dir = tmp_path / "komi"
    cache = tmp_path / "cache.json"
    common = [f"out_dir={out_dir}", f"solver_cache={cache}", "agent=solver",
              "sweep.games_per_komi=2", "opening.games_per_cell=2", "--side", "2"]
    assert main(["komi", *common]) == 0
    assert main(["komi", "rules=nokomi_standard", *common]) == 0
    printed = capsys.readouterr().out
    assert "side2-komi-standard" in printed and "empirical" in printed
    summary = {row["track"]: row for row in read_csv(out_dir / "summary.csv")}
    assert summary["side2-komi-standard"]["empirical_fair_komi"] == 2.5
    assert summary["side2-komi-standard"]["exact_fair_komi"] == 2.5
    for name in ("sweep_side2-komi-standard.png", "opening_side2-nokomi-standard.png",
                 "opening_side2-nokomi-standard.csv"):
        assert (out_dir / name).stat().st_size > 0
    opening = read_csv(out_dir / "opening_side2-nokomi-standard.csv")
    assert {row["exact_margin"] for row in opening} == {2.5}

    notebook = nbformat.read(ROOT / "notebooks" / "komi_balance.ipynb", as_version=4)
    os.environ["KOMI_DATA_DIR"] = str(out_dir)
    try:
        NotebookClient(notebook, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(ROOT)}}).execute()
    finally:
        del os.environ["KOMI_DATA_DIR"]
    text = "".join(output.get("text", "") for cell in notebook.cells
                   for output in cell.get("outputs", []))
    assert "side2-komi-standard" in text and "most balanced" in text
    assert (out_dir / "notebook" / "sweep_side2-komi-standard.png").stat().st_size > 0
    assert (out_dir / "notebook" / "opening_side2-nokomi-standard.png").stat().st_size > 0


@pytest.mark.parametrize("override", ["sweep.games_per_komi=0", "agent=nonsense"])
def test_komi_rejects_bad_settings(tmp_path, override, capsys):
    assert main(["komi", "--side", "2", f"out_dir={tmp_path}", override]) == 2
    assert override.split("=")[1] in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.slow  # a sweep with a network agent: about 10 s on a shared machine
def test_komi_takes_a_model_file_as_its_agent(tmp_path, capsys):
    from catena_zero.play.bundled import bundled_model_path

    side4 = bundled_model_path(4)
    assert main(["komi", "--side", "2", f"agent={side4}", f"out_dir={tmp_path}",
                 f"solver_cache={tmp_path / 'cache.json'}", "sweep.games_per_komi=1",
                 "sweep.komi_values=[1,2,3,4,5]", "estimate.simulations=2",
                 "mcts.num_simulations=2"]) == 0
    captured = capsys.readouterr()
    assert "side2-komi-standard" in captured.out
    assert "outside the training of the model side4.pt" in captured.err
