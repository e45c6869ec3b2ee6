"""Exact solutions of small boards: the margin, the fair komi, the first moves; a JSON cache.

Why solving at komi 0 is enough for standard and quadratic scoring: komi only subtracts
a constant from the result margin (the button's half point is part of the margin and its
holder is decided by play, not by komi), so the minimax margin at komi k is the komi-0
margin minus k, and Black wins at komi k exactly when the komi-0 margin exceeds k. The
exact fair komi is that margin. Longest-ribbon scoring adds komi to White's longest
ribbon, which is not a shift of the margin, so every komi of the range is solved.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import TextIO

from catena_zero.data.atomic import atomic_write_text
from catena_zero.komi.config import SolveConfig
from catena_zero.mcts.solver import (
    PROGRESS_NODES,
    ExactSolver,
    ProgressFn,
    SolverTables,
    enum_value,
)
from catena_zero.rules import Rules

FORMAT_VERSION = 1

# The exact fair komis the solver found (docs/results/2026-11-29-komi-exact-solutions.md),
# by track key: what `exact_fair_komi` answers without solving again. Black wins exactly
# when komi < the value; tracks without a fair komi in their range are not listed.
EXACT_FAIR_KOMI: dict[str, float] = {
    "side2-komi-standard": 2.5,
    "side2-komi-quadratic": 8.5,
    "side3-komi-standard": 10.5,
    "side3-komi-quadratic": 120.5,
}


def solver_for(rules: Rules, komi: int = 0, max_positions: int | None = None,
               progress: ProgressFn | None = None,
               progress_every: int = PROGRESS_NODES) -> ExactSolver:
    board = rules.board
    tables = SolverTables(board.neighbours, board.symmetries)
    return ExactSolver(tables, rules.game_type, rules.scoring, komi, max_positions,
                       progress=progress, progress_every=progress_every)


class SolveProgress:
    """Lines on `stream` while a board is solved: one at the start, then at most one every
    `interval` seconds with the nodes searched, the positions stored, the rate and the peak
    memory (a side-5 solve runs for minutes). Pass it as a solver's `progress`; `solving`
    names the solve that follows (one per komi in longest scoring)."""

    def __init__(self, stream: TextIO | None = None, interval: float = 10.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.interval = float(interval)
        self.label = ""
        self.started = self.last = time.perf_counter()
        self.lines = 0

    def solving(self, label: str) -> None:
        self.label = label
        self.write(f"solve {label}: started")

    def __call__(self, nodes: int, positions: int) -> None:
        now = time.perf_counter()
        if now - self.last < self.interval:
            return
        self.last = now
        seconds = now - self.started
        self.write(f"solve {self.label}: {nodes:,} nodes, {positions:,} positions, "
                   f"{nodes / max(seconds, 1e-9):,.0f} nodes/s, peak RSS "
                   f"{peak_rss_mb():.0f} MB, {seconds:.0f} s")

    def write(self, line: str) -> None:
        self.lines += 1
        print(line, file=self.stream, flush=True)


def track_key(rules: Rules) -> str:
    return f"side{rules.side}-{enum_value(rules.game_type)}-{enum_value(rules.scoring)}"


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def solve_exact(rules: Rules, config: SolveConfig | None = None,
                progress: SolveProgress | None = None,
                progress_every: int = PROGRESS_NODES) -> dict:
    """Solve one board and rules exactly; returns the JSON-ready report (see module doc).
    `progress` is told how every solve of it advances (every `progress_every` nodes)."""
    config = config or SolveConfig()
    if config.use_cache and config.cache_path:
        cached = load_cache(config.cache_path).get(track_key(rules))
        if cached is not None and (cached.get("move_values") or not config.move_values):
            return cached
    started, cpu_started = time.perf_counter(), time.process_time()
    game_type, scoring = enum_value(rules.game_type), enum_value(rules.scoring)
    board = rules.board
    if progress is not None:
        progress.solving(f"{track_key(rules)} at komi 0")
    solver = solver_for(rules, 0, config.max_positions, progress, progress_every)
    margin = solver.value()
    positions, nodes = len(solver.table), solver.nodes
    report = {
        "format_version": FORMAT_VERSION,
        "side": rules.side,
        "game_type": game_type,
        "scoring": scoring,
        "margin": margin,
    }
    if config.move_values:
        values = solver.action_values()
        named = {board.action_name(action): value for action, value in values.items()}
        report["move_values"] = named
        positions, nodes = len(solver.table), solver.nodes
        if game_type == "nokomi":
            # The swap: the second player takes whichever colour the stone favours, so the
            # first player's best opening is the one nearest to a zero margin.
            closest = min(abs(value) for value in named.values())
            report["optimal_moves"] = [m for m, v in named.items() if abs(v) == closest]
        else:
            report["optimal_moves"] = [m for m, v in named.items() if v == margin]
    fair, extra_solves = fair_komi_report(rules, margin, config.max_positions, progress,
                                          progress_every)
    report.update(fair)
    for extra_positions, extra_nodes in extra_solves:
        positions, nodes = max(positions, extra_positions), nodes + extra_nodes
    report.update({
        "positions": positions,
        "nodes": nodes,
        "seconds": round(time.perf_counter() - started, 3),
        "cpu_seconds": round(time.process_time() - cpu_started, 3),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    })
    if config.cache_path:
        store_in_cache(config.cache_path, track_key(rules), report)
    return report


def fair_komi_report(rules: Rules, margin: float, max_positions: int | None,
                     progress: SolveProgress | None = None,
                     progress_every: int = PROGRESS_NODES) -> tuple[dict, list[tuple[int, int]]]:
    """(fair_komi and how it was obtained, [(positions, nodes)] of any extra solves).

    fair_komi is None where the game type has no komi or Black wins at every komi."""
    game_type, scoring = enum_value(rules.game_type), enum_value(rules.scoring)
    if game_type != "komi":
        return {"fair_komi": None,
                "fair_komi_note": f"game type {game_type} has no komi; margin is the value"}, []
    low, high = rules.komi_range
    if scoring != "longest":
        wins_up_to = min(high, int(margin - 0.5)) if margin > low else None
        return {"fair_komi": margin, "black_wins_up_to_komi": wins_up_to,
                "fair_komi_note": "Black wins exactly when komi < fair_komi"}, []
    margins, solvers = {}, []
    for komi in range(low, high + 1):
        if progress is not None:
            progress.solving(f"{track_key(rules)} at komi {komi}")
        solver = solver_for(rules, komi, max_positions, progress, progress_every)
        margins[komi] = solver.value()
        solvers.append((len(solver.table), solver.nodes))
    black_wins = [komi for komi, value in margins.items() if value > 0]
    report = {"margins_by_komi": {str(k): v for k, v in margins.items()},
              "black_wins_up_to_komi": max(black_wins) if black_wins else None}
    monotone = black_wins == list(range(low, low + len(black_wins)))
    if not monotone:
        report.update(fair_komi=None, fair_komi_note="outcome is not monotone in komi")
    elif len(black_wins) == high - low + 1:
        report.update(fair_komi=None, fair_komi_note=f"Black wins at every komi {low}..{high}")
    else:
        report.update(fair_komi=low + len(black_wins) - 0.5,
                      fair_komi_note="Black wins exactly when komi < fair_komi")
    return report, solvers


def exact_fair_komi(rules: Rules, cache_path: str | Path | None = None) -> float | None:
    """The exact fair komi of a track: from EXACT_FAIR_KOMI, else from the solve cache at
    `cache_path` (when given and readable); None when neither knows it. Solves nothing."""
    key = track_key(rules)
    if key in EXACT_FAIR_KOMI:
        return EXACT_FAIR_KOMI[key]
    if not cache_path:
        return None
    try:
        report = load_cache(cache_path).get(key) or {}
    except (OSError, ValueError):
        return None
    value = report.get("fair_komi")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def load_cache(path: str | Path) -> dict:
    """The cached reports by track key; {} for a missing file. Refuses other versions."""
    path = Path(path)
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    if data.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"solve cache {path} has format_version "
                         f"{data.get('format_version')!r}, expected {FORMAT_VERSION}")
    return dict(data.get("results", {}))


def store_in_cache(path: str | Path, key: str, report: dict) -> None:
    """Add one report to the cache file, atomically (temp file + os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    results = load_cache(path)
    results[key] = report
    atomic_write_text(path, json.dumps({"format_version": FORMAT_VERSION, "results": results},
                                       indent=1, sort_keys=True) + "\n")


def format_report(report: dict) -> str:
    """A few human-readable lines of one report."""
    lines = [f"side {report['side']} {report['game_type']}/{report['scoring']}: "
             f"exact margin at komi 0 = {report['margin']:+g} (Black's view)"]
    if report.get("fair_komi") is not None:
        lines.append(f"  exact fair komi = {report['fair_komi']:g}  "
                     f"(Black wins with komi <= {report['black_wins_up_to_komi']})")
    else:
        lines.append(f"  fair komi: {report.get('fair_komi_note')}")
    if "margins_by_komi" in report:
        lines.append("  margin by komi: " + ", ".join(
            f"{k}:{v:+g}" for k, v in report["margins_by_komi"].items()))
    if "move_values" in report:
        label = "opening stone values" if report["game_type"] == "nokomi" else "first moves"
        lines.append(f"  {label}: " + ", ".join(
            f"{m} {v:+g}" for m, v in report["move_values"].items()))
        lines.append("  optimal: " + " ".join(report["optimal_moves"]))
    lines.append(f"  {report['positions']} positions, {report['nodes']} nodes, "
                 f"{report['seconds']:.1f} s wall ({report.get('cpu_seconds', 0):.1f} s CPU), "
                 f"peak RSS {report['peak_rss_mb']:.0f} MB")
    return "\n".join(lines)
