"""benchmarks/bench_training.py: training samples/s of padded batches against side buckets."""

from __future__ import annotations

import pytest

from benchmarks import bench_training


def test_side_shares_sum_the_tracks_of_each_side() -> None:
    final = bench_training.side_shares("general", "final")
    assert sorted(final) == [3, 4, 5, 6, 7, 8, 9, 10]
    assert sum(final.values()) == pytest.approx(1.0)
    assert max(final, key=final.get) == 6  # side 6 and its variants: the largest share
    assert bench_training.side_shares("general", "start")[4] > final[4]


def test_training_benchmark_runs(capsys) -> None:
    assert bench_training.main(["--network", "b1c16", "--batch", "16", "--steps", "1",
                                "--repeats", "1"]) == 0
    printed = capsys.readouterr().out
    assert "net 1x16, mix general" in printed
    for setting in ("padded", "buckets 6/8/10", "one per side"):
        assert setting in printed
