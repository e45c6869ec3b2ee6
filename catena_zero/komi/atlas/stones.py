"""The komi atlas's measurement of the nokomi game type, a JSON-ready dict: every first
stone valued by a search (one per symmetry orbit, in one batch) and, optionally, by
self-play games after it; the fair stones and how many are near even, and Black's score over
`fair_stone_games` more games after the fairest. All games of a stage advance in one batch
(catena_zero.komi.sweep.play_out).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from catena_zero.komi.config import AtlasConfig
from catena_zero.komi.intervals import score_interval, score_of_margin
from catena_zero.komi.opening import opening_sweep, symmetry_orbits
from catena_zero.komi.sweep import black_points, play_out
from catena_zero.mcts import SearchConfig, search
from catena_zero.rules import BLACK, Engine, Rules


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
