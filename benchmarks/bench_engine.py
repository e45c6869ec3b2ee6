"""Random-playout throughput of the batched numpy engine vs a one-game pure-Python engine.

    python -m benchmarks.bench_engine              # full table, sides 6 and 10
    python -m benchmarks.bench_engine --quick      # seconds, for tests / smoke checks
    python -m benchmarks.bench_engine --json bench.json

Single-threaded (BLAS/OpenMP threads pinned to 1). Games that finish are restarted in place,
so a batch stays full. Rates use the process CPU time (one core, robust on a shared machine);
wall-clock rates are reported beside them. Each figure is the median over repeats; "best" is
the fastest repeat (the least disturbed one on a shared machine).
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.python_engine import PythonGame  # noqa: E402
from catena_zero.data.atomic import atomic_write_text  # noqa: E402
from catena_zero.rules import Engine, Rules  # noqa: E402

FORMAT_VERSION = 1


def bench_batched(rules: Rules, batch: int, seconds: float, repeats: int, seed: int) -> dict:
    """Median moves/s and games/s of random playouts at one batch size."""
    engine = Engine(rules)
    rng = np.random.default_rng(seed)
    state = engine.new_games(batch)
    restart_at = max(1, batch // 32)  # restarting a few games at once is cheaper

    def run(min_seconds: float):
        moves = games = 0
        cpu0, wall0 = time.process_time(), time.perf_counter()
        while True:
            for _ in range(8):
                actions = engine.random_actions(state, rng)
                moves += int(np.count_nonzero(actions >= 0))
                engine.step(state, actions)
                finished = np.flatnonzero(state.terminal)
                if finished.size >= restart_at:
                    games += finished.size
                    engine.reset_games(state, finished)
            cpu = time.process_time() - cpu0
            if cpu >= min_seconds:
                return moves, games, cpu, time.perf_counter() - wall0

    run(min(0.2, seconds))  # warm-up: reach the steady mix of game stages
    samples = [run(seconds) for _ in range(repeats)]
    return summarise(samples)


def bench_python(rules: Rules, seconds: float, repeats: int, seed: int) -> dict:
    """Median moves/s and games/s of the one-game pure-Python engine."""
    rng = random.Random(seed)

    def run(min_seconds: float):
        moves = games = 0
        cpu0, wall0 = time.process_time(), time.perf_counter()
        while time.process_time() - cpu0 < min_seconds:
            game = PythonGame(rules)
            while not game.terminal:
                game.step(game.random_action(rng))
                moves += 1
            games += 1
        return moves, games, time.process_time() - cpu0, time.perf_counter() - wall0

    samples = [run(seconds) for _ in range(repeats)]
    return summarise(samples)


def summarise(samples) -> dict:
    return {
        "moves_per_s": statistics.median(m / cpu for m, _, cpu, _ in samples),
        "best_moves_per_s": max(m / cpu for m, _, cpu, _ in samples),
        "games_per_s": statistics.median(g / cpu for _, g, cpu, _ in samples),
        "wall_moves_per_s": statistics.median(m / wall for m, _, _, wall in samples),
        "repeats": len(samples),
        "moves": int(sum(m for m, _, _, _ in samples)),
    }


def machine_info() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average": load,
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


def write_json(path: Path, payload: dict) -> None:
    atomic_write_text(path, json.dumps(payload, indent=2))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", type=int, nargs="+", default=[6, 10])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64, 1024, 4096])
    parser.add_argument("--game-type", default="komi")
    parser.add_argument("--scoring", default="standard")
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny run for tests")
    parser.add_argument("--json", type=Path, default=None, help="write results here")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.repeats = 0.05, 1
        args.batches = [b for b in args.batches if b <= 64] or [1]

    rows = []
    for side in args.sides:
        rules = Rules(side, args.game_type, args.scoring)
        python = bench_python(rules, args.seconds, args.repeats, args.seed)
        rows.append({"side": side, "engine": "python", "batch": 1, **python})
        for batch in args.batches:
            result = bench_batched(rules, batch, args.seconds, args.repeats, args.seed)
            result["ratio_to_python"] = result["moves_per_s"] / python["moves_per_s"]
            rows.append({"side": side, "engine": "numpy", "batch": batch, **result})

    print(f"random playouts, {args.game_type}/{args.scoring}, one thread, CPU-time rates, "
          f"median of {args.repeats}")
    print(f"{'side':>4} {'engine':>7} {'batch':>6} {'moves/s':>11} {'best':>11} {'games/s':>9} "
          f"{'wall moves/s':>13} {'x python':>9}")
    for row in rows:
        ratio = f"{row['ratio_to_python']:9.1f}" if "ratio_to_python" in row else f"{'':>9}"
        print(f"{row['side']:>4} {row['engine']:>7} {row['batch']:>6} {row['moves_per_s']:>11,.0f} "
              f"{row['best_moves_per_s']:>11,.0f} {row['games_per_s']:>9,.0f} "
              f"{row['wall_moves_per_s']:>13,.0f} {ratio}")
    payload = {
        "format_version": FORMAT_VERSION,
        "benchmark": "random_playouts",
        "game_type": args.game_type,
        "scoring": args.scoring,
        "seconds_per_repeat": args.seconds,
        "machine": machine_info(),
        "rows": rows,
    }
    print(f"machine: {payload['machine']}")
    if args.json is not None:
        write_json(args.json, payload)
        print(f"wrote {args.json}")
    return payload


if __name__ == "__main__":
    main()
