"""How well does a net judge the endgame? Its value and score against the exact solver.

Plays --games games of the net's search (--simulations, the run's search settings,
deterministic root) against uct:N or random at one komi (default: the net's self-play fair
komi, as in evaluate_learning.py), colours alternated, from the empty board. Then replays
every game and, at each position with at most --max-legal legal cells, compares the raw
net (no search) with the exact minimax solver (`catena_zero.mcts.endgame.ExactEndgame`):
- value: how often the sign of the net's value (p(win) - p(loss), side to move's view)
  is the exact result's, and the mean absolute error of its score head in margin points,
  per number of legal cells and per side to move (the net or its opponent);
- games: the exact result for the net at the first position of each game with at most
  --max-legal legal cells, against the final result. "won, then lost" counts the endgames
  the net's search threw away, "lost, then won" the ones its opponent did.

    python scripts/endgame_accuracy.py --run-dir runs/side4-reuse-lr5-seed0 --komi 10
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from evaluate_learning import (  # noqa: E402  (a sibling script)
    add_checkpoint_arguments,
    add_komi_arguments,
    add_opponent_arguments,
    net_at_komi,
    opponent_of,
)

from catena_zero.arena.agents import SearchAgent  # noqa: E402
from catena_zero.arena.match import play_match  # noqa: E402
from catena_zero.data.atomic import atomic_write_text  # noqa: E402
from catena_zero.mcts.endgame import ExactEndgame  # noqa: E402
from catena_zero.rules import BLACK, WHITE, Engine  # noqa: E402


def judge_game(engine: Engine, evaluator, endgame: ExactEndgame, actions: list[int],
               komi: int, net_colour: int, max_legal: int):
    """(rows, exact result for the net at the first small position or None): one row per
    position with <= max_legal legal cells: (legal cells, net to move, net value, exact
    value, net score, exact margin), the values and margins from the side to move's view."""
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


def summarise(rows: list[tuple]) -> list[dict]:
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_checkpoint_arguments(parser)
    parser.add_argument("--games", type=int, default=100, help="games (even; colours alternate)")
    add_opponent_arguments(parser)
    parser.add_argument("--max-legal", type=int, default=10,
                        help="judge positions with at most this many legal cells")
    add_komi_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default="", help="also write the JSON here")
    args = parser.parse_args(argv)
    if args.games < 2 or args.games % 2:
        parser.error(f"--games must be an even number >= 2, got {args.games}")
    if args.max_legal < 1:
        parser.error(f"--max-legal must be >= 1, got {args.max_legal}")
    net = net_at_komi(parser, args)
    rules, engine, evaluator, komi = net.rules, net.engine, net.evaluator, net.komi
    opponent = opponent_of(args)
    result = play_match(rules, SearchAgent(evaluator, net.search), opponent, args.games, komi=komi,
                        seed=args.seed, opening_plies=0)
    print(f"checkpoint {net.path}; {net.komi_text}; {args.simulations} simulations against "
          f"{opponent.name}: score {100 * result.score:.1f}%", flush=True)
    endgame = ExactEndgame(rules)
    rows, transitions = [], defaultdict(int)
    for game in result.games:
        net_colour = BLACK if game.a_colour == "black" else WHITE
        game_rows, first = judge_game(engine, evaluator, endgame, game.actions, komi,
                                      net_colour, args.max_legal)
        rows.extend(game_rows)
        if first is not None:
            exact = {1.0: "won", 0.0: "drawn", -1.0: "lost"}[first]
            final = {1.0: "won", 0.5: "drawn", 0.0: "lost"}[game.a_points]
            transitions[f"{exact}, then {final}"] += 1
    table = summarise(rows)
    print(f"{'legal':>5} {'to move':>8} {'positions':>9} {'sign agrees':>11} {'score MAE':>9}")
    for line in table:
        print(f"{line['legal_cells']:>5} {line['to_move']:>8} {line['positions']:>9} "
              f"{100 * line['value_sign_agrees']:>10.1f}% {line['score_abs_error']:>9.2f}")
    print(f"exact result for the net at its first position with <= {args.max_legal} legal "
          f"cells, then the game's: {dict(sorted(transitions.items()))}")
    report = {"checkpoint": str(net.path), "komi": komi, "fair_komi_estimate": net.fair_komi,
              "simulations": args.simulations, "opponent": opponent.name,
              "score": result.score, "max_legal": args.max_legal, "table": table,
              "transitions": dict(transitions)}
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
