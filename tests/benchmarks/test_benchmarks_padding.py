"""benchmarks/bench_padding.py: padded mixed batches against one-side batches."""

from __future__ import annotations

import math

import pytest

from benchmarks import bench_padding

LABEL_WIDTH = 40  # the table's first column


def test_padding_benchmark_prints_a_sane_row_per_layout(capsys) -> None:
    assert bench_padding.main(["--batch", "6", "--repeats", "1", "--calls", "1",
                               "--mix", "2", "3", "--side", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("network=b4c32 batch=6 threads=1 ")
    rows = {line[:LABEL_WIDTH].strip(): [float(value) for value in line[LABEL_WIDTH:].split()]
            for line in lines[2:]}
    assert list(rows) == ["side 3 alone (5x5)", "side 3 padded into 5x5",
                          "mix 2/3 padded into 5x5", "mix 2/3 as 2 one-side calls"]
    reference = rows["side 3 alone (5x5)"][2]
    for label, (wall_ms, cpu_ms, positions_per_cpu_s, ratio) in rows.items():
        assert all(math.isfinite(value) and value > 0
                   for value in (wall_ms, cpu_ms, positions_per_cpu_s, ratio)), label
        # Positions per CPU second is the batch over the CPU time of a call (printed to
        # 0.05 ms).
        assert 6000 / (cpu_ms + 0.05) <= positions_per_cpu_s + 0.5, label
        assert cpu_ms <= 0.05 or positions_per_cpu_s - 0.5 <= 6000 / (cpu_ms - 0.05), label
        # The ratio is of CPU time per call, so the reference's rate over the row's.
        assert ratio == pytest.approx(reference / positions_per_cpu_s, rel=0.02, abs=0.01)
        assert 0.05 < ratio < 20, label
    assert rows["side 3 alone (5x5)"][3] == 1.0
