"""scripts/bench_network.py: the reusable throughput functions run and return rates."""

from __future__ import annotations

import pytest
import torch

from catena_zero.network import NetworkConfig
from tests.script_loader import load_script

torch.set_num_threads(1)


def load_bench():
    return load_script("bench_network")


def test_throughput_functions_measure_a_tiny_net() -> None:
    bench = load_bench()
    assert bench.preset_network_config("b4c32").channels == 32
    net = bench.build_preset_net(3, NetworkConfig(blocks=1, channels=8, global_pool_channels=4))
    rate = bench.measure_throughput(net, batch_size=4, seconds=0.05, min_calls=2)
    assert rate > 0
    assert bench.measure_training_throughput(net, batch_size=8, steps=2) > 0


@pytest.mark.parametrize("mode, second", [("--compare-layouts", "chan-last"),
                                          ("--compare-precisions", "bfloat16")])
def test_comparisons_run(capsys, mode: str, second: str) -> None:
    """Both benchmarks' comparison modes run and print a ratio per net or preset."""
    assert load_bench().main([mode, "--repeats", "1", "--seconds", "0.01",
                              "--batches", "2"]) == 0
    printed = capsys.readouterr().out
    assert second in printed and printed.count("side") >= 2
    selfplay_bench = load_script("bench_selfplay")
    assert selfplay_bench.main(["--presets", "tiny", mode, "--repeats", "1",
                                "--games", "4"]) == 0
    printed = capsys.readouterr().out
    assert "ratio" in printed and second.replace("chan-last", "channels_last") in printed


def test_padding_benchmark_runs(capsys) -> None:
    assert load_script("bench_padding").main(["--batch", "6", "--repeats", "1", "--calls", "1",
                                              "--mix", "2", "3", "--side", "3"]) == 0
    printed = capsys.readouterr().out
    assert "side 3 padded into 5x5" in printed and "mix 2/3 as 2 one-side calls" in printed
