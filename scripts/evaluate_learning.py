"""Evidence of learning: a trained net's search against uniform random and random-rollout UCT.

Loads the newest checkpoint of a run (or --checkpoint), measures the komi the net considers
fair (rounded to the nearest allowed integer; --komi-from, below), and plays
--games games (colours alternated) of the net's search (--simulations, the run's search
settings, deterministic root unless --gumbel-scale) against each baseline: uniform random
(`RandomAgent`) and a random-rollout UCT (`UCTAgent(--uct-playouts)`), all games of a match
advancing together. Prints each match's score (wins + draws / 2) with its Wilson 95%
interval, and JSON (also written to --json).

The net's fair komi, two ways (--komi-from):
- selfplay (default): the komi at which the net's search, playing itself, wins half its
  games as Black. Its search (the evaluation's settings, with Gumbel root noise so that the
  games vary) plays --komi-games games at every komi of the rules' range; the logistic fit
  of Black's score (`catena_zero.komi.sweep`, as `catena-zero komi` does) gives the komi and
  its 95% interval. About a minute on one core for side 4.
- network: the komi at which the raw value of the empty board crosses zero
  (`catena_zero.komi.fair`, the training loop's estimate). It is one output of the
  net: on eleven side-4 nets it missed their self-play balance by 1.0 point on average
  and by up to 3.5 (docs/results/2026-11-30-side4-selfplay-fair-komi.md).
The network estimate is always printed and recorded in the JSON, the self-play one whenever
it is measured (not with --komi or --komi-from network).

    python scripts/evaluate_learning.py --run-dir runs/side4-evidence
    python scripts/evaluate_learning.py --checkpoint runs/x/checkpoints/checkpoint-...pt \\
        --games 200 --simulations 32 --uct-playouts 200 --json runs/x/evaluation.json
    python scripts/evaluate_learning.py --checkpoint CK --komi 10 --games 100 \
        --opponents uct --search algorithm=puct       # other search settings
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from catena_zero.arena.agents import RandomAgent, SearchAgent, UCTAgent  # noqa: E402
from catena_zero.arena.match import play_match  # noqa: E402
from catena_zero.data.atomic import atomic_write_text  # noqa: E402
from catena_zero.komi.config import SweepConfig  # noqa: E402
from catena_zero.komi.fair import estimate_fair_komi  # noqa: E402
from catena_zero.komi.sweep import fit_table, run_sweep  # noqa: E402
from catena_zero.mcts.config import SearchConfig  # noqa: E402
from catena_zero.network import INFERENCE_PRECISIONS  # noqa: E402
from catena_zero.rules import Engine, Rules  # noqa: E402
from catena_zero.selfplay.evaluator import NetworkEvaluator  # noqa: E402
from catena_zero.train import build_network, latest_checkpoint, load_checkpoint  # noqa: E402


def stored_config(cls, checkpoint, group: str, **overrides):
    """`cls` from the fields it knows of the checkpoint's stored config group `group`
    (defaults for the rest), with `overrides` on top."""
    stored = checkpoint.config.get(group) if isinstance(checkpoint.config, dict) else None
    known = {field.name for field in dataclasses.fields(cls)}
    values = {key: value for key, value in (stored or {}).items() if key in known}
    return cls(**(values | overrides))


def search_config_of(checkpoint, simulations: int, gumbel_scale: float) -> SearchConfig:
    """The run's search settings (mcts group of its config) with `simulations` and the
    evaluation's root noise `gumbel_scale` (0: deterministic, the usual way to evaluate).

    Exact endgames are off whatever the run trained with: these scripts measure what the
    net learned, so the solver does not play for it (`--search exact_endgame_cells=K` puts
    it back)."""
    return stored_config(SearchConfig, checkpoint, "mcts", num_simulations=simulations,
                         gumbel_scale=gumbel_scale, exact_endgame_cells=0)


def parse_overrides(items: list[str], search: SearchConfig) -> dict:
    """'key=value' strings -> SearchConfig fields, each converted to the field's type."""
    values = {}
    for item in items:
        key, separator, text = item.partition("=")
        if not separator or not hasattr(search, key):
            raise ValueError(f"expected KEY=VALUE with a SearchConfig field, got {item!r}")
        current = getattr(search, key)
        if isinstance(current, bool):
            if text.lower() not in ("true", "false"):
                raise ValueError(f"{key} must be true or false, got {text!r}")
            values[key] = text.lower() == "true"
        else:
            values[key] = type(current)(text)
    return values


