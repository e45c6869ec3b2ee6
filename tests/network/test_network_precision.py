"""Reduced-precision CPU inference: the bfloat16 copy of the net, its accuracy against float32,
and that it follows every change of the net's weights without a refresh."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from catena_zero.network import InferenceModel, NetworkConfig, inference_dtype
from catena_zero.network import device as device_module
from catena_zero.network.device import REDUCED_PRECISION_MIN_BATCH
from catena_zero.pipeline.config import LoopConfig
from tests.network.test_network_model import make_net, random_inputs

torch.set_num_threads(1)

HEADS = ("policy_logits", "value", "score", "ownership")


def trained_statistics_net(side: int = 4, seed: int = 0):
    """A net whose batch-norm statistics are not the initial 0/1 (a few train-mode passes),
    so the folded affine maps are exercised."""
    net = make_net(side, seed=seed)
    net.train()
    with torch.no_grad():
        for index in range(20):
            planes, globals_ = random_inputs(side, 16, seed=100 + index)
            net(planes, globals_)
    net.eval()
    return net


def numpy_inputs(side: int, batch: int, seed: int = 0):
    planes, globals_ = random_inputs(side, batch, seed)
    return planes.numpy().astype(np.uint8), globals_.numpy()


def assert_close_in_bfloat16(reduced, exact) -> None:
    for name in HEADS:
        low, high = getattr(reduced, name), getattr(exact, name)
        assert low.dtype == np.float32 and low.shape == high.shape
        # bfloat16 keeps 8 bits of mantissa: about 2-3 significant digits.
        np.testing.assert_allclose(low, high, atol=0.03 * max(1.0, float(np.abs(high).max())))


def test_inference_dtype_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = torch.device("cpu")
    assert inference_dtype(cpu, "float32") is None
    assert inference_dtype(cpu, "bfloat16") is torch.bfloat16
    monkeypatch.setattr(device_module, "cpu_has_fast_bfloat16", lambda: True)
    assert inference_dtype(cpu, "auto") is torch.bfloat16
    monkeypatch.setattr(device_module, "cpu_has_fast_bfloat16", lambda: False)
    assert inference_dtype(cpu, "auto") is None
    with pytest.raises(ValueError, match="precision must be one of"):
        inference_dtype(cpu, "float16")
    with pytest.raises(ValueError, match="precision must be one of"):
        InferenceModel(make_net(3), "cpu", precision="half")


def test_loop_config_rejects_an_unknown_precision() -> None:
    assert LoopConfig(inference_precision="bfloat16").inference_precision == "bfloat16"
    with pytest.raises(ValueError, match="inference_precision"):
        LoopConfig(inference_precision="fp8")


@pytest.mark.parametrize("side", [2, 4, 6])
def test_bfloat16_matches_float32_within_its_precision(side: int) -> None:
    net = trained_statistics_net(side)
    planes, globals_ = numpy_inputs(side, 33, seed=side)
    exact = InferenceModel(net, "cpu", precision="float32")(planes, globals_)
    model = InferenceModel(net, "cpu", precision="bfloat16")
    reduced = model(planes, globals_)
    assert_close_in_bfloat16(reduced, exact)
    # The net itself stays float32 (it is the one the trainer updates).
    assert all(parameter.dtype == torch.float32 for parameter in net.parameters())
    assert model.use_copy and model._copy is not None
    convolution = model._copy.blocks[0].conv1.weight
    assert convolution.dtype == torch.bfloat16
    assert model._copy.blocks[0].norm1.running_var.dtype == torch.float32
    # A near-tie may flip the argmax, but only to a move whose float32 logit is within
    # bfloat16's error of the best.
    logits = exact.policy_logits
    tolerance = 0.03 * max(1.0, float(np.abs(logits).max()))
    chosen = reduced.policy_logits.argmax(1)  # [B]
    assert np.all(logits[np.arange(len(chosen)), chosen] >= logits.max(1) - 2 * tolerance)


def test_float32_precision_keeps_no_copy() -> None:
    model = InferenceModel(make_net(3), "cpu", precision="float32")
    planes, globals_ = numpy_inputs(3, 4)
    model(planes, globals_)
    assert not model.use_copy and model._copy is None


def test_copy_follows_optimiser_steps_and_loaded_weights() -> None:
    """An inline run trains the very net self-play evaluates, and Ray actors load weights
    into it: the copy must see both at the next call, with no refresh()."""
    side = 4
    net = trained_statistics_net(side)
    planes, globals_ = numpy_inputs(side, 17, seed=3)
    reduced = InferenceModel(net, "cpu", precision="bfloat16")
    exact = InferenceModel(net, "cpu", precision="float32")
    before = reduced(planes, globals_)

    optimiser = torch.optim.AdamW(net.parameters(), lr=0.05)
    net.train()
    torch_planes, torch_globals = random_inputs(side, 8, seed=9)
    output = net(torch_planes, torch_globals)
    (output.policy_logits.square().mean() + output.value_logits.square().mean()).backward()
    optimiser.step()
    after_step = reduced(planes, globals_)
    assert not np.allclose(after_step.policy_logits, before.policy_logits, atol=0.05)
    assert_close_in_bfloat16(after_step, exact(planes, globals_))

    other = trained_statistics_net(side, seed=5)
    net.load_state_dict(other.state_dict())
    loaded = reduced(planes, globals_)
    assert_close_in_bfloat16(loaded, InferenceModel(other, "cpu", precision="float32")(
        planes, globals_))


def test_bfloat16_without_normalisation() -> None:
    config = NetworkConfig(blocks=2, channels=16, global_pool_every=1, global_pool_channels=4,
                           policy_head_channels=4, value_head_channels=4, value_hidden=8,
                           normalisation="none")
    net = make_net(4, config)
    planes, globals_ = numpy_inputs(4, 9)
    assert_close_in_bfloat16(InferenceModel(net, "cpu", precision="bfloat16")(planes, globals_),
                             InferenceModel(net, "cpu", precision="float32")(planes, globals_))


def test_small_batches_run_the_float32_net() -> None:
    """One-game play evaluates a position at a time, where bfloat16 is slower: below
    REDUCED_PRECISION_MIN_BATCH the float32 net answers, exactly."""
    net = trained_statistics_net(4)
    small = REDUCED_PRECISION_MIN_BATCH - 1
    planes, globals_ = numpy_inputs(4, small, seed=11)
    model = InferenceModel(net, "cpu", precision="bfloat16")
    output = model(planes, globals_)
    assert model._copy is None
    exact = InferenceModel(net, "cpu", precision="float32")(planes, globals_)
    for name in HEADS:
        np.testing.assert_array_equal(getattr(output, name), getattr(exact, name))
    planes, globals_ = numpy_inputs(4, REDUCED_PRECISION_MIN_BATCH, seed=11)
    model(planes, globals_)
    assert model._copy is not None


@pytest.mark.parametrize(("amx", "avx512_bf16", "expected"), [
    (True, False, True), (False, True, True), (False, False, False), (None, True, True),
])
def test_fast_bfloat16_needs_amx_or_avx512_bf16(monkeypatch: pytest.MonkeyPatch, amx,
                                                avx512_bf16, expected) -> None:
    def answer(value):
        def check() -> bool:
            if value is None:  # a torch build whose probe fails
                raise RuntimeError("cpuinfo failed")
            return value
        return check

    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", answer(amx), raising=False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", answer(avx512_bf16),
                        raising=False)
    assert device_module.cpu_has_fast_bfloat16() is expected
    assert (inference_dtype(torch.device("cpu"), "auto") is torch.bfloat16) is expected
