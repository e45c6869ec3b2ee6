"""Forward time of the size-general net on padded mixed batches against one-side batches.

A mixed batch of several board sides runs as one padded call on the largest side's grid;
the same positions could instead run as one call per side. Timed with the float32
InferenceModel (eval, inference mode) on observed positions of random games:

    python -m benchmarks.bench_padding                    # b4c32, batch 256, side 6 vs 4/6/8
    python -m benchmarks.bench_padding --threads 2 --repeats 7 --network b6c64

Times per call are the best of `--repeats` means (wall and this process's CPU time; the
ratio is of CPU time, steadier on a shared machine). Lines: side 6 on its own 11x11 grid;
the same side-6 positions padded into the mix's 15x15 grid (the cost of padding alone); the
4/6/8 mix padded into one call; the mix's positions as one call per side.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from benchmarks.bench_network import preset_network_config
from catena_zero.network import InferenceModel, PolicyValueNet, pad_planes
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Engine, Rules, observe


def observed(side: int, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(planes uint8 [count, P, H, H], globals [count, G]) after a third of the board's
    cells in random moves."""
    engine = Engine(Rules(side))
    rng = np.random.default_rng(seed)
    states = engine.new_games(count, komi=0)
    for _ in range(engine.board.num_cells // 3):
        engine.step(states, engine.random_actions(states, rng))
    planes, globals_ = observe(engine, states)
    return planes.astype(np.uint8), globals_


def seconds_per_call(call, repeats: int, calls: int) -> tuple[float, float]:
    """(wall, CPU) seconds per call: the best over `repeats` of the mean of `calls` calls,
    after a warm-up. This process's CPU time varies less than wall time when other jobs
    share the machine (and equals it with one thread on an idle one)."""
    call()
    best_wall = best_cpu = float("inf")
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            call()
        best_wall = min(best_wall, (time.perf_counter() - start) / calls)
        best_cpu = min(best_cpu, (time.process_time() - start_cpu) / calls)
    return best_wall, best_cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--network", default="b4c32", help="configs/network/<name>.yaml")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--side", type=int, default=6)
    parser.add_argument("--mix", type=int, nargs="+", default=[4, 6, 8])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    config = preset_network_config(args.network)
    model = InferenceModel(PolicyValueNet(NUM_PLANES, NUM_GLOBALS, config), "cpu",
                           precision="float32")
    grid = 2 * max(args.mix + [args.side]) - 1
    counts = np.diff(np.linspace(0, args.batch, len(args.mix) + 1).round().astype(int))
    parts = {side: observed(side, int(count), seed=side)
             for side, count in zip(args.mix, counts, strict=True)}
    single_planes, single_globals = observed(args.side, args.batch, seed=99)
    mixed_planes = np.concatenate([pad_planes(planes, grid) for planes, _ in parts.values()])
    mixed_globals = np.concatenate([features for _, features in parts.values()])
    mixed_sides = np.repeat(args.mix, counts)
    padded_single = pad_planes(single_planes, grid)
    single_sides = np.full(args.batch, args.side)
    timings = {
        f"side {args.side} alone ({2 * args.side - 1}x{2 * args.side - 1})":
            lambda: model(single_planes, single_globals),
        f"side {args.side} padded into {grid}x{grid}":
            lambda: model(padded_single, single_globals, sides=single_sides),
        f"mix {'/'.join(map(str, args.mix))} padded into {grid}x{grid}":
            lambda: model(mixed_planes, mixed_globals, sides=mixed_sides),
        f"mix {'/'.join(map(str, args.mix))} as {len(args.mix)} one-side calls":
            lambda: [model(planes, features) for planes, features in parts.values()],
    }
    print(f"network={args.network} batch={args.batch} threads={args.threads} "
          f"torch={torch.__version__}")
    print(f"{'':40s} {'wall ms':>8s} {'cpu ms':>8s} {'pos/cpu-s':>10s} {'cpu ratio':>9s}")
    reference = None
    for label, call in timings.items():
        wall, cpu = seconds_per_call(call, args.repeats, args.calls)
        reference = reference or cpu
        print(f"{label:40s} {1000 * wall:8.1f} {1000 * cpu:8.1f} {args.batch / cpu:10.0f} "
              f"{cpu / reference:9.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