def add_search_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--search", nargs="*", default=[], metavar="KEY=VALUE",
                        help="SearchConfig overrides of the run's search, e.g. algorithm=puct "
                             "max_considered_actions=8 exact_endgame_cells=0")


def overridden_search(parser: argparse.ArgumentParser, args: argparse.Namespace,
                      search: SearchConfig) -> SearchConfig:
    """`search` with the --search overrides (a parser error names a bad one)."""
    try:
        return dataclasses.replace(search, **parse_overrides(args.search, search))
    except (TypeError, ValueError) as error:
        parser.error(f"--search: {error}")


def add_checkpoint_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `checkpoint_path` and `load_net_at_komi` read: where the net is, and komi."""
    parser.add_argument("--run-dir", default="", help="run directory (newest checkpoint)")
    parser.add_argument("--checkpoint", default="", help="a checkpoint file instead")
    parser.add_argument("--komi", type=int, default=None, help="komi (default: the net's fair)")


def checkpoint_path(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Path:
    """--checkpoint, or the newest checkpoint of --run-dir (a parser error otherwise)."""
    if args.checkpoint:
        return Path(args.checkpoint)
    if args.run_dir:
        path = latest_checkpoint(Path(args.run_dir) / "checkpoints")
        if path is None:
            parser.error(f"no checkpoint in {args.run_dir}/checkpoints")
        return path
    parser.error("give --run-dir or --checkpoint")


def load_net_at_komi(path: Path, komi: int | None, weights: str = "published",
                     precision: str = "auto"):
    """(checkpoint, rules, engine, evaluator, fair-komi estimate, komi to play): `komi`, or
    the net's fair-komi estimate rounded into the rules' komi range. `weights`: the
    checkpoint's published weights (the average when the run kept one) or its trained ones.
    `precision`: the evaluator's inference precision (auto: bfloat16 on an AMX CPU)."""
    checkpoint = load_checkpoint(path)
    rules = Rules(**checkpoint.rules)
    engine = Engine(rules)
    evaluator = NetworkEvaluator(build_network(checkpoint, weights=weights), engine, "cpu",
                                 precision)
    fair_komi = estimate_fair_komi(engine, evaluator)
    if komi is None:
        komi = rules.nearest_komi(fair_komi)
    return checkpoint, rules, engine, evaluator, fair_komi, komi


def selfplay_fair_komi(rules: Rules, evaluator, search: SearchConfig, games_per_komi: int,
                       seed: int) -> dict:
    """The komi at which the net's search wins half its games against itself as Black: a
    self-play sweep over the rules' komi range and its logistic fit. The search keeps its
    settings, with Gumbel root noise of scale 1 so that the games differ (a PUCT search
    keeps its Dirichlet noise). "fair_komi" is clipped into the komi range when Black wins
    (or loses) at every komi swept."""
    agent = SearchAgent(evaluator, dataclasses.replace(search, gumbel_scale=1.0))
    table = run_sweep(rules, agent, SweepConfig(games_per_komi=games_per_komi, seed=seed))
    fit = fit_table(table)
    low, high = rules.komi_range
    fair = fit.fair_komi
    if np.isnan(fair):  # Black wins at every komi (high side open) or at none
        fair = float(high) if np.isinf(fit.high) else float(low)
    return {"fair_komi": fair, "low": fit.low, "high": fit.high, "slope": fit.slope,
            "games_per_komi": games_per_komi, "black_score": dict(zip(
                table.komi.tolist(), np.round(table.black_score, 4).tolist(), strict=True))}


