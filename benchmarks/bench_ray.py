"""Self-play throughput of the Ray runtime with 1, 2, ... self-play actors, side by side.

    python -m benchmarks.bench_ray                       # side 4 preset net, actors 1 and 2
    python -m benchmarks.bench_ray --actors 1 2 4 --shards 12 --json runs/bench_ray.json

Each configuration runs the real training loop (`runtime=ray`: actors, learner, shards,
checkpoints) into a temporary run directory for a fixed number of shards. Actor start-up is
excluded: the clock starts when the driver submits its first task. Printed: positions/s
(self-play positions generated per wall second, the learner training alongside), games/s and
the scaling ratio against one actor; medians over `--repeats`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import ray

from catena_zero.data.atomic import atomic_write_text
from catena_zero.mcts.config import SearchConfig
from catena_zero.network.config import NetworkConfig
from catena_zero.pipeline.config import LoopConfig, TrainLoopConfig
from catena_zero.pipeline.ray import RayConfig
from catena_zero.pipeline.ray.runtime import start_driver
from catena_zero.rules import Rules
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.train.config import TrainConfig


def bench_config(run_dir: Path, side: int, shards: int, games: int, simulations: int
                 ) -> TrainLoopConfig:
    return TrainLoopConfig(
        rules=Rules(side=side),
        network=NetworkConfig(blocks=4, channels=32),
        search=SearchConfig(algorithm="gumbel", num_simulations=simulations,
                            max_considered_actions=8),
        selfplay=SelfPlayConfig(games_in_batch=games, full_simulations=simulations,
                                cheap_simulations=max(1, simulations // 4),
                                full_search_probability=0.3, fair_komi_every=1000),
        train=TrainConfig(batch_size=128, steps_per_iteration=4, warmup_steps=0,
                          min_window_samples=0, window_samples=20000),
        loop=LoopConfig(run_dir=str(run_dir), iterations=shards, games_per_iteration=games,
                        device="cpu", progress=False, checkpoint_every=max(1, shards // 2)),
    )


def run_once(actors: int, args) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench_ray_") as directory:
        config = bench_config(Path(directory), args.side, args.shards, args.games,
                              args.simulations)
        driver = start_driver(config, RayConfig(num_selfplay_actors=actors))
        try:
            start = time.perf_counter()
            summary = driver.run()
            seconds = time.perf_counter() - start
        finally:
            driver.shutdown()
    counters = summary["counters"]
    return {"actors": actors, "seconds": seconds,
            "positions_per_s": counters["positions"] / seconds,
            "games_per_s": counters["games"] / seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--side", type=int, default=4)
    parser.add_argument("--shards", type=int, default=8, help="shards per run (one per task)")
    parser.add_argument("--games", type=int, default=32, help="games per shard")
    parser.add_argument("--simulations", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    cpus = max(os.cpu_count() or 2, max(args.actors) + 1)
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    rows = []
    try:
        for actors in args.actors:
            runs = [run_once(actors, args) for _ in range(args.repeats)]
            rows.append({key: statistics.median(run[key] for run in runs) for key in runs[0]})
    finally:
        ray.shutdown()
    base = rows[0]["positions_per_s"]
    print(f"Ray self-play, side {args.side}, 4x32 net, {args.simulations} sims, "
          f"{args.games} games/shard, {args.shards} shards, {os.cpu_count()} CPUs")
    print(f"{'actors':>6} {'positions/s':>12} {'games/s':>9} {'scaling':>8}")
    for row in rows:
        row["scaling"] = row["positions_per_s"] / base
        print(f"{int(row['actors']):>6} {row['positions_per_s']:>12.1f} "
              f"{row['games_per_s']:>9.2f} {row['scaling']:>7.2f}x")
    if args.json:
        report = {"rows": rows, "args": {k: str(v) for k, v in vars(args).items()},
                  "cpus": os.cpu_count(), "python": sys.version.split()[0]}
        atomic_write_text(args.json, json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
