"""Play speed: simulations per second of a model player's search at each think level, float32
against bfloat16 side by side.

    python -m benchmarks.bench_play_speed --side 6 --seconds 3

The player of `catena-zero play` / `serve` / `gtp` (`ModelPlayer`, its default search
settings, the bundled general model unless `--model`) searches random openings of 0-30 plies
(seeded, unfinished) at each think level of `catena_zero.play.time_control.THINK_LEVELS`:
the level's simulations, or fewer where its seconds a move (or `--seconds`, where that is
shorter: the strong level's 10 s a move makes a full run long) would not reach them at the
float32 rate measured first, as a player plans a timed move. Both precisions search the
same simulations on the same positions, taking turns position by position, so drift on a
shared machine touches them alike; the figure to compare is the bfloat16 / float32 ratio.
Times are CPU seconds of this process (`time.process_time`), so other work on a shared core
counts against neither. The header says which precision `precision=auto` picks on this CPU.
"""

from __future__ import annotations

import argparse
import platform
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from benchmarks.bench_single_search import positions
from catena_zero.mcts.search import search
from catena_zero.network.device import cpu_has_fast_bfloat16
from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.play.time_control import THINK_LEVELS
from catena_zero.rules import Rules

PRECISIONS = ("float32", "bfloat16")


@dataclass
class Measured:
    """One (think level, precision): the searches' simulations and CPU seconds added up."""

    level: str
    precision: str
    simulations: int = 0
    seconds: float = 0.0
    moves: int = 0

    @property
    def rate(self) -> float:
        return self.simulations / self.seconds if self.seconds > 0 else float("nan")


def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux), else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def timed_search(player: ModelPlayer, rules: Rules, state, simulations: int,
                 seed: int) -> tuple[int, float]:
    """(simulations done, CPU seconds) of one search of `state` with the player's settings."""
    evaluator = player.evaluator(rules)
    config = player.config.search_config(simulations)
    start = time.process_time()
    output = search(evaluator.engine, state, evaluator, config, np.random.default_rng(seed))
    return int(output.visit_counts.sum()), time.process_time() - start


def measure(rules: Rules, library: ModelLibrary, levels: list[str], count: int,
            seconds: float | None, threads: int = 0, seed: int = 0,
            settings: dict | None = None) -> list[Measured]:
    """Every level's searches at both precisions on the same `count` positions; `settings`
    are PlayerConfig fields that differ from the default player's (none: the default)."""
    settings = settings or {}
    players = {precision: ModelPlayer(library, PlayerConfig(precision=precision,
                                                            threads=threads, **settings))
               for precision in PRECISIONS}
    states = positions(players["float32"].evaluator(rules).engine, count, seed)
    for player in players.values():  # the model, its bfloat16 copy, the first calls' shapes
        timed_search(player, rules, states[0], 64, seed)
    done, taken = timed_search(players["float32"], rules, states[0], 64, seed)
    rate = done / max(taken, 1e-6)  # float32 simulations per CPU second, to plan with
    results = {(level, precision): Measured(level, precision)
               for level in levels for precision in PRECISIONS}
    for level in levels:
        level_seconds, level_simulations = THINK_LEVELS[level]
        bound = level_seconds if seconds is None else min(level_seconds, seconds)
        simulations = max(1, min(level_simulations, int(rate * bound)))
        for state in states:
            for precision in PRECISIONS:
                done, taken = timed_search(players[precision], rules, state, simulations, seed)
                item = results[level, precision]
                item.simulations += done
                item.seconds += taken
                item.moves += 1
    return list(results.values())


def table(results: list[Measured]) -> list[str]:
    """The Markdown table: one row per level and precision, the ratio to float32."""
    lines = ["| think | precision | simulations a move | simulations/s (CPU) | CPU ms per move "
             "| ratio to float32 |", "|---|---|---|---|---|---|"]
    base = {item.level: item.rate for item in results if item.precision == "float32"}
    for item in results:
        lines.append(f"| {item.level} | {item.precision} | "
                     f"{item.simulations / max(item.moves, 1):.0f} | {item.rate:.0f} | "
                     f"{1000 * item.seconds / max(item.moves, 1):.0f} | "
                     f"{item.rate / base[item.level]:.2f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=6)
    parser.add_argument("--model", default=None, help="model file (default: the bundled one)")
    parser.add_argument("--levels", nargs="+", choices=list(THINK_LEVELS),
                        default=list(THINK_LEVELS))
    parser.add_argument("--seconds", type=float, default=None,
                        help="most seconds a move (default: each level's own)")
    parser.add_argument("--positions", type=int, default=4)
    parser.add_argument("--threads", type=int, default=0, help="0: every core this may use")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rollout-mix", type=float, default=None,
                        help="the player's rollout_mix (default: the player's own)")
    parser.add_argument("--rollout-playouts", type=int, default=None,
                        help="random playouts a leaf (default: the player's own)")
    args = parser.parse_args(argv)
    if args.seconds is not None and not 0 < args.seconds < float("inf"):
        parser.error(f"--seconds must be a number > 0, got {args.seconds!r}")
    if args.positions < 1 or args.threads < 0:
        parser.error("--positions must be >= 1 and --threads >= 0")
    if args.rollout_mix is not None and not 0 <= args.rollout_mix <= 1:
        parser.error(f"--rollout-mix must be in [0, 1], got {args.rollout_mix!r}")
    if args.rollout_playouts is not None and args.rollout_playouts < 1:
        parser.error(f"--rollout-playouts must be >= 1, got {args.rollout_playouts}")
    rules = Rules(side=args.side)
    library = ModelLibrary(args.model)
    settings = {field: value for field, value in (("rollout_mix", args.rollout_mix),
                                                  ("rollout_mix_playouts", args.rollout_playouts))
                if value is not None}
    results = measure(rules, library, args.levels, args.positions, args.seconds,
                      args.threads, args.seed, settings)
    auto = "bfloat16" if cpu_has_fast_bfloat16() else "float32"
    bound = f"at most {args.seconds:g} s a move" if args.seconds else "each level's own time"
    player = PlayerConfig(**settings)  # what the searches used, defaults filled in
    playouts = player.rollout_mix_playouts
    print(f"side {args.side}, {library.describe(rules)}, {args.positions} positions, "
          f"{bound}, {torch.get_num_threads()} thread(s), rollout_mix {player.rollout_mix:g} "
          f"({playouts} playout{'s' if playouts > 1 else ''} a leaf); {cpu_name()}: "
          f"precision=auto plays {auto}")
    print("\n".join(table(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