def add_opponent_arguments(parser: argparse.ArgumentParser) -> None:
    """--simulations, --search, --opponent and --uct-playouts: one net search against one
    baseline (for `net_at_komi`)."""
    parser.add_argument("--simulations", type=int, default=32, help="net search simulations")
    add_search_argument(parser)
    parser.add_argument("--opponent", default="uct", choices=["uct", "random"])
    parser.add_argument("--uct-playouts", type=int, default=200, help="UCT playouts per move")


def opponent_of(args: argparse.Namespace):
    """The baseline agent that add_opponent_arguments' options name."""
    return UCTAgent(args.uct_playouts) if args.opponent == "uct" else RandomAgent()


def add_komi_arguments(parser: argparse.ArgumentParser) -> None:
    """--komi-from and --komi-games (--komi comes with the checkpoint arguments)."""
    parser.add_argument("--komi-from", choices=("selfplay", "network"), default="selfplay",
                        help="measure the net's fair komi by its self-play balance or by its "
                             "raw empty-board value (see the module doc); --komi overrides")
    parser.add_argument("--komi-games", type=int, default=64,
                        help="self-play games per komi value for --komi-from selfplay")


def check_komi_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.komi_games < 1:
        parser.error(f"--komi-games must be >= 1, got {args.komi_games}")


def komi_to_play(rules: Rules, evaluator, search: SearchConfig, args: argparse.Namespace,
                 fair_komi: float, komi: int):
    """(komi, self-play sweep report or None, where the komi came from, a line saying so).

    `komi` is --komi or the network estimate's; with --komi-from selfplay (and no --komi) a
    self-play sweep with `search` replaces it. A game type without komi has one komi to
    play: no sweep, whatever --komi-from says."""
    selfplay = None
    low, high = rules.komi_range
    if low < high and args.komi is None and args.komi_from == "selfplay":
        start = time.perf_counter()
        selfplay = selfplay_fair_komi(rules, evaluator, search, args.komi_games, args.seed)
        selfplay["seconds"] = time.perf_counter() - start
        komi = rules.nearest_komi(selfplay["fair_komi"])
    source = "--komi" if args.komi is not None else (
        "selfplay" if selfplay is not None else "network")
    measured = "" if selfplay is None else (
        f", self-play {selfplay['fair_komi']:.2f} [{selfplay['low']:.2f}, "
        f"{selfplay['high']:.2f}] ({selfplay['seconds']:.0f} s)")
    text = f"fair komi: network {fair_komi:.2f}{measured} -> komi {komi} ({source})"
    return komi, selfplay, source, text


class NetAtKomi(NamedTuple):
    """A checkpoint's net, its deterministic search and the komi to play it at."""

    path: Path
    checkpoint: object
    rules: Rules
    engine: Engine
    evaluator: NetworkEvaluator
    search: SearchConfig
    fair_komi: float  # the network estimate
    komi: int
    selfplay: dict | None  # the self-play sweep's report, when one ran
    komi_source: str
    komi_text: str  # the line saying where the komi came from


def net_at_komi(parser: argparse.ArgumentParser, args: argparse.Namespace) -> NetAtKomi:
    """The net of the checkpoint arguments (one torch thread), its search with --simulations,
    a deterministic root and the --search overrides, at the komi of the komi arguments
    (`komi_to_play`)."""
    check_komi_arguments(parser, args)
    torch.set_num_threads(1)
    path = checkpoint_path(parser, args)
    checkpoint, rules, engine, evaluator, fair_komi, komi = load_net_at_komi(path, args.komi)
    search = overridden_search(parser, args, search_config_of(checkpoint, args.simulations, 0.0))
    komi, selfplay, source, text = komi_to_play(rules, evaluator, search, args, fair_komi, komi)
    return NetAtKomi(path, checkpoint, rules, engine, evaluator, search, fair_komi, komi,
                     selfplay, source, text)


