"""The komi atlas's self-play sweep over komi: which komi values get games, stage by stage.

A first stage around the network's fair komi (`centred_start`) or a coarse grid over the
range, then rounds inside the bracket where Black's score crosses one half, then a walk
outward from the crossing until a komi on each side clears one half (`bracket_stage`), then
more games where they narrow the bracket soonest (`narrowing_stage`). The games of a stage
advance in one batch (catena_zero.komi.sweep.sweep_komi); catena_zero.komi.atlas.measure
reads the fair komi and its intervals off the table this sweep returns.
"""

from __future__ import annotations

import math

import numpy as np

from catena_zero.komi.config import AtlasConfig
from catena_zero.komi.intervals import HALF, Z_95, bracket_interval, monotone_scores
from catena_zero.komi.sweep import SweepTable, combine_tables, sweep_komi
from catena_zero.rules import Rules


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
