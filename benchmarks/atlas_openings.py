"""How varied the komi atlas's games are: distinct openings and distinct games by opening length.

    python -m benchmarks.atlas_openings --model catena_zero/play/models/general.pt \
        --sides 2 3 4 6 8 --shares 0.045 0.09 0.18 --games 64 --simulations 32

The atlas's self-play (`atlas.opening_moves` / `atlas.opening_share`) draws the first k moves
of each game from the search's visits at temperature 1 and plays the search's own choice
without noise after them, so a game is decided by its opening: games with the same opening
are the same game. Each game is an independent draw of an opening, so the atlas's binomial
intervals stay valid; what the opening length sets is how many different games the
estimate averages over (too few: the score moves with komi in a few big steps) and how far
the openings stray from the model's best play (too many: the balance measured is that of
weakened play). For each side and opening length this plays `--games` games at one komi
and prints the distinct openings, the distinct whole games (move for move; a rotated game
counts as another), Black's score, the mean moves a game and the seconds. One table, also
written as JSON (atomically) with --json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from catena_zero.data.atomic import atomic_write_text
from catena_zero.komi.atlas import atlas_agent, board_config
from catena_zero.komi.config import AtlasConfig
from catena_zero.mcts import SearchConfig
from catena_zero.rules import BLACK, EMPTY, NO_ACTION, Engine, Rules


def play_recorded(engine: Engine, agent, games: int, komi: int, seed: int,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Self-play `games` games at `komi`; returns the actions [G, T] (NO_ACTION after the
    end), Black's points [G] (1, 0.5, 0) and the moves a game [G]."""
    states = engine.new_games(games, komi=np.full(games, komi, dtype=np.int64))
    rng = np.random.default_rng([seed, 31])
    max_steps = engine.rules.board.num_actions * 2 + 2
    actions = np.full((games, max_steps), NO_ACTION, dtype=np.int64)
    for step in range(max_steps):
        active = np.flatnonzero(~states.terminal)
        if not len(active):
            break
        chosen = np.full(games, NO_ACTION, dtype=np.int64)
        chosen[active] = np.asarray(agent.select_actions(engine, states.take(active), rng))
        actions[:, step] = chosen
        engine.step(states, chosen)
    winner = np.asarray(engine.result(states).winner)
    points = np.where(winner == BLACK, 1.0, np.where(winner == EMPTY, 0.5, 0.0))
    return actions, points, np.asarray(states.move_number, dtype=np.float64)


def distinct_rows(array: np.ndarray) -> int:
    return int(len(np.unique(array, axis=0))) if array.shape[1] else 1


def measure(model_evaluator, side: int, share: float, games: int, simulations: int,
            komi: int | None, seed: int) -> dict:
    """One row of the table: the atlas agent of `share` on side `side` (komi/standard)."""
    rules = Rules(side=side)
    config = board_config(AtlasConfig(simulations=simulations, opening_share=share), rules)
    komi = rules.nearest_komi(rules.komi_range[1] / 2) if komi is None else komi
    agent = atlas_agent(rules, _Model(model_evaluator), SearchConfig(), config)
    started = time.perf_counter()
    actions, points, moves = play_recorded(Engine(rules), agent, games, komi, seed)
    seconds = time.perf_counter() - started
    return {"side": side, "share": share, "opening_moves": config.opening_moves, "komi": komi,
            "games": games, "distinct_openings": distinct_rows(actions[:, :config.opening_moves]),
            "distinct_games": distinct_rows(actions), "black_score": float(points.mean()),
            "mean_moves": float(moves.mean()), "seconds": round(seconds, 2)}


class _Model:
    """The slice of AtlasModel that atlas_agent reads."""

    def __init__(self, evaluator):
        self.evaluator, self.name = evaluator, "model"


def render(rows: list[dict]) -> str:
    lines = ["| side | share | opening moves | komi | games | distinct openings | "
             "distinct games | Black's score | moves | seconds |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['side']} | {row['share']} | {row['opening_moves']} | "
                     f"{row['komi']} | {row['games']} | {row['distinct_openings']} | "
                     f"{row['distinct_games']} | {row['black_score']:.3f} | "
                     f"{row['mean_moves']:.1f} | {row['seconds']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="model file or training checkpoint")
    parser.add_argument("--sides", type=int, nargs="+", default=[2, 3, 4, 6, 8])
    parser.add_argument("--shares", type=float, nargs="+", default=[0.045, 0.09, 0.18])
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--simulations", type=int, default=32)
    parser.add_argument("--komi", type=int, nargs="+", default=None,
                        help="one komi for every side or one per side (default: the middle "
                             "of each side's range)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the rows here")
    arguments = parser.parse_args(argv)
    from catena_zero.cli.common import InputFileError
    from catena_zero.cli.komi import load_atlas_model

    komis = arguments.komi or [None]
    if len(komis) == 1:
        komis = komis * len(arguments.sides)
    if any(not 2 <= side <= 10 for side in arguments.sides) or arguments.games < 1 or any(
            not 0 < share < 1 for share in arguments.shares) or len(komis) != len(
            arguments.sides):
        print("atlas_openings: sides must be 2..10, shares in (0, 1), games >= 1, and --komi "
              "one value or one per side", file=sys.stderr)
        return 2
    try:
        model = load_atlas_model(arguments.model, "cpu")
    except InputFileError as error:
        print(f"atlas_openings: {error}", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(1)
    rows = []
    for side, komi in zip(arguments.sides, komis, strict=True):
        for share in arguments.shares:
            rows.append(measure(model.evaluator, side, share, arguments.games,
                                arguments.simulations, komi, arguments.seed))
            print(render(rows[-1:]).splitlines()[-1], flush=True)
    print(render(rows))
    if arguments.json:
        atomic_write_text(Path(arguments.json), json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