def match_summary(result) -> dict:
    return {
        "opponent": result.name_b,
        "games": result.num_games,
        "wins": result.wins,
        "draws": result.draws,
        "losses": result.losses,
        "score": result.score,
        "wilson95": list(result.interval),
        "as_black": dataclasses.asdict(result.a_as_black),
        "as_white": dataclasses.asdict(result.a_as_white),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_checkpoint_arguments(parser)
    parser.add_argument("--games", type=int, default=200, help="games per match (even)")
    parser.add_argument("--simulations", type=int, default=32, help="net search simulations")
    parser.add_argument("--gumbel-scale", type=float, default=0.0,
                        help="Gumbel root noise of the net's search (0 = deterministic)")
    parser.add_argument("--uct-playouts", type=int, default=200, help="UCT playouts per move")
    add_komi_arguments(parser)
    parser.add_argument("--opening-plies", type=int, default=0,
                        help="random opening plies shared by each colour-swapped pair")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--weights", choices=("published", "trained"), default="published",
                        help="the averaged weights when the run kept them (train.ema_decay),"
                             " or the optimiser's latest")
    parser.add_argument("--precision", choices=INFERENCE_PRECISIONS, default="auto",
                        help="the net's inference precision (auto: bfloat16 on an AMX CPU)")
    parser.add_argument("--seed", type=int, default=0)
    add_search_argument(parser)
    parser.add_argument("--opponents", nargs="+", default=["random", "uct"],
                        choices=["random", "uct"], help="which baselines to play")
    parser.add_argument("--json", default="", help="also write the JSON here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    path = checkpoint_path(parser, args)
    check_komi_arguments(parser, args)
    checkpoint, rules, engine, evaluator, fair_komi, komi = load_net_at_komi(
        path, args.komi, args.weights, args.precision)
    search = overridden_search(parser, args, search_config_of(checkpoint, args.simulations,
                                                              args.gumbel_scale))
    komi, selfplay, komi_source, komi_text = komi_to_play(rules, evaluator, search, args,
                                                          fair_komi, komi)
    agent = SearchAgent(evaluator, search, name=f"net-{search.algorithm}{args.simulations}")
    print(f"checkpoint {path} (iteration {checkpoint.counters.iteration}, step "
          f"{checkpoint.counters.step}, games {checkpoint.counters.games}); rules "
          f"{checkpoint.rules}; {komi_text}", flush=True)
    report = {"checkpoint": str(path), "counters": checkpoint.counters.to_dict(),
              "rules": checkpoint.rules, "fair_komi_estimate": fair_komi,
              "selfplay_fair_komi": selfplay, "komi_from": komi_source, "komi": komi,
              "weights": args.weights, "precision": args.precision,
              "search": dataclasses.asdict(search), "matches": []}
    baselines = {"random": RandomAgent(), "uct": UCTAgent(args.uct_playouts)}
    for opponent in (baselines[name] for name in args.opponents):
        start = time.perf_counter()
        result = play_match(rules, agent, opponent, args.games, komi=komi, seed=args.seed,
                            opening_plies=args.opening_plies)
        summary = match_summary(result) | {"seconds": time.perf_counter() - start}
        report["matches"].append(summary)
        low_bound, high_bound = summary["wilson95"]
        print(f"vs {summary['opponent']:<8} {summary['games']} games: "
              f"+{summary['wins']} ={summary['draws']} -{summary['losses']}  "
              f"score {100 * summary['score']:.1f}% (Wilson 95% {100 * low_bound:.1f}-"
              f"{100 * high_bound:.1f}%)  as Black {summary['as_black']}  "
              f"as White {summary['as_white']}  [{summary['seconds']:.0f} s]", flush=True)
    text = json.dumps(report, indent=2, default=str)
    print(text)
    if args.json:
        atomic_write_text(args.json, text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
