"""The GPU path of `device=auto`: bf16 inference, mixed-precision training, a tiny run on CUDA.

Skipped where no CUDA device is present (CI); run on a lent GPU by benchmarks/device_check.sh.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.network import InferenceModel, resolve_device
from catena_zero.pipeline.inline import train_loop
from catena_zero.train import TrainConfig, Trainer, load_checkpoint
from tests.data.test_data_samples import random_samples
from tests.network.test_network_model import make_net, random_inputs
from tests.train.test_train_trainer import tiny_net

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_auto_picks_cuda() -> None:
    assert resolve_device("auto").type == "cuda"


def test_cuda_inference_matches_cpu_within_reduced_precision() -> None:
    side = 4
    net = make_net(side)
    planes, globals_ = random_inputs(side, 64)
    planes_np, globals_np = planes.numpy().astype(np.uint8), globals_.numpy()
    on_cpu = InferenceModel(make_net(side), "cpu", precision="float32")(planes_np, globals_np)
    on_gpu = InferenceModel(net, "auto")(planes_np, globals_np)
    assert next(net.parameters()).device.type == "cuda"
    for name in ("policy_logits", "value", "score", "ownership"):
        gpu, cpu = getattr(on_gpu, name), getattr(on_cpu, name)
        assert gpu.dtype == np.float32 and gpu.shape == cpu.shape
        # bfloat16 keeps 8 bits of mantissa: about 2-3 significant digits.
        np.testing.assert_allclose(gpu, cpu, atol=0.05 * max(1.0, float(np.abs(cpu).max())))
    # An untrained net's logits nearly tie, so bf16 may pick another move than float32 does:
    # but always one whose float32 logit is within bf16's error of the best.
    cpu_logits = on_cpu.policy_logits
    tolerance = 0.05 * max(1.0, float(np.abs(cpu_logits).max()))
    chosen = on_gpu.policy_logits.argmax(1)  # [B]
    chosen_logit = cpu_logits[np.arange(len(chosen)), chosen]
    assert np.all(chosen_logit >= cpu_logits.max(1) - 2 * tolerance)


def test_mixed_precision_training_on_cuda_lowers_the_loss() -> None:
    net = tiny_net()
    batch = random_samples(3, 64, seed=4)
    config = TrainConfig(learning_rate=5e-3, warmup_steps=0, lr_schedule="constant")
    trainer = Trainer(net, config, "cuda")
    assert trainer.autocast_dtype == torch.bfloat16
    first = trainer.train_steps([batch])
    trainer.train_steps([batch] * 30)
    last = trainer.train_steps([batch])
    assert math.isfinite(last.loss_total) and last.loss_total < 0.8 * first.loss_total
    assert all(parameter.dtype == torch.float32 for parameter in net.parameters())


def test_tiny_training_run_on_cuda_resumes_on_cpu(tmp_path: Path) -> None:
    def config(*overrides: str):
        return build_config(compose("train", ["preset=tiny", f"run_dir={tmp_path / 'run'}",
                                              "tensorboard=false", *overrides]))

    summary = train_loop(config("device=cuda", "iterations=1"))
    assert summary["counters"]["iteration"] == 1
    resumed = train_loop(config("device=cpu", "iterations=2", "resume=true"))
    assert resumed["counters"]["iteration"] == 2
    checkpoint = load_checkpoint(Path(resumed["checkpoint"]))
    assert all(tensor.device.type == "cpu" for tensor in checkpoint.model_state.values())
