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


@pytest.mark.parametrize("mode, first, second", [
    ("--compare-layouts", "contiguous", "chan-last"),
    ("--compare-precisions", "float32", "bfloat16")])
def test_comparisons_print_sane_ratios(capsys, mode: str, first: str, second: str) -> None:
    """Both benchmarks' comparison modes print, per net or preset, two positive rates and
    their ratio."""
    assert bench_network.main([mode, "--repeats", "1", "--seconds", "0.01",
                               "--batches", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["net", "batch", first, second, "ratio"]
    rows = [line.split() for line in lines[2:]]
    assert [row[:2] for row in rows] == [["side4", "2"], ["side6", "2"]]
    for _, _, before, after, ratio in rows:
        assert float(before) > 0 and float(after) > 0
        assert float(ratio) == pytest.approx(float(after) / float(before), rel=0.01, abs=0.006)
        assert 0.05 < float(ratio) < 20
    assert bench_selfplay.main(["--presets", "tiny", mode, "--repeats", "1",
                                "--games", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # "tiny  float32  309.3  bfloat16  343.5  ratio 1.11"
    (preset, name_a, rate_a, name_b, rate_b, word, ratio), = [line.split() for line in lines[1:]]
    assert (preset, word) == ("tiny", "ratio")
    assert (name_a, name_b) == (("contiguous", "channels_last") if first == "contiguous"
                                else ("float32", "bfloat16"))
    assert float(rate_a) > 0 and float(rate_b) > 0
    assert float(ratio) == pytest.approx(float(rate_b) / float(rate_a), rel=0.01, abs=0.006)
    assert 0.05 < float(ratio) < 20


def test_smallest_table_runs(capsys) -> None:
    """The default mode at its smallest: one batch size, a few calls per preset net."""
    assert bench_network.main(["--seconds", "0.01", "--batches", "1"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert [row[0] for row in rows] == ["side4", "side6"]
    assert all(float(row[-2]) > 0 and float(row[-1]) > 0 for row in rows)
