"""One model, two search settings: a match that says whether a faster search plays as well.

    python -m benchmarks.search_settings_match --side 6 --games 200 \
        --a leaves_per_call=1 --b leaves_per_call=32
    python -m benchmarks.search_settings_match --seconds 1.0 --a leaves_per_call=1 \
        --b leaves_per_call=32 threads=2          # equal time per move instead

Both players are the bundled model of the side (or `--model`), searching with the default
player's settings (`catena_zero.play.model_player.PlayerConfig`) changed by `--a` and `--b`
(`field=value` pairs of PlayerConfig). With `--seconds`, every move gets that many seconds
and the simulations are only a cap (`--simulations-cap`), so the match compares strength at
equal time; the players then take turns game by game, one search at a time, as people and
GUIs use them. Without it the games run batched (`catena_zero.arena.match.play_match`), at
equal simulations. Colours alternate, the komi is the fair komi the model file records for
the track (or `--komi`), and the result carries its Wilson 95% interval.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from typing import Any

import numpy as np

from catena_zero.arena.agents import SearchAgent
from catena_zero.arena.match import make_openings, play_match
from catena_zero.arena.stats import wilson_interval
from catena_zero.export.evaluator import model_file_evaluator
from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.rules import Engine, Game, Rules, Track


def is_setting(pair: str, names: list[str] | set[str]) -> bool:
    """Whether `pair` is FIELD=VALUE with FIELD one of `names` and VALUE not empty."""
    name, _, text = pair.partition("=")
    return name in names and bool(text)


def replace_fields(base: Any, pairs: list[str], program: str = "search_settings_match") -> Any:
    """The dataclass `base` with `field=value` pairs applied (ints, floats and booleans parsed;
    the dataclass's own checks run). A pair naming no field exits with one line."""
    names = [field.name for field in dataclasses.fields(base)]
    changes: dict[str, object] = {}
    for pair in pairs:
        if not is_setting(pair, names):
            raise SystemExit(f"{program}: bad setting {pair!r}; expected "
                             f"FIELD=VALUE with FIELD one of {', '.join(names)}")
        name, _, text = pair.partition("=")
        value: object = text
        for parse in (int, float):
            try:
                value = parse(text)
                break
            except ValueError:
                continue
        if text.lower() in ("true", "false"):
            value = text.lower() == "true"
        changes[name] = value
    return dataclasses.replace(base, **changes)


def player_config(pairs: list[str], base: PlayerConfig) -> PlayerConfig:
    """`base` with `field=value` pairs of PlayerConfig applied."""
    return replace_fields(base, pairs)


def fair_komi(library: ModelLibrary, rules: Rules) -> int:
    track = str(Track.parse(rules))
    for recorded in library.get(rules).metadata.tracks:
        if str(recorded) == track and recorded.fair_komi is not None:
            return rules.nearest_komi(recorded.fair_komi)
    return rules.nearest_komi(None)


def timed_games(rules: Rules, komi: int, players: dict[str, ModelPlayer], seconds: float,
                games: int, seed: int) -> tuple[float, dict[str, float]]:
    """Games one search at a time, `seconds` a move; A's score and each side's mean
    simulations a move."""
    engine = Engine(rules)
    openings, _, _ = make_openings(engine, games // 2, 2, komi, seed, None)
    score, visits, moves = 0.0, {"a": 0, "b": 0}, {"a": 0, "b": 0}
    for index in range(games):
        game = Game(rules, komi=komi)
        opening = openings.take(np.array([index // 2]))
        game.state = opening
        a_colour = 1 if index % 2 == 0 else 2
        while not game.is_over:
            name = "a" if game.to_move == a_colour else "b"
            player = players[name]
            output = player._search(rules, game.state, seconds=seconds)
            visits[name] += int(output.visit_counts.sum())
            moves[name] += 1
            game.play(int(output.action[0]))
        winner, _ = game.result()
        score += 1.0 if int(winner) == a_colour else 0.0
        print(f"game {index + 1}: A {'won' if int(winner) == a_colour else 'lost'} "
              f"({score:g}/{index + 1})", file=sys.stderr, flush=True)
    return score, {name: visits[name] / max(moves[name], 1) for name in visits}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=6)
    parser.add_argument("--model", default=None, help="model file (default: bundled)")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--komi", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=None, help="seconds a move")
    parser.add_argument("--simulations-cap", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--a", nargs="*", default=[], help="PlayerConfig changes of A")
    parser.add_argument("--b", nargs="*", default=[], help="PlayerConfig changes of B")
    args = parser.parse_args(argv)
    rules = Rules(side=args.side)
    library = ModelLibrary(args.model)
    base = PlayerConfig()
    if args.seconds is not None:
        base = dataclasses.replace(base, simulations=args.simulations_cap)
    configs = {"a": player_config(args.a, base), "b": player_config(args.b, base)}
    komi = args.komi if args.komi is not None else fair_komi(library, rules)
    start = time.monotonic()
    if args.seconds is None:
        engine = Engine(rules)
        agents = [SearchAgent(model_file_evaluator(library.get(rules), engine,
                                                   configs[name].precision),
                              configs[name].search_config(), name=name) for name in "ab"]
        result = play_match(rules, agents[0], agents[1], args.games, komi=komi,
                            seed=args.seed)
        score, per_move = result.wins + 0.5 * result.draws, None
    else:
        players = {}
        for name in "ab":
            players[name] = ModelPlayer(library, configs[name])
            players[name].warm_up(rules)
        score, per_move = timed_games(rules, komi, players, args.seconds, args.games, args.seed)
    low, high = wilson_interval(score, args.games)
    pace = f"{args.seconds:g} s a move" if args.seconds else "equal simulations"
    print(f"side {args.side} komi {komi}, {args.games} games, {pace}")
    for name in "ab":
        changed = args.a if name == "a" else args.b
        extra = f", {per_move[name]:.0f} simulations a move" if per_move else ""
        print(f"  {name.upper()}: {' '.join(changed) or 'defaults'}{extra}")
    print(f"A scores {100 * score / args.games:.1f}% [{100 * low:.1f}, {100 * high:.1f}] "
          f"({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
