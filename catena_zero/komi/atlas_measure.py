"""The measurements of the komi atlas, one per game type, each a JSON-ready dict.

- komi: an adaptive self-play sweep over komi (a first stage around the network's fair
  komi, or a coarse grid over the range, then rounds inside the bracket where Black's score
  crosses one half, then more games next to the crossing); the fair
  komi with its bracket and bootstrap intervals (catena_zero.komi.intervals), the logistic
  fit beside them, and the network's own estimate (catena_zero.komi.fair).
- nokomi: every first stone valued by a search (one per symmetry orbit, in one batch) and,
  optionally, by self-play games after it; the fair stones and how many are near even, and
  Black's score over `fair_stone_games` more games after the fairest.
- double: Black's score and mean margin over self-play games, with intervals.

All games of a stage advance in one batch (catena_zero.komi.sweep.play_out).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from catena_zero.komi.config import AtlasConfig
from catena_zero.komi.fair import estimate_fair_komi
from catena_zero.komi.intervals import (
    HALF,
    Z_95,
    bracket_interval,
    estimate_crossing,
    mean_interval,
    monotone_scores,
    score_interval,
    score_of_margin,
)
from catena_zero.komi.opening import opening_sweep, symmetry_orbits
from catena_zero.komi.sweep import (
    SweepTable,
    black_points,
    combine_tables,
    fit_table,
    play_out,
    sweep_komi,
)
from catena_zero.mcts import SearchConfig, search
from catena_zero.rules import BLACK, Engine, Rules, Scoring


def finite_or_none(value: float) -> float | None:
    """JSON has no infinity: an open end of an interval is written null."""
    return float(value) if value is not None and math.isfinite(value) else None


def komi_unit(rules: Rules) -> int:
    """The sweep's step: 1 komi, or 1/60 of a wide range (17 in quadratic scoring's 0..1000),
    so the stages cost the same games whatever the scoring."""
    low, high = rules.komi_range
    return max(1, round((high - low) / 60))


def coarse_grid(low: int, high: int, points: int) -> list[int]:
    """`points` komi values spread evenly over low..high (every value when fewer)."""
    return sorted({int(round(x)) for x in np.linspace(low, high, min(points, high - low + 1))})


def crossing_neighbours(table: SweepTable) -> tuple[int, int]:
    """(left, right): the swept komi values around the monotone crossing: the largest whose
    pooled score is above one half and the next one (the ends when there is none)."""
    score = monotone_scores(table.black_score * table.games, table.games)
    above = np.flatnonzero(score > 0.5)
    if not above.size:
        return int(table.komi[0]), int(table.komi[0])
    last = int(above.max())
    if last == table.komi.size - 1:
        return int(table.komi[-1]), int(table.komi[-1])
    return int(table.komi[last]), int(table.komi[last + 1])


def centred_grid(low: int, high: int, centre: float, points: int, unit: int) -> list[int]:
    """`points` komi values `unit` apart around `centre`, shifted to stay inside low..high."""
    points = min(points, (high - low) // unit + 1)
    first = int(round(centre - unit * (points - 1) / 2))
    first = min(max(first, low), high - unit * (points - 1))
    return [first + unit * index for index in range(points)]


def centred_start(rules: Rules, agent, config: AtlasConfig,
                  centre: float) -> tuple[SweepTable, list[dict]]:
    """The first stage from a centre (the network's fair komi): `coarse_points` komis one
    unit (1/60 of a wide range, else 1) apart around it and the range's low end (komi 0:
    the first player's edge, which the designer's page reports), then, while no swept komi
    has Black's score below one half (above), komis further out in that direction at
    doubling distances up to the range's end, so that the crossing is enclosed."""
    low, high = rules.komi_range
    unit = komi_unit(rules)
    values = sorted({low, *centred_grid(low, high, centre, config.coarse_points, unit)})
    table = sweep_komi(rules, agent, values, config.coarse_games, config.seed)
    stages = [{"stage": "start", "komi": values, "games_per_komi": config.coarse_games,
               "centre": round(float(centre), 3)}]
    distance = unit * max(2, config.coarse_points)
    for round_index in range(1, 64):
        score = monotone_scores(table.black_score * table.games, table.games)
        # An edge at exactly one half (2 of 4 games) does not enclose the crossing either.
        if score[-1] >= 0.5 and table.komi[-1] < high:  # Black never behind: go up
            komi = min(int(table.komi[-1]) + distance, high)
        elif score[0] <= 0.5 and table.komi[0] > low:  # Black never ahead: go down
            komi = max(int(table.komi[0]) - distance, low)
        else:
            break
        table = combine_tables(table, sweep_komi(rules, agent, [komi], config.coarse_games,
                                                 config.seed + 200 + round_index))
        stages.append({"stage": f"widen {round_index}", "komi": [komi],
                       "games_per_komi": config.coarse_games})
        distance *= 2
    return table, stages


