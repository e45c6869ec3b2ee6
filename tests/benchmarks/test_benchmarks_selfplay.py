"""benchmarks/bench_selfplay.py: batched self-play, its network bound and the one-game baseline."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from benchmarks import bench_selfplay

torch.set_num_threads(1)


def test_smallest_benchmark_reports_every_figure(tmp_path: Path, capsys) -> None:
    out = tmp_path / "bench.json"
    assert bench_selfplay.main(["--presets", "tiny", "--repeats", "1", "--games", "4",
                                "--raw-seconds", "0.05", "--single-seconds", "0.1",
                                "--json", str(out)]) == 0
    (result,) = json.loads(out.read_text())["results"]
    assert result["preset"] == "tiny" and result["side"] == 3
    for key in ("a_selfplay_positions_per_s", "a_selfplay_evaluations_per_s",
                "b_raw_network_positions_per_s", "c_single_game_positions_per_s",
                "ratio_a_over_b", "ratio_a_over_c"):
        assert math.isfinite(result[key]) and result[key] > 0, key
    # Each position played evaluates at least its root; the ratios are of the figures.
    assert result["a_selfplay_evaluations_per_s"] >= result["a_selfplay_positions_per_s"]
    assert result["ratio_a_over_b"] == pytest.approx(
        result["a_selfplay_evaluations_per_s"] / result["b_raw_network_positions_per_s"])
    assert result["ratio_a_over_c"] == pytest.approx(
        result["a_selfplay_positions_per_s"] / result["c_single_game_positions_per_s"])
    assert 1 <= result["mean_network_batch"] <= result["games_in_batch"]
    assert result["runs"]["a"][0]["games"] == 4
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["preset", "net"] and "(a) pos/s" in lines[1]
    (row,) = [line.split() for line in lines if line.startswith("tiny ")]
    assert row[:5] == ["tiny", result["network"], str(result["games_in_batch"]),
                       "/".join(map(str, result["simulations_full_cheap"])),
                       str(result["mean_network_batch"])]
    assert float(row[5]) == pytest.approx(result["a_selfplay_positions_per_s"], abs=0.051)
    assert float(row[-1]) == pytest.approx(result["ratio_a_over_c"], abs=0.051)


@pytest.mark.slow  # self-play on two boards: about 15 s on a shared machine
def test_mix_reports_each_track_and_the_network_share(tmp_path: Path, capsys) -> None:
    out = tmp_path / "mix.json"
    assert bench_selfplay.main(["--presets", "tiny", "--mix", "general", "--mix-tracks",
                                "3/komi/standard,4/nokomi/standard", "--games", "2",
                                "--raw-seconds", "0.05", "--json", str(out),
                                "--override", "batch_cells=300"]) == 0
    (mix,) = json.loads(out.read_text())["mixes"]
    assert [row["track"] for row in mix["tracks"]] == ["3/komi/standard", "4/nokomi/standard"]
    assert mix["batch_cells"] == 300
    assert [(row["games"], row["games_in_batch"]) for row in mix["tracks"]] == [(2, 2), (2, 2)]
    assert all(row["share"] > 0 and row["ratio_a_over_b"] > 0 for row in mix["tracks"])
    assert 0 < mix["network_share_of_selfplay"]
    assert "network share of the mix's self-play time" in capsys.readouterr().out
