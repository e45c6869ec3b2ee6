"""`catena-zero komi`: every fair-komi estimate for one track, written as CSV and PNG.

For the rules' track it runs (a) the agent's own estimate (bisection over komi at the
empty board, with search), (b) the empirical sweep with its logistic fit, (c) for nokomi
the opening-cell heatmap, and shows the solver's exact value beside them when the solve
cache has it (side 2 is solved on the spot). Files, under out_dir, named by track:
sweep_<track>.csv/.png, opening_<track>.csv/.png, summary.csv (one row per track, rows of
other tracks kept).
"""

from __future__ import annotations

import math
from pathlib import Path

from catena_zero.komi.config import KomiConfig, SolveConfig
from catena_zero.komi.estimate import agent_fair_komi
from catena_zero.komi.exact import load_cache, solve_exact, track_key
from catena_zero.komi.opening import opening_sweep
from catena_zero.komi.plots import plot_opening, plot_sweep
from catena_zero.komi.sweep import fit_table, interpolated_crossing, run_sweep
from catena_zero.komi.tables import read_csv, write_csv
from catena_zero.mcts.solver import enum_value
from catena_zero.rules import Rules

SUMMARY_FILE = "summary.csv"


def exact_report(rules: Rules, cache_path: str) -> dict:
    """The solver's report from the cache ({} if absent); side 2 is solved on the spot."""
    report = None
    if cache_path and Path(cache_path).exists():
        report = load_cache(cache_path).get(track_key(rules))
    if report is None and rules.side == 2:
        report = solve_exact(rules, SolveConfig(cache_path=cache_path))
    return report or {}


def analyse_komi(rules: Rules, agent, agent_label: str, config: KomiConfig,
                 log=print) -> dict:
    """Run every estimate for `rules` with `agent`; write files; return the summary row."""
    out_dir = Path(config.out_dir)
    track = track_key(rules)
    row: dict = {"track": track, "agent": agent_label}
    short_label = Path(agent_label).name if "/" in agent_label else agent_label
    exact = exact_report(rules, config.solver_cache)
    row["exact_fair_komi"] = exact.get("fair_komi")
    own = agent_fair_komi(rules, agent, config.estimate, seed=config.sweep.seed)
    row["search_fair_komi"] = own.get("search_fair_komi")
    row["network_fair_komi"] = own.get("network_fair_komi")
    log(f"[komi] {track}: agent's own estimate {own or 'n/a (no evaluator or no komi)'}")

    sweep = run_sweep(rules, agent, config.sweep)
    write_csv(out_dir / f"sweep_{track}.csv", sweep.rows())
    low, high = rules.komi_range
    if low != high:
        fit = fit_table(sweep)
        fit_values = {"fair_komi": fit.fair_komi, "low": fit.low, "high": fit.high,
                      "slope": fit.slope}
        row.update(empirical_fair_komi=fit.fair_komi, empirical_low=fit.low,
                   empirical_high=fit.high, slope=fit.slope, separated=fit.separated,
                   crossing_komi=interpolated_crossing(sweep.komi, sweep.black_score))
        plot_sweep({k: getattr(sweep, k) for k in ("komi", "black_score", "wilson_low",
                                                  "wilson_high")},
                   fit_values, out_dir / f"sweep_{track}.png",
                   title=f"{track}: {short_label}", exact=row["exact_fair_komi"],
                   search=row["search_fair_komi"])
    row["komi_values"] = len(sweep.komi)
    row["games"] = int(sweep.games.sum())
    at_zero = sweep.black_score[sweep.komi == 0]
    row["black_score_komi0"] = float(at_zero[0]) if at_zero.size else None
    log(f"[komi] {track}: swept {row['komi_values']} komi values, {row['games']} games")

    if enum_value(rules.game_type) == "nokomi" and config.opening.enabled:
        opening = opening_sweep(rules, agent, config.opening.games_per_cell, config.opening.seed)
        rows = opening.rows()
        exact_values = exact.get("move_values", {})
        for cell_row in rows:  # the solver's margin after this stone, where solved
            cell_row["exact_margin"] = exact_values.get(cell_row["name"])
        write_csv(out_dir / f"opening_{track}.csv", rows)
        plot_opening({k: getattr(opening, k) for k in ("name", "col", "row", "black_score")},
                     out_dir / f"opening_{track}.png", title=f"{track}: {short_label}")
        balanced = abs(opening.black_score - 0.5)
        best = opening.name[balanced == balanced.min()]
        row["most_balanced_openings"] = " ".join(str(name) for name in best)
        log(f"[komi] {track}: most balanced opening stones {row['most_balanced_openings']}")
    update_summary(out_dir / SUMMARY_FILE, row)
    return row


SUMMARY_FIELDS = ["track", "agent", "exact_fair_komi", "search_fair_komi", "network_fair_komi",
                  "empirical_fair_komi", "empirical_low", "empirical_high", "crossing_komi",
                  "slope", "separated",
                  "komi_values", "games", "black_score_komi0", "most_balanced_openings"]


def update_summary(path: Path, row: dict) -> None:
    """Replace this track's row of summary.csv (other tracks' rows are kept)."""
    rows = read_csv(path) if path.exists() else []
    rows = [r for r in rows if r.get("track") != row["track"]] + [row]
    clean = [{k: (None if isinstance(v, float) and math.isnan(v) else v)
              for k, v in r.items()} for r in rows]
    write_csv(path, clean, SUMMARY_FIELDS)
