"""Evidence of learning: a trained net's search against uniform random and random-rollout UCT.

The net's search (`EvaluateConfig.simulations`, the run's search settings, a deterministic
root unless `gumbel_scale`) plays `games` games (colours alternated) against each baseline:
uniform random (`RandomAgent`) and a random-rollout UCT (`UCTAgent(uct_playouts)`), all
games of a match advancing together, at the komi of `loading.komi_to_play`.

The net's fair komi, two ways (`komi_from`):
- selfplay (default): the komi at which the net's search, playing itself, wins half its
  games as Black (`catena_zero.komi.fair.selfplay_fair_komi`: `komi_games` games at every
  komi of the rules' range and a logistic fit). About a minute on one core for side 4.
- network: the komi at which the raw value of the empty board crosses zero
  (`catena_zero.komi.fair.estimate_fair_komi`, the training loop's estimate). It is one
  output of the net: on eleven side-4 nets it missed their self-play balance by 1.0 point
  on average and by up to 3.5.
The network estimate is always reported, the self-play one whenever it is measured (not
with `komi` given or `komi_from=network`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from catena_zero.arena.agents import RandomAgent, SearchAgent, UCTAgent
from catena_zero.arena.match import MatchResult, play_match
from catena_zero.data.atomic import atomic_write_text
from catena_zero.evaluate.config import EvaluateConfig
from catena_zero.evaluate.loading import net_at_komi

REPORT_FORMAT_VERSION = 1


def baseline(name: str, config: EvaluateConfig):
    """The baseline agent `name` ("random" or "uct") of `config`."""
    return UCTAgent(config.uct_playouts) if name == "uct" else RandomAgent()


def match_summary(result: MatchResult) -> dict:
    """One match of the report: A's record overall and per colour, its score and interval."""
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


def format_match(summary: dict) -> str:
    """The printed line of one match."""
    low, high = summary["wilson95"]
    return (f"vs {summary['opponent']:<8} {summary['games']} games: "
            f"+{summary['wins']} ={summary['draws']} -{summary['losses']}  "
            f"score {100 * summary['score']:.1f}% (Wilson 95% {100 * low:.1f}-"
            f"{100 * high:.1f}%)  as Black {summary['as_black']}  "
            f"as White {summary['as_white']}  [{summary['seconds']:.0f} s]")


def write_report(path: str, report: dict, indent: int) -> str:
    """The report as JSON text, also written atomically to `path` unless it is empty."""
    text = json.dumps(report, indent=indent, default=str)
    if path:
        atomic_write_text(Path(path), text + "\n")
    return text


def evaluate_learning(config: EvaluateConfig,
                      search_overrides: Mapping[str, Any] | None = None,
                      log: Callable[[str], None] = print) -> dict:
    """Play the net of `config` against each of config.opponents; the JSON report (also
    written to config.json). `log` receives the header line, one line per match and the
    report's JSON text."""
    evaluated = net_at_komi(config, search_overrides)
    net, search, komi = evaluated.net, evaluated.search, evaluated.komi
    agent = SearchAgent(net.evaluator, search, name=f"net-{search.algorithm}"
                                                    f"{search.num_simulations}")
    log(f"{net.description}; rules {net.rules_record}; {komi.text}")
    report = {"format": "catena_zero.evaluation.learning",
              "format_version": REPORT_FORMAT_VERSION,
              "checkpoint": str(net.path), "counters": net.counters, "rules": net.rules_record,
              "fair_komi_estimate": komi.fair_komi_estimate, "selfplay_fair_komi": komi.selfplay,
              "komi_from": komi.source, "komi": komi.komi, "weights": config.weights,
              "precision": config.precision, "search": dataclasses.asdict(search),
              "matches": []}
    for name in config.opponents:
        start = time.perf_counter()
        result = play_match(net.rules, agent, baseline(name, config), config.games,
                            komi=komi.komi, seed=config.seed,
                            opening_plies=config.opening_plies)
        summary = match_summary(result) | {"seconds": time.perf_counter() - start}
        report["matches"].append(summary)
        log(format_match(summary))
    log(write_report(config.json, report, indent=2))
    return report
