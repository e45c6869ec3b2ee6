"""Raw policy-value net throughput (positions/s) on random inputs.

The figure is the hardware bound (b) of the self-play benchmark: how fast the
network alone evaluates a batch, without search, engine or data handling.
`pos/s` uses wall time; `pos/cpu-s` divides by this process's CPU time instead,
which varies less when other jobs share the machine.

    python -m benchmarks.bench_network   # side4 (b4c32) and side6 (b6c64) nets, batch 1/64/256
    python -m benchmarks.bench_network --threads 2 --seconds 3 --batches 1 64
    python -m benchmarks.bench_network --train       # plus training samples/s at batch 256
    python -m benchmarks.bench_network --compare-layouts --repeats 5      # channels-last gain
    python -m benchmarks.bench_network --compare-precisions --repeats 5   # bfloat16 gain

`measure_throughput(net, batch_size, ...)` is the reusable function.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
import yaml

from catena_zero.data import Samples
from catena_zero.network import (
    INFERENCE_PRECISIONS,
    InferenceModel,
    NetworkConfig,
    PolicyValueNet,
    count_parameters,
    inference_dtype,
    resolve_device,
)
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, get_board
from catena_zero.train import TrainConfig, Trainer

# (label, side, network config file): the networks of the side4 and side6 presets.
PRESET_NETS = (("side4", 4, "b4c32"), ("side6", 6, "b6c64"))
CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs" / "network"


def preset_network_config(name: str) -> NetworkConfig:
    """NetworkConfig from configs/network/<name>.yaml (plain keys, no Hydra needed): the
    file holds what differs from NetworkConfig's defaults (an empty file: the defaults)."""
    values = yaml.safe_load((CONFIG_DIR / f"{name}.yaml").read_text()) or {}
    return NetworkConfig.from_dict(values)


def build_preset_net(side: int, config: NetworkConfig) -> PolicyValueNet:
    board = get_board(side)
    return PolicyValueNet(
        NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index, config
    )


def precision_name(device: str, precision: str) -> str:
    """What `InferenceModel(net, device, precision=precision)` computes in: "float32",
    "bfloat16" or "float16"."""
    dtype = inference_dtype(resolve_device(device), precision) or torch.float32
    return str(dtype).removeprefix("torch.")