def adaptive_sweep(rules: Rules, agent, config: AtlasConfig,
                   centre: float | None = None) -> tuple[SweepTable, list[dict]]:
    """The sweep of the module doc and its stages ([{"komi": [...], "games": n}, ...]); with
    a `centre`, the first stage is `centred_start`'s instead of the coarse grid."""
    low, high = rules.komi_range
    if centre is not None and math.isfinite(centre):
        table, stages = centred_start(rules, agent, config, centre)
    else:
        values = coarse_grid(low, high, config.coarse_points)
        table = sweep_komi(rules, agent, values, config.coarse_games, config.seed)
        stages = [{"stage": "coarse", "komi": values, "games_per_komi": config.coarse_games}]
    for round_index in range(1, 64):
        left, right = crossing_neighbours(table)
        inside = np.linspace(left, right, config.refine_points + 2)[1:-1].round().astype(int)
        extra = sorted(set(inside.tolist()) - set(table.komi.tolist()))
        if right - left <= 1 or not extra:
            break
        table = combine_tables(table, sweep_komi(rules, agent, extra, config.coarse_games,
                                                 config.seed + round_index))
        stages.append({"stage": f"refine {round_index}", "komi": extra,
                       "games_per_komi": config.coarse_games})
    table, stages = bracket_stage(rules, agent, config, table, stages)
    return narrowing_stage(rules, agent, config, table, stages)


def narrowing_stage(rules: Rules, agent, config: AtlasConfig, table: SweepTable,
                    stages: list[dict]) -> tuple[SweepTable, list[dict]]:
    """Spend games where they narrow the bracket soonest, until it is at most
    `target_width` komi units wide (`komi_unit`: points, or 17 points in quadratic scoring)
    or the sweep holds `max_games` games. Each round gives
    `bracket_games` more games to one komi on each side of the crossing (`narrowing_komi`):
    the swept komi strictly inside the bracket on that side whose score, with the fewest
    more games, would clear one half and so become the bracket's new end. That is rarely
    the komi next to the crossing, where Black's score is nearest one half (hundreds of
    games), and an open end (a flat curve) is closed the same way. A side with no such komi
    gets the komi one step inside a closed end, else nothing; the stage ends when no komi
    is left to play."""
    if config.target_width <= 0:
        return table, stages
    width = config.target_width * komi_unit(rules)
    for round_index in range(1, 1000):
        low, high = bracket_interval(table.komi, table.black_score * table.games, table.games,
                                     min_games=config.bracket_games)
        if high - low <= width or int(table.games.sum()) >= config.max_games:
            break
        left, right = crossing_neighbours(table)
        budget = config.max_games - int(table.games.sum())
        wanted = {narrowing_komi(table, low, left, "black", budget),
                  narrowing_komi(table, high, right, "white", budget)} - {None}
        if not wanted:
            break
        wanted = sorted(wanted)
        table = combine_tables(table, sweep_komi(rules, agent, wanted, config.bracket_games,
                                                 config.seed + 500 + round_index))
        stages.append({"stage": f"narrow {round_index}", "komi": wanted,
                       "games_per_komi": config.bracket_games})
    return table, stages


def games_to_clear(score: float, games: float, z: float = Z_95) -> float:
    """About how many more games a komi needs before its 95% interval clears one half, if
    Black's score there stays what it is (normal approximation: z^2 p (1 - p) / (p - 1/2)^2
    games in all); infinite at exactly one half."""
    gap = abs(score - HALF)
    if gap == 0:
        return math.inf
    return max(z * z * score * (1.0 - score) / (gap * gap) - games, 0.0)


