"""Search overhead with a free evaluator: positions/s of the batched search alone.

    python -m benchmarks.bench_search --sides 4 6 --batch-sizes 64 256

Every evaluate_fn call returns uniform logits and value 0 at no cost, so the figure is what
the search and the engine cost per evaluated position; a network slower than this leaves the
search a small share of the time. Both wall-clock and process CPU time are reported (the CPU
figure is steadier on a shared machine), and the share of the time spent inside the engine.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.evaluation import UniformEvaluator
from catena_zero.mcts.search import search
from catena_zero.rules import Engine, GameState, Rules


@dataclass
class OverheadResult:
    side: int
    batch_size: int
    algorithm: str
    num_simulations: int
    positions: int  # positions evaluated (free evaluator calls x batch)
    wall_s: float  # wall-clock seconds of the searches
    cpu_s: float  # process CPU seconds of the searches
    engine_cpu_s: float  # CPU seconds inside Engine.step / legal_actions / result

    @property
    def positions_per_s(self) -> float:
        return self.positions / self.wall_s

    @property
    def positions_per_cpu_s(self) -> float:
        return self.positions / self.cpu_s

    @property
    def ms_per_simulation(self) -> float:
        """CPU milliseconds per simulation (one leaf per game of the batch)."""
        return 1000.0 * self.cpu_s * self.batch_size / self.positions


class _TimedEngine:
    """Engine proxy that adds up the CPU time of the engine calls the search makes."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.rules = engine.rules
        self.cpu_s = 0.0

    def _timed(self, name: str, *args):
        start = time.process_time()
        try:
            return getattr(self.engine, name)(*args)
        finally:
            self.cpu_s += time.process_time() - start

    def step(self, state: GameState, actions) -> None:
        return self._timed("step", state, actions)

    def legal_actions(self, state: GameState):
        return self._timed("legal_actions", state)

    def result(self, state: GameState):
        return self._timed("result", state)


def midgame_positions(engine: Engine, batch_size: int, rng: np.random.Generator) -> GameState:
    """Games advanced by random moves to about a quarter of the board filled (none over)."""
    states = engine.new_games(batch_size)
    plies = engine.rules.board.num_cells // 4
    for _ in range(plies):
        engine.step(states, engine.random_actions(states, rng))
    return states.take(np.flatnonzero(~states.terminal)) if states.terminal.any() else states


def measure_search_overhead(
    side: int,
    batch_size: int,
    algorithm: str = "gumbel",
    num_simulations: int = 32,
    repeats: int = 3,
    seed: int = 0,
) -> OverheadResult:
    """Run `repeats` searches of a mid-game batch with a free evaluator and time them."""
    engine = Engine(Rules(side=side))
    rng = np.random.default_rng(seed)
    states = midgame_positions(engine, batch_size, rng)
    config = SearchConfig(algorithm=algorithm, num_simulations=num_simulations)
    evaluator = UniformEvaluator(engine.num_actions)
    timed = _TimedEngine(engine)
    search(timed, states, evaluator, config, rng)  # warm-up (allocations, caches)
    evaluator.positions, timed.cpu_s = 0, 0.0
    wall_start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        search(timed, states, evaluator, config, rng)
    return OverheadResult(
        side=side,
        batch_size=int(states.batch_size),
        algorithm=algorithm,
        num_simulations=num_simulations,
        positions=evaluator.positions,
        wall_s=time.perf_counter() - wall_start,
        cpu_s=time.process_time() - cpu_start,
        engine_cpu_s=timed.cpu_s,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", type=int, nargs="+", default=[4, 6])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--algorithms", nargs="+", default=["gumbel", "puct"])
    parser.add_argument("--simulations", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(
        f"{'side':>4} {'batch':>5} {'algorithm':>9} {'sims':>4} {'pos/s wall':>11} "
        f"{'pos/CPU-s':>10} {'CPU ms/sim':>10} {'engine %':>8}"
    )
    for side in args.sides:
        for batch_size in args.batch_sizes:
            for algorithm in args.algorithms:
                result = measure_search_overhead(
                    side, batch_size, algorithm, args.simulations, args.repeats, args.seed
                )
                engine_share = 100.0 * result.engine_cpu_s / result.cpu_s
                print(
                    f"{side:>4} {result.batch_size:>5} {algorithm:>9} {args.simulations:>4} "
                    f"{result.positions_per_s:>11.0f} {result.positions_per_cpu_s:>10.0f} "
                    f"{result.ms_per_simulation:>10.2f} {engine_share:>7.0f}%",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
