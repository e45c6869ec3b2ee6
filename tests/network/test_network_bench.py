"""scripts/bench_network.py: the reusable throughput functions run and return rates."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

from catena_zero.network import NetworkConfig

torch.set_num_threads(1)

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_network.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_network", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_throughput_functions_measure_a_tiny_net() -> None:
    bench = load_bench()
    assert bench.preset_network_config("b4c32").channels == 32
    net = bench.build_preset_net(3, NetworkConfig(blocks=1, channels=8, global_pool_channels=4))
    rate = bench.measure_throughput(net, batch_size=4, seconds=0.05, min_calls=2)
    assert rate > 0
    assert bench.measure_training_throughput(net, batch_size=8, steps=2) > 0
