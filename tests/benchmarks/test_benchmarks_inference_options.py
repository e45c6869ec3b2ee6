"""The inference-options benchmark: every option evaluates the same net, the default's
ratio is 1, deviations from float32 are small on real positions, and the command line refuses
bad input."""

from __future__ import annotations

import pytest
import torch

from benchmarks.bench_inference_options import build_option, compare_options, main
from catena_zero.export.model_file import load_model_file
from catena_zero.play.bundled import bundled_general_path


@pytest.fixture(scope="module")
def net():
    return load_model_file(bundled_general_path()).network.eval()


def test_every_eager_option_agrees_with_float32(net):
    rows = compare_options(net, 4, ["float32", "bfloat16", "int8-dynamic"], [4], repeats=1,
                           seconds=0.01, log=lambda line: None)
    options = {row["option"] for row in rows}
    assert {"float32", "bfloat16", "int8-dynamic"} <= options
    defaults = [row for row in rows if row["default"]]
    assert len(defaults) == 1 and defaults[0]["ratio"] == 1.0
    for row in rows:
        assert row["pos_per_cpu_s"] > 0 and row["batch"] == 4
        # Real positions: every option's policy and value stay close to float32's.
        assert row["policy_deviation"] < 0.05 and row["value_deviation"] < 0.1, row
    float32 = next(row for row in rows if row["option"] == "float32")
    assert float32["policy_deviation"] == 0.0 and float32["value_deviation"] == 0.0


def test_building_an_option_leaves_the_net_alone(net):
    before = {name: tensor.clone() for name, tensor in net.state_dict().items()}
    forward, dtype, seconds = build_option(net, "bfloat16")
    assert dtype == torch.bfloat16 and seconds >= 0
    assert all(torch.equal(before[name], tensor) for name, tensor in net.state_dict().items())
    assert next(net.parameters()).dtype == torch.float32


def test_bad_arguments_exit_with_one_line(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["--side", "11"])
    assert raised.value.code == 2 and "--side must be 2..10" in capsys.readouterr().err
