"""benchmarks/bench_network.py: the reusable throughput functions run and return rates."""

from __future__ import annotations

import pytest
import torch

from benchmarks import bench_network, bench_selfplay
from catena_zero.network import NetworkConfig

torch.set_num_threads(1)


def test_throughput_functions_measure_a_tiny_net() -> None:
    assert bench_network.preset_network_config("b4c32").channels == 32
    net = bench_network.build_preset_net(3, NetworkConfig(blocks=1, channels=8,
                                                          global_pool_channels=4))
    rate = bench_network.measure_throughput(net, batch_size=4, seconds=0.05, min_calls=2)
    assert rate > 0
    assert bench_network.measure_training_throughput(net, batch_size=8, steps=2) > 0


@pytest.mark.parametrize("mode, second", [("--compare-layouts", "chan-last"),
                                          ("--compare-precisions", "bfloat16")])
def test_comparisons_run(capsys, mode: str, second: str) -> None:
    """Both benchmarks' comparison modes run and print a ratio per net or preset."""
    assert bench_network.main([mode, "--repeats", "1", "--seconds", "0.01",
                               "--batches", "2"]) == 0
    printed = capsys.readouterr().out
    assert second in printed and printed.count("side") >= 2
    assert bench_selfplay.main(["--presets", "tiny", mode, "--repeats", "1",
                                "--games", "4"]) == 0
    printed = capsys.readouterr().out
    assert "ratio" in printed and second.replace("chan-last", "channels_last") in printed


def test_smallest_table_runs(capsys) -> None:
    """The default mode at its smallest: one batch size, a few calls per preset net."""
    assert bench_network.main(["--seconds", "0.01", "--batches", "1"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert [row[0] for row in rows] == ["side4", "side6"]
    assert all(float(row[-2]) > 0 and float(row[-1]) > 0 for row in rows)
