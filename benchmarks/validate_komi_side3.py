"""Validate the fair-komi estimates on side 3 against the exact solver.

    python -m benchmarks.validate_komi_side3 --agent uct:400 --komi 8-13 --games 16
    python -m benchmarks.validate_komi_side3 --agent runs/side3/checkpoints/last.pt

Solves side 3 komi/standard exactly (or reads the solve cache), then lets the agent
estimate the same number two ways: its own bisection over komi at the empty board (with
search) and the empirical self-play sweep with the logistic fit. Prints one table and
writes it as JSON (atomically) beside the sweep CSV in --out.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from catena_zero.arena.specs import AgentFactory
from catena_zero.data.atomic import atomic_write_text
from catena_zero.komi.config import NetworkEstimateConfig, SolveConfig
from catena_zero.komi.estimate import agent_fair_komi
from catena_zero.komi.exact import solve_exact
from catena_zero.komi.solver_agent import SolverAgent
from catena_zero.komi.sweep import fit_table, interpolated_crossing, sweep_komi
from catena_zero.komi.tables import write_csv
from catena_zero.mcts import SearchConfig
from catena_zero.rules import Rules


def parse_komi(text: str) -> list[int]:
    """'8-13' or '8,10,12' -> komi values."""
    if "-" in text:
        low, high = (int(part) for part in text.split("-", 1))
        return list(range(low, high + 1))
    return [int(part) for part in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="uct:400", help="arena spec, checkpoint or 'solver'")
    parser.add_argument("--komi", default="8-13", help="komi values swept, e.g. 8-13")
    parser.add_argument("--games", type=int, default=16, help="self-play games per komi")
    parser.add_argument("--simulations", type=int, default=400,
                        help="search simulations of the agent's own estimate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="komi/standard", help="GAMETYPE/SCORING")
    parser.add_argument("--cache", default="runs/komi/solve_cache.json")
    parser.add_argument("--out", default="runs/komi/validate_side3")
    args = parser.parse_args(argv)

    game_type, scoring = args.rules.split("/")
    rules = Rules(side=3, game_type=game_type, scoring=scoring)
    started = time.perf_counter()
    exact = solve_exact(rules, SolveConfig(cache_path=args.cache))
    solve_seconds = exact["seconds"]
    if args.agent == "solver":
        agent = SolverAgent()
    else:
        factory = AgentFactory(rules, SearchConfig(num_simulations=args.simulations), "cpu")
        agent = factory(args.agent)

    clock = time.perf_counter()
    own = agent_fair_komi(rules, agent, NetworkEstimateConfig(simulations=args.simulations),
                          seed=args.seed)
    own_seconds = time.perf_counter() - clock
    clock = time.perf_counter()
    table = sweep_komi(rules, agent, parse_komi(args.komi), args.games, args.seed)
    sweep_seconds = time.perf_counter() - clock
    fit = fit_table(table)
    crossing = interpolated_crossing(table.komi, table.black_score)

    out = Path(args.out)
    write_csv(out / f"sweep_side3-{game_type}-{scoring}.csv", table.rows())
    result = {
        "rules": str(rules), "agent": args.agent, "exact_fair_komi": exact["fair_komi"],
        "solve_seconds": solve_seconds, "solve_peak_rss_mb": exact["peak_rss_mb"],
        "own_estimate": own, "own_estimate_seconds": round(own_seconds, 1),
        "empirical_fair_komi": fit.fair_komi, "empirical_interval": [fit.low, fit.high],
        "separated": fit.separated, "slope": fit.slope, "crossing_komi": crossing,
        "sweep": {"komi": table.komi.tolist(), "black_score": table.black_score.tolist(),
                  "wilson_low": table.wilson_low.tolist(),
                  "wilson_high": table.wilson_high.tolist(),
                  "mean_margin": table.mean_margin.tolist(), "games_per_komi": args.games},
        "sweep_seconds": round(sweep_seconds, 1),
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"validate_{args.agent.replace(':', '').replace('/', '_')}.json"
    atomic_write_text(path, json.dumps(result, indent=1) + "\n")

    print(f"side 3 {game_type}/{scoring}, agent {args.agent}")
    print(f"  exact fair komi (solver)       {exact['fair_komi']}")
    for key, value in own.items():
        print(f"  agent's own {key:<18} {value}")
    print(f"  empirical fair komi            {fit.fair_komi:.3f}  95% [{fit.low:.3f}, "
          f"{fit.high:.3f}]  ({args.games} games x {len(table.komi)} komi)")
    print(f"  interpolated 50% crossing      {crossing:.3f}")
    for komi, score, low, high in zip(table.komi, table.black_score, table.wilson_low,
                                      table.wilson_high, strict=True):
        print(f"    komi {komi:>3}: Black {score:.3f}  [{low:.3f}, {high:.3f}]")
    print(f"  times: own estimate {own_seconds:.0f} s, sweep {sweep_seconds:.0f} s; wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