def measure_throughput(
    net: PolicyValueNet,
    batch_size: int,
    device: str = "cpu",
    seconds: float = 2.0,
    min_calls: int = 5,
    seed: int = 0,
    clock: str = "wall",
    channels_last: bool | None = None,
    precision: str = "auto",
) -> float:
    """Positions/s of `InferenceModel(net, device, channels_last, precision)` on random 0/1
    planes at `batch_size` (`channels_last` None: the model's default layout for the device).

    Runs a short warm-up, then calls the model until `seconds` of wall time have passed (at
    least `min_calls` calls) and returns batch_size * calls / elapsed, where elapsed is wall
    time (`clock="wall"`) or this process's CPU time (`clock="cpu"`: less sensitive to
    other processes on a shared machine, meaningless for a GPU).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if clock not in ("wall", "cpu"):
        raise ValueError(f"clock must be 'wall' or 'cpu', got {clock!r}")
    rng = np.random.default_rng(seed)
    size = net.grid_size
    planes = (rng.random((batch_size, net.num_planes, size, size)) < 0.3).astype(np.uint8)
    globals_ = rng.random((batch_size, net.num_globals), dtype=np.float32)
    model = InferenceModel(net, device, channels_last, precision)
    for _ in range(3):
        model(planes, globals_)
    calls = 0
    start, start_cpu = time.perf_counter(), time.process_time()
    while True:
        model(planes, globals_)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and calls >= min_calls:
            if clock == "cpu":
                elapsed = max(time.process_time() - start_cpu, 1e-9)
            return batch_size * calls / elapsed


def measure_training_throughput(
    net: PolicyValueNet, batch_size: int, steps: int = 10, device: str = "cpu", seed: int = 0
) -> float:
    """Samples/s of `Trainer.train_steps` on random (valid) samples, after one warm-up step."""
    rng = np.random.default_rng(seed)
    size, cells = net.grid_size, net.num_cells
    policy = rng.random((batch_size, cells + 1)).astype(np.float32)
    batch = Samples.create(
        planes=rng.random((batch_size, net.num_planes, size, size)) < 0.3,
        globals=rng.random((batch_size, net.num_globals)),
        policy_target=policy / policy.sum(axis=1, keepdims=True),
        value_target=np.eye(3, dtype=np.float32)[rng.integers(0, 3, batch_size)],
        score_target=rng.normal(size=batch_size) * 5,
        ownership_target=rng.integers(-1, 2, (batch_size, cells)),
        legal_mask=np.ones((batch_size, cells + 1), bool),
    )
    trainer = Trainer(net, TrainConfig(batch_size=batch_size), device)
    trainer.train_steps([batch])
    return trainer.train_steps([batch] * steps).samples_per_second


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, auto")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per point")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64, 256])
    parser.add_argument(
        "--train", action="store_true", help="also time training steps at batch 256"
    )
    parser.add_argument("--precision", default="auto", choices=INFERENCE_PRECISIONS,
                        help="inference precision (auto: bf16 on a GPU or a bf16 CPU)")
    parser.add_argument("--compare-layouts", action="store_true",
                        help="instead: contiguous against channels-last weights and inputs"
                             " (float32), alternated --repeats times, medians of pos/cpu-s")
    parser.add_argument("--compare-precisions", action="store_true",
                        help="instead: float32 against bfloat16 inference (channels-last),"
                             " alternated --repeats times, medians of pos/cpu-s")
    parser.add_argument("--repeats", type=int, default=5, help="rounds of a comparison")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.compare_layouts:
        return compare(args, {"contiguous": (False, "float32"), "chan-last": (True, "float32")})
    if args.compare_precisions:
        return compare(args, {"float32": (True, "float32"), "bfloat16": (True, "bfloat16")})
    torch.manual_seed(0)
    print(f"device={args.device} threads={args.threads} planes={NUM_PLANES} globals={NUM_GLOBALS}"
          f" precision={precision_name(args.device, args.precision)}")
    print(f"{'net':<8}{'side':>5}{'blocks':>7}{'chan':>6}{'params':>9}{'batch':>7}{'pos/s':>11}"
          f"{'pos/cpu-s':>11}")
    for label, side, config_name in PRESET_NETS:
        config = preset_network_config(config_name)
        blocks, channels = config.blocks, config.channels
        net = build_preset_net(side, config)
        parameters = count_parameters(net)
        for batch_size in args.batches:
            rate = measure_throughput(net, batch_size, args.device, args.seconds,
                                      precision=args.precision)
            cpu_rate = measure_throughput(net, batch_size, args.device, args.seconds,
                                          clock="cpu", precision=args.precision)
            print(
                f"{label:<8}{side:>5}{blocks:>7}{channels:>6}{parameters:>9}"
                f"{batch_size:>7}{rate:>11.0f}{cpu_rate:>11.0f}",
                flush=True,
            )
        if args.train:
            rate = measure_training_throughput(net, 256, device=args.device)
            print(f"{label:<8}{side:>5}{blocks:>7}{channels:>6}{parameters:>9}{256:>7}"
                  f"{rate:>11.0f}  (training samples/s)", flush=True)
    return 0


def compare(args: argparse.Namespace, settings: dict) -> int:
    """Per preset net and batch: median pos/cpu-s under each of the two `settings` (name ->
    (channels_last, precision)), measured alternately in one process so machine noise hits
    both alike; the ratio is the second's rate over the first's."""
    first, second = settings
    print(f"device={args.device} threads={args.threads} repeats={args.repeats}")
    print(f"{'net':<8}{'batch':>7}{first:>12}{second:>11}{'ratio':>8}")
    for label, side, config_name in PRESET_NETS:
        net = build_preset_net(side, preset_network_config(config_name))
        for batch_size in args.batches:
            rates = {name: [] for name in settings}
            for _ in range(args.repeats):
                for name, (channels_last, precision) in settings.items():
                    rates[name].append(measure_throughput(
                        net, batch_size, args.device, args.seconds, clock="cpu",
                        channels_last=channels_last, precision=precision))
            before, after = (float(np.median(rates[name])) for name in settings)
            print(f"{label:<8}{batch_size:>7}{before:>12.0f}{after:>11.0f}"
                  f"{after / before:>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