def narrowing_komi(table: SweepTable, end: float, neighbour: int, side: str,
                   budget: float = math.inf) -> int | None:
    """The komi that narrows Black's (side "black": komi from the bracket's low `end` up to
    the crossing's left `neighbour`) or White's end of the bracket soonest: among the swept
    komi strictly inside the bracket on that side whose score lies on that side of one half
    and would clear it within `budget` more games, the one with the fewest `games_to_clear`
    (ties: the one nearer the crossing, the tighter end). Without one: at a closed end the
    komi one step inside it, if it is not past the crossing's neighbour; at an open end the
    komi on that side where Black's score is furthest toward clearing, unless even that one
    lies significantly the other way (Black wins at komi 15 when the fair komi is above the
    range). Either only if a score one standard error better would clear within the budget
    (`hopeful_games`: a score at one half after 8 games may move, after 768 it will not).
    None when no komi qualifies."""
    komi, score = table.komi, table.black_score
    if side == "black":
        inside = np.flatnonzero((komi > end) & (komi <= neighbour) & (score > HALF))
        step, nearer = end + 1, 1
    else:
        inside = np.flatnonzero((komi < end) & (komi >= neighbour) & (score < HALF))
        step, nearer = end - 1, -1
    need = {int(i): games_to_clear(score[i], table.games[i]) for i in inside}
    inside = [i for i in need if need[i] <= budget]
    if inside:
        best = min(inside, key=lambda i: (need[i], -nearer * komi[i]))
        return int(komi[best])
    if not math.isfinite(end):  # open: the komi on that side whose score is furthest along
        along = np.flatnonzero(komi <= neighbour if side == "black" else komi >= neighbour)
        if not along.size:
            return None
        best = min(along, key=lambda i: (-nearer * score[i], -nearer * komi[i]))
        hopeless = (table.wilson_high[best] < HALF if side == "black"
                    else table.wilson_low[best] > HALF)
        if hopeless or hopeful_games(score[best], table.games[best], nearer) > budget:
            return None
        return int(komi[best])
    short = step <= neighbour if side == "black" else step >= neighbour
    swept = np.flatnonzero(komi == step)
    if swept.size and hopeful_games(score[swept[0]], table.games[swept[0]], nearer) > budget:
        return None  # its score, even a standard error better, cannot clear in the budget
    return int(step) if short else None


def hopeful_games(score: float, games: float, direction: int) -> float:
    """`games_to_clear` of a score moved one standard error in `direction` (+1: toward a
    Black win, -1: toward a White win): how soon a komi whose score sits at or past one half
    might still clear it; infinite when even that does not cross one half."""
    spread = math.sqrt(max(score * (1.0 - score), 0.25 / max(games, 1.0)) / max(games, 1.0))
    hopeful = score + direction * spread
    if (hopeful - HALF) * direction <= 0:
        return math.inf
    return games_to_clear(min(max(hopeful, 0.0), 1.0), games)


BRACKET_OFFSETS = (0, 1, 2, 4, 8)  # steps outward from the crossing, in komi units


def bracket_stage(rules: Rules, agent, config: AtlasConfig, table: SweepTable,
                  stages: list[dict]) -> tuple[SweepTable, list[dict]]:
    """Walk outward from the crossing on both sides, giving each komi `bracket_games` games,
    until a komi whose Wilson interval clears one half is found on that side: the bracket
    (catena_zero.komi.intervals.bracket_interval) is then as tight as the agent's slope
    allows. Offsets grow (BRACKET_OFFSETS, in units of 1/60 of a wide range), then the
    range's end."""
    low, high = rules.komi_range
    unit = komi_unit(rules)
    left, right = crossing_neighbours(table)
    # The range's ends come last: a noisy agent may clear one half only there.
    sides = {"black": [left - offset * unit for offset in BRACKET_OFFSETS] + [low],
             "white": [right + offset * unit for offset in BRACKET_OFFSETS] + [high]}
    sides = {name: [k for k in dict.fromkeys(values) if low <= k <= high]
             for name, values in sides.items()}
    for step in range(len(BRACKET_OFFSETS) + 1):
        wanted: dict[int, int] = {}
        for name, values in sides.items():
            if step >= len(values) or _cleared(table, values[:step], name):
                continue
            komi = values[step]
            swept = np.flatnonzero(table.komi == komi)
            have = int(table.games[swept[0]]) if swept.size else 0
            if have < config.bracket_games:
                wanted[komi] = config.bracket_games - have
        for games in sorted(set(wanted.values())):
            komis = sorted(k for k, g in wanted.items() if g == games)
            table = combine_tables(table, sweep_komi(rules, agent, komis, games,
                                                     config.seed + 97 + step))
            stages.append({"stage": f"bracket {step}", "komi": komis, "games_per_komi": games})
    return table, stages


def _cleared(table: SweepTable, komis: list[int], side: str) -> bool:
    """Whether one of `komis` has a Wilson interval wholly above (side black) or below
    (side white) one half."""
    for komi in komis:
        index = np.flatnonzero(table.komi == komi)
        if not index.size:
            continue
        if side == "black" and table.wilson_low[index[0]] > 0.5:
            return True
        if side == "white" and table.wilson_high[index[0]] < 0.5:
            return True
    return False


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


def stone_values(rules: Rules, evaluate_fn, search_config: SearchConfig, simulations: int,
                 seed: int) -> np.ndarray:
    """Black's win probability after each first stone by a deterministic search of the
    position it leaves (one search per symmetry orbit, in one batch).  -> [C] in [0, 1]"""
    board = rules.board
    orbit = symmetry_orbits(board)
    representatives = np.array([np.flatnonzero(orbit == o)[0] for o in range(orbit.max() + 1)])
    engine = Engine(rules)
    states = engine.new_games(representatives.size, komi=0)
    engine.step(states, representatives)
    config = dataclasses.replace(search_config, num_simulations=simulations, gumbel_scale=0.0,
                                 dirichlet_fraction=0.0)
    output = search(engine, states, evaluate_fn, config, np.random.default_rng([seed, 43]))
    mover = np.asarray(states.to_move)
    value = np.asarray(output.root_value, dtype=np.float64)
    black_value = np.where(mover == BLACK, value, -value)  # root_value is the mover's view
    return ((black_value + 1.0) / 2.0)[orbit]


