"""benchmarks/bench_padding.py: padded mixed batches against one-side batches."""

from __future__ import annotations

from benchmarks import bench_padding


def test_padding_benchmark_runs(capsys) -> None:
    assert bench_padding.main(["--batch", "6", "--repeats", "1", "--calls", "1",
                               "--mix", "2", "3", "--side", "3"]) == 0
    printed = capsys.readouterr().out
    assert "side 3 padded into 5x5" in printed and "mix 2/3 as 2 one-side calls" in printed
