"""Where a net's search loses: its root value at each of its moves against a baseline.

Plays --games games with the net as Black and as many as White, all from the empty board at
one komi (default: the komi where the net's own self-play is even, measured by a sweep as
in evaluate_learning.py; --komi-from network reads the empty board's value instead),
against uct:N or random. At every move
of the net it keeps the search's root value (the net's own view, in [-1, 1]). Prints the
wins per colour, the mean root value at each of the net's moves in won and in lost games,
and for lost games the net's last move that still expected a win (value > 0): a late last
"winning" move with a collapse after it points at endgame misjudgement, an early one at
the opening. JSON with every trajectory goes to --json.

    python scripts/value_trajectories.py --run-dir runs/side4-ray2 --komi 10 --games 100
"""

from __future__ import annotations

import argparse
import json
import sys
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
from catena_zero.data.atomic import atomic_write_text  # noqa: E402
from catena_zero.rules import BLACK, NO_ACTION, WHITE, Engine  # noqa: E402


def trace_games(engine: Engine, agent: SearchAgent, opponent, colour: int, games: int,
                komi: int, rng: np.random.Generator) -> tuple[np.ndarray, list[list[float]]]:
    """(won [G] bool, root values of the agent's moves per game), all games played together
    from the empty board with the agent playing `colour`."""
    states = engine.new_games(games, komi=komi)
    values: list[list[float]] = [[] for _ in range(games)]
    while not states.terminal.all():
        live = np.flatnonzero(~states.terminal)
        actions = np.full(games, NO_ACTION, dtype=np.int64)
        ours = live[states.to_move[live] == colour]
        theirs = live[states.to_move[live] != colour]
        if ours.size:
            actions[ours] = agent.select_actions(engine, states.take(ours), rng)
            for game, value in zip(ours, agent.last_output.root_value, strict=True):
                values[game].append(float(value))
        if theirs.size:
            actions[theirs] = opponent.select_actions(engine, states.take(theirs), rng)
        engine.step(states, actions)
    return engine.result(states).winner == colour, values


def mean_by_move(trajectories: list[list[float]]) -> list[float | None]:
    """Mean value at the agent's k-th move over the games that reached it."""
    length = max((len(t) for t in trajectories), default=0)
    means = []
    for k in range(length):
        reached = [t[k] for t in trajectories if len(t) > k]
        means.append(round(float(np.mean(reached)), 3) if reached else None)
    return means


def last_winning_move(trajectory: list[float]) -> int:
    """Index of the last move whose value was > 0 (-1 if none)."""
    positive = [k for k, value in enumerate(trajectory) if value > 0]
    return positive[-1] if positive else -1


def summarise(won: np.ndarray, values: list[list[float]]) -> dict:
    lost = [values[g] for g in np.flatnonzero(~won)]
    last = [last_winning_move(t) for t in lost]
    return {
        "games": int(won.size),
        "wins": int(won.sum()),
        "mean_value_won": mean_by_move([values[g] for g in np.flatnonzero(won)]),
        "mean_value_lost": mean_by_move(lost),
        "lost_last_winning_move": last,
        "lost_moves": [len(t) for t in lost],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_checkpoint_arguments(parser)
    parser.add_argument("--games", type=int, default=100, help="games per colour")
    add_opponent_arguments(parser)
    add_komi_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default="", help="also write the JSON here")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be >= 1, got {args.games}")
    net = net_at_komi(parser, args)
    agent = SearchAgent(net.evaluator, net.search)
    opponent = opponent_of(args)
    rng = np.random.default_rng(args.seed)
    engine, komi = net.engine, net.komi
    report = {"checkpoint": str(net.path), "komi": komi, "fair_komi_estimate": net.fair_komi,
              "selfplay_fair_komi": net.selfplay, "komi_from": net.komi_source,
              "simulations": args.simulations, "opponent": opponent.name}
    print(f"checkpoint {net.path}; {net.komi_text}; {args.simulations} simulations against "
          f"{opponent.name}")
    for name, colour in (("black", BLACK), ("white", WHITE)):
        won, values = trace_games(engine, agent, opponent, colour, args.games, komi, rng)
        summary = summarise(won, values) | {"trajectories": values}
        report[name] = summary
        last = summary["lost_last_winning_move"]
        print(f"as {name}: {summary['wins']}/{summary['games']} won")
        print(f"  mean value per move, won : {summary['mean_value_won']}")
        print(f"  mean value per move, lost: {summary['mean_value_lost']}")
        if last:
            print(f"  lost games: last move still expecting a win, median "
                  f"{float(np.median(last)):.1f} of {float(np.median(summary['lost_moves'])):.1f}"
                  f" moves; never expected one in {sum(k < 0 for k in last)} of {len(last)}")
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
