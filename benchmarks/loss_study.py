"""Where the default player loses to outside players: matches with every game kept, then a
study of each lost game.

    python -m benchmarks.loss_study play --model catena_zero/play/models/general.pt \
        --opponent uct:1000 --opponent uct:200 --games 200 --out runs/loss
    python -m benchmarks.loss_study analyse --games-file runs/loss/games.json \
        --shards runs/general6/shards --out runs/loss

`play` plays the model at the default player's search (`PlayerConfig`, one leaf per call
as in every recorded match; `--search FIELD=VALUE` changes a field of it) against each
opponent on one track at its fair komi (as `benchmarks.general_targets` finds it), colours
alternating, and writes `games.json`: each player named by its file's SHA-256 and its
search settings, every game's actions, and one SGF per game under `sgf/`; `matches` is
keyed by match name (`side6-uct1000`) as in `benchmarks.general_targets` reports, each with
its result and its games.

`analyse` (`benchmarks/loss_analysis.py`) replays every game, evaluates the network on every
position and finds, for each lost game, the ply from which the network's value stays on the
losing side for good (the turning point), its phase by the share of cells filled, whether a
deep search (many times the simulations) or, with few legal cells left, the exact solver
prefers another move at the model's last move before it, and how the network's value loss
and policy entropy on the lost games' positions compare with its own self-play positions.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from benchmarks.general_targets import FairKomi, network_spec
from benchmarks.search_settings_match import replace_fields
from catena_zero.arena.match import play_match
from catena_zero.arena.specs import AgentFactory, player_record
from catena_zero.data.atomic import atomic_write_text
from catena_zero.data.game_record import record_from_actions, save_record
from catena_zero.export.evaluator import read_model_network
from catena_zero.play.model_player import PlayerConfig
from catena_zero.rules import Track

FORMAT = "catena_zero.loss_study_games"
FORMAT_VERSION = 1


def play(arguments: argparse.Namespace, log=print) -> dict:
    """Play the model against every opponent; the games file's content (also written)."""
    model_path = Path(arguments.model)
    if not model_path.is_file():
        raise ValueError(f"--model {model_path}: no such file")
    track = Track.parse(arguments.track)
    rules = track.rules()
    spec = network_spec(model_path)
    search = replace_fields(PlayerConfig(simulations=arguments.simulations,
                                         leaves_per_call=1).search_config(),
                            arguments.search, "loss_study")
    factory = AgentFactory(rules, search, "cpu", model_reader=read_model_network)
    komi, komi_source = (arguments.komi, "given") if arguments.komi is not None else (
        FairKomi(model_path, factory, spec, {})(str(track)))
    out = Path(arguments.out)
    (out / "sgf").mkdir(parents=True, exist_ok=True)
    report = {"format": FORMAT, "format_version": FORMAT_VERSION, "track": str(track),
              "komi": komi, "komi_source": komi_source, "seed": arguments.seed,
              "model": player_record(spec, search), "matches": {}}
    model = factory(spec)
    for index, opponent in enumerate(arguments.opponent):
        started = time.perf_counter()
        result = play_match(rules, model, factory(opponent), arguments.games, komi=komi,
                            seed=arguments.seed + index, name_a="model", name_b=opponent)
        games = []
        for game in result.games:
            black, white = ("model", opponent) if game.a_colour == "black" else (
                opponent, "model")
            record = record_from_actions(rules, komi, game.actions, black_player=black,
                                         white_player=white)
            name = f"{opponent.replace(':', '')}-{game.index:03d}.sgf"
            save_record(out / "sgf" / name, record)
            games.append({**dataclasses.asdict(game), "sgf": f"sgf/{name}"})
        summary = result.to_dict()
        summary.pop("games")
        name = f"side{track.side}-{opponent.replace(':', '')}"
        report["matches"][name] = {"name": name, "opponent": player_record(opponent, None),
                                   "result": summary, "games": games,
                                   "seconds": time.perf_counter() - started}
        atomic_write_text(out / "games.json", json.dumps(report, indent=1) + "\n")
        log(f"model vs {opponent}: {result.wins}-{result.losses}"
            f"{f'-{result.draws}' if result.draws else ''} score {result.score:.3f} "
            f"[{result.interval[0]:.3f}, {result.interval[1]:.3f}] "
            f"({time.perf_counter() - started:.0f} s)")
    return report


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    play_parser = commands.add_parser("play", help="play and keep every game")
    play_parser.add_argument("--model", default="catena_zero/play/models/general.pt")
    play_parser.add_argument("--opponent", action="append", default=[],
                             help="arena agent spec (repeatable), e.g. uct:1000")
    play_parser.add_argument("--track", default="6/komi/standard")
    play_parser.add_argument("--komi", type=int, default=None,
                             help="komi (default: the track's fair komi)")
    play_parser.add_argument("--games", type=int, default=200)
    play_parser.add_argument("--simulations", type=int, default=128)
    play_parser.add_argument("--search", action="append", default=[], metavar="FIELD=VALUE",
                             help="change a field of the model's search (SearchConfig, e.g. "
                                  "rollout_mix=0; repeatable)")
    play_parser.add_argument("--seed", type=int, default=0)
    play_parser.add_argument("--out", default="runs/loss")
    from benchmarks.loss_analysis import add_arguments

    add_arguments(commands.add_parser("analyse", help="study the lost games"))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    import torch

    torch.set_num_threads(1)
    try:
        if arguments.command == "play":
            if not arguments.opponent:
                raise ValueError("play: name at least one --opponent")
            play(arguments)
        else:
            from benchmarks.loss_analysis import analyse

            analyse(arguments)
    except (ValueError, OSError) as error:
        print(f"loss_study: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
