"""benchmarks/bench_selfplay.py: batched self-play, its network bound and the one-game baseline."""

from __future__ import annotations

import json
from pathlib import Path

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
    for key in ("a_selfplay_positions_per_s", "b_raw_network_positions_per_s",
                "c_single_game_positions_per_s", "ratio_a_over_b", "ratio_a_over_c"):
        assert result[key] > 0, key
    assert result["runs"]["a"][0]["games"] == 4
    assert "(a) pos/s" in capsys.readouterr().out
