"""One position at a time: simulations per second of a single-game search, by leaves per
network call and torch threads, measured side by side.

    python -m benchmarks.bench_single_search --side 6 --leaves 1 16 --threads 1 2

The bundled model of the side searches the same positions (random openings of 0-30 plies,
seeded) with every setting; settings take turns position by position, so drift on a shared
machine touches them alike, and the figures to compare are the ratios to the first setting.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import torch

from catena_zero.export.evaluator import model_file_evaluator
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.search import search
from catena_zero.network import INFERENCE_PRECISIONS
from catena_zero.play.bundled import ModelLibrary
from catena_zero.rules import Engine, Rules


def positions(engine: Engine, count: int, seed: int):
    """`count` single-game states after random openings of 0..30 plies (not finished)."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        state = engine.new_games(1)
        for _ in range(int(rng.integers(0, 31))):
            engine.step(state, engine.random_actions(state, rng))
            if state.terminal[0]:
                break
        if not state.terminal[0]:
            found.append(state)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=6)
    parser.add_argument("--simulations", type=int, default=128)
    parser.add_argument("--leaves", type=int, nargs="+", default=[1, 4, 8, 16, 32])
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    parser.add_argument("--algorithm", default="gumbel")
    parser.add_argument("--positions", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--precision", default="float32", choices=INFERENCE_PRECISIONS,
                        help="the network's arithmetic (auto: bfloat16 on AMX/AVX512-BF16)")
    args = parser.parse_args(argv)
    rules = Rules(side=args.side)
    evaluator = model_file_evaluator(ModelLibrary().get(rules), Engine(rules), args.precision)
    engine = evaluator.engine
    states = positions(engine, args.positions, args.seed)
    settings = list(itertools.product(args.threads, args.leaves))
    seconds = {setting: 0.0 for setting in settings}
    simulations = {setting: 0 for setting in settings}
    for threads, leaves in settings:  # warm-up: the network's first runs at each batch shape
        torch.set_num_threads(threads)
        config = SearchConfig(algorithm=args.algorithm, num_simulations=args.simulations,
                              gumbel_scale=0.0, dirichlet_fraction=0.0, leaves_per_call=leaves)
        search(engine, states[0], evaluator, config, np.random.default_rng(0))
    for state in states:
        for threads, leaves in settings:
            torch.set_num_threads(threads)
            config = SearchConfig(algorithm=args.algorithm, num_simulations=args.simulations,
                                  gumbel_scale=0.0, dirichlet_fraction=0.0,
                                  leaves_per_call=leaves)
            start = time.perf_counter()
            output = search(engine, state, evaluator, config, np.random.default_rng(0))
            seconds[threads, leaves] += time.perf_counter() - start
            simulations[threads, leaves] += int(output.visit_counts.sum())
    base = simulations[settings[0]] / seconds[settings[0]]
    print(f"side {args.side}, {args.algorithm} {args.simulations} simulations, "
          f"{len(states)} positions, model file at precision {args.precision}")
    print("| threads | leaves per call | simulations/s | ms per move | ratio |")
    print("|---|---|---|---|---|")
    for setting in settings:
        rate = simulations[setting] / seconds[setting]
        print(f"| {setting[0]} | {setting[1]} | {rate:.0f} | "
              f"{1000 * seconds[setting] / len(states):.0f} | {rate / base:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
