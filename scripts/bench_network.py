"""Raw policy-value net throughput (positions/s) on random inputs.

The figure is the hardware bound (b) of the self-play benchmark: how fast the
network alone evaluates a batch, without search, engine or data handling.

    python scripts/bench_network.py                  # side4 4x32 and side6 6x64, batch 1/64/256
    python scripts/bench_network.py --threads 2 --seconds 3 --batches 1 64

`measure_throughput(net, batch_size, ...)` is the reusable function.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from catena_zero.network import InferenceModel, NetworkConfig, PolicyValueNet, count_parameters
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, get_board

# (label, side, blocks, channels): the side4 and side6 preset networks.
PRESET_NETS = (("side4", 4, 4, 32), ("side6", 6, 6, 64))


def build_preset_net(side: int, blocks: int, channels: int) -> PolicyValueNet:
    board = get_board(side)
    return PolicyValueNet(
        NUM_PLANES,
        NUM_GLOBALS,
        board.grid_size,
        board.cell_grid_index,
        NetworkConfig(blocks=blocks, channels=channels),
    )


def measure_throughput(
    net: PolicyValueNet,
    batch_size: int,
    device: str = "cpu",
    seconds: float = 2.0,
    min_calls: int = 5,
    seed: int = 0,
) -> float:
    """Positions/s of `InferenceModel(net, device)` on random 0/1 planes at `batch_size`.

    Runs a short warm-up, then calls the model until `seconds` have passed (at least
    `min_calls` calls) and returns batch_size * calls / elapsed.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    rng = np.random.default_rng(seed)
    size = net.grid_size
    planes = (rng.random((batch_size, net.num_planes, size, size)) < 0.3).astype(np.uint8)
    globals_ = rng.random((batch_size, net.num_globals), dtype=np.float32)
    model = InferenceModel(net, device)
    for _ in range(3):
        model(planes, globals_)
    calls = 0
    start = time.perf_counter()
    while True:
        model(planes, globals_)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and calls >= min_calls:
            return batch_size * calls / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, auto")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per point")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64, 256])
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"device={args.device} threads={args.threads} planes={NUM_PLANES} globals={NUM_GLOBALS}")
    print(f"{'net':<8}{'side':>5}{'blocks':>7}{'chan':>6}{'params':>9}{'batch':>7}{'pos/s':>11}")
    for label, side, blocks, channels in PRESET_NETS:
        net = build_preset_net(side, blocks, channels)
        parameters = count_parameters(net)
        for batch_size in args.batches:
            rate = measure_throughput(net, batch_size, args.device, args.seconds)
            print(
                f"{label:<8}{side:>5}{blocks:>7}{channels:>6}{parameters:>9}"
                f"{batch_size:>7}{rate:>11.0f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
