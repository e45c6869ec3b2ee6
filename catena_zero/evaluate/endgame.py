"""How well does a net judge the endgame? Its value and score against the exact solver.

Plays `games` games of the net's search (the run's search settings, deterministic root)
against one baseline (uct or random) at one komi (default: the net's self-play fair komi,
see `loading.komi_to_play`), colours alternated, from the empty board. Then replays every
game and, at each position with at most `max_legal` legal cells, compares the raw net (no
search) with the exact minimax solver (`catena_zero.mcts.endgame.ExactEndgame`):
- value: how often the sign of the net's value (p(win) - p(loss), side to move's view)
  is the exact result's, and the mean absolute error of its score head in margin points,
  per number of legal cells and per side to move (the net or its opponent);
- games: the exact result for the net at the first position of each game with at most
  `max_legal` legal cells, against the final result. "won, then lost" counts the endgames
  the net's search threw away, "lost, then won" the ones its opponent did.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from catena_zero.arena.agents import SearchAgent
from catena_zero.arena.match import play_match
from catena_zero.evaluate.config import EvaluateConfig
from catena_zero.evaluate.learning import REPORT_FORMAT_VERSION, baseline, write_report
from catena_zero.evaluate.loading import net_at_komi
from catena_zero.mcts.endgame import ExactEndgame
from catena_zero.rules import BLACK, WHITE, Engine

# (legal cells, net to move, net value, exact value, net score, exact margin)
JudgedPosition = tuple[int, bool, float, float, float, float]


def judge_game(engine: Engine, evaluator, endgame: ExactEndgame, actions: list[int],
               komi: int, net_colour: int, max_legal: int
               ) -> tuple[list[JudgedPosition], float | None]:
    """(rows, exact result for the net at the first small position or None): one row per
    position with <= max_legal legal cells, the values and margins from the side to move's
    view; the exact result is 1 (won), 0 (drawn) or -1 (lost)."""
    states = engine.new_games(1, komi=komi)
    rows, first = [], None
    for action in actions:
        legal = int(states.legal_cells[0].sum())
        if legal <= max_legal and not states.terminal[0]:
            exact_value, exact_margin = endgame.mover_values(states, np.array([0]))
            evaluation = evaluator(states)
            net_to_move = int(states.to_move[0]) == net_colour
            if first is None:
                first = float(exact_value[0]) * (1.0 if net_to_move else -1.0)
            rows.append((legal, net_to_move, float(evaluation.value[0]), float(exact_value[0]),
                         float(evaluation.score[0]), float(exact_margin[0])))
        engine.step(states, np.array([action]))
    return rows, first


def summarise(rows: list[JudgedPosition]) -> list[dict]:
    """Sign agreement and score error per (legal cells, side to move)."""
    groups: dict[tuple[int, str], list[tuple]] = defaultdict(list)
    for legal, net_to_move, value, exact, score, margin in rows:
        groups[(legal, "net" if net_to_move else "opponent")].append((value, exact, score, margin))
    table = []
    for (legal, mover), items in sorted(groups.items()):
        array = np.asarray(items, dtype=np.float64)
        table.append({
            "legal_cells": legal, "to_move": mover, "positions": len(items),
            "value_sign_agrees": float(np.mean(np.sign(array[:, 0]) == array[:, 1])),
            "score_abs_error": float(np.mean(np.abs(array[:, 2] - array[:, 3]))),
        })
    return table


def format_table(table: list[dict]) -> list[str]:
    """The printed table: one line per (legal cells, side to move), under a header."""
    lines = [f"{'legal':>5} {'to move':>8} {'positions':>9} {'sign agrees':>11} "
             f"{'score MAE':>9}"]
    for line in table:
        lines.append(f"{line['legal_cells']:>5} {line['to_move']:>8} {line['positions']:>9} "
                     f"{100 * line['value_sign_agrees']:>10.1f}% "
                     f"{line['score_abs_error']:>9.2f}")
    return lines


def endgame_accuracy(config: EvaluateConfig,
                     search_overrides: Mapping[str, Any] | None = None,
                     log: Callable[[str], None] = print) -> dict:
    """Play, replay and judge (module doc); the JSON report (also written to config.json)."""
    evaluated = net_at_komi(config, search_overrides)
    net, komi = evaluated.net, evaluated.komi.komi
    opponent = baseline(config.opponents[0], config)
    result = play_match(net.rules, SearchAgent(net.evaluator, evaluated.search), opponent,
                        config.games, komi=komi, seed=config.seed, opening_plies=0)
    log(f"{net.label}; {evaluated.komi.text}; {evaluated.search.num_simulations} "
        f"simulations against {opponent.name}: score {100 * result.score:.1f}%")
    endgame = ExactEndgame(net.rules)
    rows, transitions = [], defaultdict(int)
    for game in result.games:
        net_colour = BLACK if game.a_colour == "black" else WHITE
        game_rows, first = judge_game(net.engine, net.evaluator, endgame, game.actions, komi,
                                      net_colour, config.max_legal)
        rows.extend(game_rows)
        if first is not None:
            exact = {1.0: "won", 0.0: "drawn", -1.0: "lost"}[first]
            final = {1.0: "won", 0.5: "drawn", 0.0: "lost"}[game.a_points]
            transitions[f"{exact}, then {final}"] += 1
    table = summarise(rows)
    for line in format_table(table):
        log(line)
    log(f"exact result for the net at its first position with <= {config.max_legal} legal "
        f"cells, then the game's: {dict(sorted(transitions.items()))}")
    report = {"format": "catena_zero.evaluation.endgame",
              "format_version": REPORT_FORMAT_VERSION,
              "checkpoint": str(net.path), "komi": komi,
              "fair_komi_estimate": evaluated.komi.fair_komi_estimate,
              "simulations": evaluated.search.num_simulations, "opponent": opponent.name,
              "score": result.score, "max_legal": config.max_legal, "table": table,
              "transitions": dict(transitions)}
    write_report(config.json, report, indent=1)
    return report
