"""The measurements of the komi atlas for the komi and double game types, each a JSON-ready
dict.

- komi: the adaptive self-play sweep over komi (catena_zero.komi.atlas.komi_sweep: a first
  stage around the network's fair komi, or a coarse grid over the range, then rounds inside
  the bracket where Black's score crosses one half, then more games next to the crossing);
  the fair komi with its bracket and bootstrap intervals (catena_zero.komi.intervals), the
  logistic fit beside them, and the network's own estimate (catena_zero.komi.fair).
- double: Black's score and mean margin over self-play games, with intervals.

The nokomi game type's first stones are measured in catena_zero.komi.atlas.stones. All games
of a stage advance in one batch (catena_zero.komi.sweep.play_out).
"""

from __future__ import annotations

import math

import numpy as np

from catena_zero.komi.atlas.komi_sweep import adaptive_sweep
from catena_zero.komi.config import AtlasConfig
from catena_zero.komi.fair import estimate_fair_komi
from catena_zero.komi.intervals import estimate_crossing, mean_interval, score_interval
from catena_zero.komi.sweep import SweepTable, black_points, fit_table, play_out
from catena_zero.rules import Engine, Rules, Scoring


def finite_or_none(value: float) -> float | None:
    """JSON has no infinity: an open end of an interval is written null."""
    return float(value) if value is not None and math.isfinite(value) else None


def range_note(rules: Rules, table: SweepTable, estimate: float) -> tuple[bool, str | None]:
    """(in_range, the note when not): where the fair komi lies outside the rules' range,
    which colour the second player takes at the range's end and Black's margin there."""
    low, high = rules.komi_range
    if math.isfinite(estimate) and low <= estimate <= high:
        return True, None
    at_end = 0 if estimate < low else -1
    end = int(table.komi[at_end])
    colour = "White" if estimate < low else "Black"
    return False, (f"fair komi {'below' if estimate < low else 'above'} the range {low}..{high}:"
                   f" at komi {end} Black scores {table.black_score[at_end]:.2f} with mean "
                   f"margin {table.mean_margin[at_end]:+.1f}; the second player takes "
                   f"{colour}, so the first player, who picks komi {end}, gets the other "
                   f"colour and is short by about {abs(table.mean_margin[at_end]):.1f} points")


def network_centre(rules: Rules, evaluate_fn, value_crossing: float) -> dict | None:
    """Where the sweep starts: the network's value crossing k (`estimate_fair_komi`) moved
    by its score head's expected margin for Black at the empty board with komi round(k),
    which is zero at the fair komi; clipped into the range. A net without a score head
    gives k, and so does longest scoring, whose margin (a ribbon length) does not move
    point for point with the komi."""
    low, high = rules.komi_range
    komi = rules.nearest_komi(value_crossing)
    lead = None
    if rules.scoring != Scoring.LONGEST:
        evaluation = evaluate_fn(Engine(rules).new_games(1, komi=komi))
        lead = None if evaluation.score is None else float(np.asarray(evaluation.score)[0])
        lead = lead if lead is not None and math.isfinite(lead) else None
    centre = value_crossing if lead is None else komi + lead
    if not math.isfinite(centre):  # a broken net: the caller falls back to the coarse grid
        return None
    return {"centre": round(float(min(max(centre, low), high)), 3),
            "value_crossing": round(value_crossing, 3), "komi": komi,
            "score_lead": None if lead is None else round(lead, 3)}


def komi_balance(rules: Rules, agent, evaluate_fn, config: AtlasConfig) -> dict:
    """Fair komi of the komi game type from the agent's self-play (module doc)."""
    network = start = None
    if evaluate_fn is not None and (config.network_estimate or config.start == "network"):
        network = float(estimate_fair_komi(Engine(rules), evaluate_fn))
    if config.start == "network" and evaluate_fn is not None:
        start = network_centre(rules, evaluate_fn, network)
    table, stages = adaptive_sweep(rules, agent, config,
                                   None if start is None else start["centre"])
    points = table.black_score * table.games
    crossing = estimate_crossing(table.komi, points, table.games, config.resamples, config.seed,
                                 min_games=config.bracket_games)
    fit = fit_table(table)
    in_range, note = range_note(rules, table, crossing.estimate)
    if not config.network_estimate:
        network = None
    return {
        "method": "self-play sweep; bracket of Wilson 95% intervals around the crossing",
        "estimate": finite_or_none(crossing.estimate),
        "estimate_side": ("above" if crossing.estimate == math.inf else
                          "below" if crossing.estimate == -math.inf else None),
        "interval": [finite_or_none(crossing.low), finite_or_none(crossing.high)],
        "bootstrap_interval": [finite_or_none(crossing.bootstrap_low),
                               finite_or_none(crossing.bootstrap_high)],
        "logistic": {"fair_komi": finite_or_none(fit.fair_komi), "low": finite_or_none(fit.low),
                     "high": finite_or_none(fit.high), "slope": float(fit.slope)},
        "network_estimate": network,
        "start": start,
        "in_range": in_range,
        "range_note": note,
        "games": int(table.games.sum()),
        "sweep": {"komi": table.komi.tolist(), "games": table.games.tolist(),
                  "black_score": np.round(table.black_score, 4).tolist(),
                  "mean_margin": np.round(table.mean_margin, 3).tolist(),
                  "half_point": table.half_point.astype(float).tolist(),
                  "mean_moves": np.round(table.mean_moves, 2).tolist(),
                  "margin_sd": np.round(table.margin_sd, 3).tolist()},
        "stages": stages,
    }


def double_balance(rules: Rules, agent, config: AtlasConfig) -> dict:
    """double: Black's score and mean margin over self-play games from the empty board."""
    engine = Engine(rules)
    states = engine.new_games(config.double_games, komi=0)
    play_out(engine, agent, states, np.random.default_rng([config.seed, 47]))
    points, margins = black_points(engine, states)
    score, low, high = score_interval(points.sum(), points.size)
    mean, margin_low, margin_high = mean_interval(margins)
    return {
        "method": "self-play games; Black's score with its Wilson 95% interval",
        "estimate": round(score, 4),
        "interval": [low, high],
        "black_wins": int((points == 1.0).sum()),
        "draws": int((points == 0.5).sum()),
        "expected_margin": round(mean, 3),
        "margin_interval": [finite_or_none(margin_low), finite_or_none(margin_high)],
        "in_range": None,
        "games": int(points.size),
    }
