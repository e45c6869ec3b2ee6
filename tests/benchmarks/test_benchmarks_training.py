"""benchmarks/bench_training.py: training samples/s of padded batches against side buckets."""

from __future__ import annotations

import math

import pytest

from benchmarks import bench_training


def test_side_shares_sum_the_tracks_of_each_side() -> None:
    final = bench_training.side_shares("general", "final")
    assert sorted(final) == [3, 4, 5, 6, 7, 8, 9, 10]
    assert sum(final.values()) == pytest.approx(1.0)
    assert max(final, key=final.get) == 6  # side 6 and its variants: the largest share
    assert bench_training.side_shares("general", "start")[4] > final[4]


def test_training_benchmark_prints_a_sane_row_per_setting(capsys) -> None:
    assert bench_training.main(["--network", "b1c16", "--batch", "16", "--steps", "1",
                                "--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("net 1x16, mix general (final shares: 3:")
    assert lines[1].split() == ["setting", "samples/cpu-s", "ratio"]
    # The setting names hold spaces: the first 16 characters are the name.
    rows = {line[:16].strip(): [float(value) for value in line[16:].split()]
            for line in lines[2:]}
    assert list(rows) == ["padded", "buckets 6/8/10", "buckets 4/6/8/10", "one per side"]
    padded = rows["padded"][0]
    assert rows["padded"][1] == 1.0
    for setting, (samples_per_cpu_s, ratio) in rows.items():
        assert math.isfinite(samples_per_cpu_s) and samples_per_cpu_s > 0, setting
        assert ratio == pytest.approx(samples_per_cpu_s / padded, rel=0.02, abs=0.01)
        assert 0.05 < ratio < 20, setting
