"""catena-zero solve: the exact minimax margin of a small board, its fair komi, first moves.

    catena-zero solve --side 2
    catena-zero solve --side 3 rules=nokomi_standard
    catena-zero solve --side 3 rules.game_type=double rules.scoring=longest use_cache=false

Prints the exact margin at komi 0 (Black's view, button half point included), the exact
fair komi (Black wins exactly when komi < fair komi), the value of every first move, the
positions stored, time and peak memory; caches the result in cache_path (JSON). While it
solves, a line on stderr every 10 s tells the nodes searched, positions stored, rate and
peak memory (side 5 takes minutes).
"""

from __future__ import annotations

import json
import time

from catena_zero.cli.common import compose, rules_from_config, to_dataclass
from catena_zero.komi.config import SolveConfig
from catena_zero.komi.exact import SolveProgress, format_report, peak_rss_mb, solve_exact
from catena_zero.mcts.solver import SolverBudgetExceeded

GROUPS = ("board", "rules")


def main(overrides: list[str]) -> int:
    config = compose("solve", overrides)
    rules = rules_from_config(config)
    solve_config = to_dataclass(SolveConfig, {k: config[k] for k in config if k not in GROUPS})
    started = time.perf_counter()
    try:
        report = solve_exact(rules, solve_config, SolveProgress())
    except SolverBudgetExceeded as error:
        print(f"catena-zero solve: {rules} did not fit: {error} after "
              f"{time.perf_counter() - started:.0f} s, peak RSS {peak_rss_mb():.0f} MB")
        return 1
    print(format_report(report))
    print(json.dumps({k: report[k] for k in ("margin", "fair_komi", "seconds", "peak_rss_mb")}))
    return 0