def stone_games(rules: Rules, agent, cell: int, games: int,
                seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Black's points and margins of `games` self-play games after a first stone on `cell`
    (komi 0), all in one batch.  -> ([N], [N])"""
    engine = Engine(rules)
    states = engine.new_games(games, komi=0)
    engine.step(states, np.full(games, cell))
    play_out(engine, agent, states, np.random.default_rng([seed, 53]))
    return black_points(engine, states)


def first_stones(rules: Rules, agent, evaluate_fn, search_config: SearchConfig,
                 config: AtlasConfig, exact_values: dict | None = None) -> dict:
    """nokomi: the value of every first stone, the fair stones, the near-even count, and
    Black's score after the fairest stone over `fair_stone_games` more games."""
    board = rules.board
    names = [board.cell_name(cell) for cell in range(board.num_cells)]
    searched = (stone_values(rules, evaluate_fn, search_config, config.stone_simulations,
                             config.seed) if evaluate_fn is not None else None)
    played = (opening_sweep(rules, agent, config.stone_games, config.seed)
              if config.stone_games > 0 else None)
    # The swap: the second player takes the colour the stone favours, so the first player's
    # fair stones are those leaving Black's value nearest one half. The search's value ranks
    # them: a game or two a stone is mostly noise, and picking the stone whose few games
    # came out nearest one half would pick the games with mistakes in them. The games
    # order stones the search ties, and rank alone when there is no search.
    measured = searched if searched is not None else played.black_score
    distance = np.abs(np.asarray(measured) - 0.5)
    fair = np.flatnonzero(distance <= distance.min() + 1e-9)
    stones = []
    for cell in range(board.num_cells):
        stone = {"cell": names[cell], "col": int(board.coords[cell, 0]),
                 "row": int(board.coords[cell, 1])}
        if searched is not None:
            stone["search_value"] = round(float(searched[cell]), 4)
        if played is not None:
            stone.update(black_score=round(float(played.black_score[cell]), 4),
                         low=round(float(played.wilson_low[cell]), 4),
                         high=round(float(played.wilson_high[cell]), 4),
                         games=int(played.games[cell]))
        if exact_values and names[cell] in exact_values:
            stone["exact_margin"] = exact_values[names[cell]]
        stones.append(stone)
    best = int(fair[0])
    if played is not None and searched is not None:  # the games break the search's ties
        best = int(fair[np.argmin(np.abs(played.black_score[fair] - 0.5))])
    interval = ([float(played.wilson_low[best]), float(played.wilson_high[best])]
                if played is not None else [None, None])
    estimate = float(played.black_score[best] if played is not None else searched[best])
    games = int(np.unique(played.orbit).size * config.stone_games) if played is not None else 0
    best_games = int(played.games[best]) if played is not None else 0
    if config.fair_stone_games > 0:
        # The ranking games are few per stone; the chosen stone's own games give the interval.
        points, _ = stone_games(rules, agent, best, config.fair_stone_games, config.seed)
        pooled = points.sum() + (played.black_score[best] * best_games if played is not None
                                 else 0.0)
        best_games += points.size
        games += points.size
        estimate, low, high = score_interval(pooled, best_games)
        interval = [low, high]
    exactly_fairest = exact_after = None
    if exact_values and names[best] in exact_values:  # the solver's check of the choice
        closest = min(abs(value) for value in exact_values.values())
        margin = exact_values[names[best]]
        exactly_fairest = bool(abs(margin) == closest)
        exact_after = score_of_margin(margin)
    played_any = played is not None or config.fair_stone_games > 0
    return {
        "method": ("first stones ranked by a search's value; Black's score after the fairest "
                   "(self-play games, Wilson 95%)" if played_any and searched is not None else
                   "first stones: Black's score after each stone (self-play games, Wilson 95%)"
                   if played_any else "first stones: search value of each stone"),
        "fair_stone": names[best],
        "fair_stone_exactly_fairest": exactly_fairest,
        "fair_stone_exact": exact_after,
        "estimate": round(float(estimate), 4),
        "interval": interval,
        "games_after_fair_stone": best_games,
        "fair_stones": [names[cell] for cell in fair],
        "near_even_stones": int((distance <= config.even_margin).sum()),
        "even_margin": config.even_margin,
        "stones": stones,
        "in_range": None,
        "games": games,
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
