"""Targets benchmark of a size-general network: recorded matches on every track it should play.

For one model file or checkpoint, each match is played batched (`catena_zero.arena.match`),
colours alternating, at the track's fair komi, and scored with its Wilson 95% interval:

    side6-greedy, side6-uct200, side6-uct1000       6/komi/standard against the baselines
    side{7,8,10}-greedy, side{7,8,10}-uct200         the larger boards
    side4-champion                                   head to head against the bundled side4.pt
    side6-transfer                                   against the bundled side6.pt, or the
                                                     single-side net of --transfer-opponent
    side{4,5}-uct200, side{4,5}-uct1000              the smaller boards' outside anchors
    side6-uct3000                                    the strongest anchor of side 6 (about
                                                     2.5 times the time of uct:1000)
    side3-optimal-komi10, side3-optimal-komi11       the share of the model's moves in its own
                                                     games that the exact solver finds optimal
    variant-side{4,6}-GAME-SCORING                   every one of the 9 variants against greedy

The fair komi of a track is, first found: `--komi TRACK=K`; the exact value (sides 2-3, by
the solver); the fair komi the file records for that track (a model file's metadata, a
checkpoint's run estimate); the network's own estimate (the empty-board value crossing
zero). A variant without komi plays its only komi.

The report names every player by its spec, its file's SHA-256 (network players) and its
search settings (`model_player`, and each match's `opponent_player`); a resumed report of
another model file is refused.

Each finished match is written at once (atomically) to the JSON, with a Markdown table beside
it (same name, .md), so a long run can be interrupted and continued with `--resume`.

    python -m benchmarks.general_targets model=catena_zero/play/models/general.pt
    python -m benchmarks.general_targets --model M --games 20 --simulations 16 --only 'side6-*'
    python -m benchmarks.general_targets --model M --resume --json runs/targets.json
    python -m benchmarks.general_targets --list                 # the match names
    python -m benchmarks.general_targets --model M --only side6-uct200 --search algorithm=puct
    python -m benchmarks.general_targets --model M --resume --json R.json --ratings-out E.json
    python -m benchmarks.general_targets --model G --only side6-transfer --transfer-opponent S

`--transfer-opponent S` plays `side6-transfer` against the model file or checkpoint S (a
side-6-only net trained as long as the model, for the transfer at equal training time)
instead of the bundled side6.pt. A resumed match whose opponent differs is played again.

The model searches as the default player does (`PlayerConfig`); `--search FIELD=VALUE`
(repeatable) changes a field of that search (`SearchConfig`: `--search algorithm=puct`), and
the report records the changes, so a report of another search is not resumed.

`--ratings-out` writes the model's Elo on every track it played against greedy (the records
of a track's greedy matches summed; `catena_zero.export.ratings`), for
`catena-zero export ratings=E.json` to record in the model file.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.search_settings_match import is_setting, replace_fields
from catena_zero.arena.match import play_match
from catena_zero.arena.specs import AgentFactory, network_file_kind, player_record
from catena_zero.data.atomic import atomic_write_text
from catena_zero.data.file_history import same_content_hashes
from catena_zero.export.evaluator import read_model_network
from catena_zero.export.model_file import read_metadata
from catena_zero.export.ratings import Ratings, elo_from_record, write_ratings
from catena_zero.komi.strength import OptimalityProbe
from catena_zero.mcts.config import SearchConfig
from catena_zero.play.bundled import bundled_model_path
from catena_zero.play.model_player import PlayerConfig
from catena_zero.rules import Rules, Track

FORMAT = "catena_zero.general_targets"
FORMAT_VERSION = 1
DEFAULT_GAMES = 200
DEFAULT_SIMULATIONS = 128  # what play and gtp search with (catena_zero.play.model_player)
GAME_TYPES = ("komi", "nokomi", "double")
SCORINGS = ("standard", "longest", "quadratic")


@dataclass(frozen=True)
class Target:
    """One recorded match: the model (agent A) against `opponent` on `track`."""

    name: str  # "side6-uct200"
    track: str  # "6/komi/standard"
    opponent: str  # an arena agent spec, or "self" (the solver-optimality games)
    komi: int | None = None  # None: the track's fair komi


def targets(transfer_opponent: str = "") -> list[Target]:
    """Every match of the benchmark, in the order it runs; `transfer_opponent` (an arena agent
    spec) replaces the bundled side6.pt in `side6-transfer`."""
    found = [Target(f"side6-{name}", "6/komi/standard", spec)
             for name, spec in (("greedy", "greedy"), ("uct200", "uct:200"),
                                ("uct1000", "uct:1000"))]
    for side in (7, 8, 10):
        found += [Target(f"side{side}-{name}", f"{side}/komi/standard", spec)
                  for name, spec in (("greedy", "greedy"), ("uct200", "uct:200"))]
    found.append(Target("side4-champion", "4/komi/standard", f"model:{bundled_model_path(4)}"))
    found += [Target(f"side3-optimal-komi{komi}", "3/komi/standard", "self", komi)
              for komi in (10, 11)]
    for side in (4, 6):
        found += [Target(f"variant-side{side}-{game_type}-{scoring}",
                         f"{side}/{game_type}/{scoring}", "greedy")
                  for game_type in GAME_TYPES for scoring in SCORINGS]
    found.append(Target("side6-transfer", "6/komi/standard",
                        transfer_opponent or f"model:{bundled_model_path(6)}"))
    # Outside anchors of the smaller boards, last so that earlier reports keep their seeds.
    for side in (4, 5):
        found += [Target(f"side{side}-{name}", f"{side}/komi/standard", spec)
                  for name, spec in (("uct200", "uct:200"), ("uct1000", "uct:1000"))]
    # The strongest anchor of the side-6 scale: a rollout MCTS the side-6 player does not
    # beat 95% of the time, so that the top of the scale does not saturate.
    found.append(Target("side6-uct3000", "6/komi/standard", "uct:3000"))
    return found


def select(all_targets: list[Target], only: str) -> list[Target]:
    """The targets whose name matches one of the comma-separated patterns of `only` (all
    when empty); ValueError naming a pattern that matches none."""
    if not only:
        return list(all_targets)
    patterns = [pattern.strip() for pattern in only.split(",") if pattern.strip()]
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(target.name, pattern) for target in all_targets):
            raise ValueError(f"--only {pattern!r} matches no match name (see --list)")
    return [target for target in all_targets
            if any(fnmatch.fnmatchcase(target.name, pattern) for pattern in patterns)]


class FairKomi:
    """The komi each track is played at, and where it came from (module docstring)."""

    def __init__(self, model_path: Path, factory: AgentFactory, spec: str,
                 given: dict[str, int]) -> None:
        self.factory = factory
        self.spec = spec
        self.given = given
        self.recorded: dict[str, float] = {}  # by track: what the file says is fair
        if network_file_kind(model_path) == "model":
            self.recorded_by = "model file"
            for track in read_metadata(model_path).tracks:
                if track.fair_komi is not None:
                    self.recorded[str(track)] = track.fair_komi
        else:  # a training run keeps its smoothed estimate of every track it played
            from catena_zero.train.checkpoint import load_checkpoint

            self.recorded_by = "the run's estimate"
            recorded = load_checkpoint(model_path).extra.get("fair_komis") or {}
            for key, value in recorded.items():
                self.recorded[str(Track.parse(key))] = float(value)
        self._cache: dict[str, tuple[int, str]] = {}

    def __call__(self, track: str) -> tuple[int, str]:
        """(komi, source) of `track` ("6/komi/standard")."""
        if track not in self._cache:
            self._cache[track] = self._find(Track.parse(track))
        return self._cache[track]

    def _find(self, track: Track) -> tuple[int, str]:
        rules = track.rules()
        low, high = rules.komi_range
        if str(track) in self.given:
            komi = self.given[str(track)]
            rules.validate_komi(komi)
            return komi, "given"
        if low == high:
            return int(low), "the variant's only komi"
        if track.side <= 3:
            from catena_zero.komi.config import SolveConfig
            from catena_zero.komi.exact import solve_exact

            fair = solve_exact(rules, SolveConfig(cache_path="", use_cache=False,
                                                 move_values=False)
                               ).get("fair_komi")
            if fair is not None:
                return int(rules.nearest_komi(fair)), f"exact {fair:g}"
        if str(track) in self.recorded:
            fair = self.recorded[str(track)]
            return int(rules.nearest_komi(fair)), f"{self.recorded_by} {fair:.2f}"
        from catena_zero.komi.fair import estimate_fair_komi
        from catena_zero.rules import Engine

        evaluator = self.factory.for_rules(rules).evaluator(self.spec.partition(":")[2])
        fair = estimate_fair_komi(Engine(rules), evaluator)
        return int(rules.nearest_komi(fair)), f"network estimate {fair:.2f}"


def play_target(target: Target, model_spec: str, factory: AgentFactory, fair_komi: FairKomi,
                games: int, seed: int) -> dict:
    """Play one target; its JSON-ready record."""
    rules = Track.parse(target.track).rules()
    track_factory = factory.for_rules(rules)
    komi, source = (target.komi, "given by the match") if target.komi is not None else (
        fair_komi(target.track))
    started = time.perf_counter()
    record: dict[str, Any] = {"name": target.name, "track": target.track,
                              "opponent": target.opponent, "komi": komi,
                              "komi_source": source, "games": games}
    model = track_factory(model_spec)
    if target.opponent == "self":
        probe = OptimalityProbe(model)
        result = play_match(rules, probe, probe, games, komi=komi, seed=seed,
                            name_a="model", name_b="model")
        record["optimality"] = probe.report()
    else:
        result = play_match(rules, model, track_factory(target.opponent), games, komi=komi,
                            seed=seed, name_a="model", name_b=target.opponent)
    summary = result.to_dict()
    summary.pop("games")  # every move of every game: the counts are what the table needs
    record["result"] = summary
    if target.opponent != "self":
        record["opponent_player"] = player_record(target.opponent, opponent_search(
            target.opponent, factory))
    record["seconds"] = time.perf_counter() - started
    return record


def markdown_table(report: dict) -> str:
    """The report's matches as a Markdown table."""
    lines = [f"Model `{report['model']}`, {report['settings']['simulations']} simulations per "
             f"move, colours alternating; score = the model's points per game (draws half), "
             f"Wilson 95% interval.", "",
             "| match | track | komi | opponent | games | score | 95% interval | seconds |",
             "|---|---|---|---|---:|---:|---|---:|"]
    for record in report["matches"].values():
        result = record["result"]
        if "optimality" in record:
            optimal = record["optimality"]
            margin, keeping = optimal["margin_optimal"], optimal["result_keeping"]
            score = (f"{margin['share']:.1%} optimal, {keeping['share']:.1%} result-keeping "
                     f"({optimal['moves']} moves)")
            interval = f"[{margin['interval'][0]:.3f}, {margin['interval'][1]:.3f}]"
        else:
            score = f"{result['score']:.3f}"
            interval = f"[{result['interval'][0]:.3f}, {result['interval'][1]:.3f}]"
        lines.append(f"| {record['name']} | {record['track']} | {record['komi']} "
                     f"({record['komi_source']}) | {record['opponent']} | {record['games']} "
                     f"| {score} | {interval} | {record['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def write_report(path: Path, report: dict) -> None:
    """The JSON and its Markdown table beside it, each written atomically."""
    atomic_write_text(path, json.dumps(report, indent=1) + "\n")
    atomic_write_text(path.with_suffix(".md"), markdown_table(report))


def load_resumed(path: Path, settings: dict, sha256: str = "") -> dict:
    """The matches already in `path` (a report of the same settings and, where it names one,
    the model file of SHA-256 `sha256` or of its earlier bytes, catena_zero.data.file_history);
    {} when absent. ValueError naming the file when it is another format, other settings or
    another model."""
    if not path.exists():
        return {}
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"--resume {path}: unreadable ({error})") from None
    if not isinstance(report, dict) or report.get("format") != FORMAT or (
            report.get("format_version") != FORMAT_VERSION):
        raise ValueError(f"--resume {path}: not a {FORMAT} v{FORMAT_VERSION} report")
    if report.get("settings") != settings:
        raise ValueError(f"--resume {path}: recorded with other settings "
                         f"{report.get('settings')}, now {settings}")
    recorded = (report.get("model_player") or {}).get("sha256")
    # A file rewritten with the same metadata and weights resumes the report it began.
    if sha256 and recorded and recorded not in same_content_hashes(sha256):
        raise ValueError(f"--resume {path}: recorded with the model of SHA-256 "
                         f"{recorded[:16]}..., now {sha256[:16]}...")
    return dict(report.get("matches") or {})


def parse_komis(items: list[str]) -> dict[str, int]:
    """`--komi 6/komi/standard=7` items as {track: komi}."""
    komis = {}
    for item in items:
        track, separator, value = item.partition("=")
        if not separator or not value.lstrip("-").isdigit():
            raise ValueError(f"--komi {item!r}: expected TRACK=K, e.g. 6/komi/standard=7")
        komis[str(Track.parse(track))] = int(value)
    return komis


def opponent_search(spec: str, factory: AgentFactory) -> SearchConfig | None:
    """The search a network opponent plays with (the factory's), None for the others."""
    return factory.search_config if spec.partition(":")[0] in ("model", "checkpoint") else None


def network_spec(path: Path) -> str:
    """The arena agent spec of a network file: "model:PATH" or "checkpoint:PATH", by its
    header."""
    return f"{network_file_kind(path)}:{path}"


def run(arguments: argparse.Namespace, log: Callable[[str], None] = print) -> dict:
    """Play the selected targets (skipping those of a resumed report); the report."""
    opponent = ""
    if arguments.transfer_opponent:
        opponent_path = Path(arguments.transfer_opponent)
        if not opponent_path.is_file():
            raise ValueError(f"--transfer-opponent {opponent_path}: no such file")
        opponent = network_spec(opponent_path)
    chosen = select(targets(opponent), arguments.only)
    model_path = Path(arguments.model)
    spec = network_spec(model_path)
    # The search play and gtp use (no root noise), at the asked budget and endgame solving.
    # One leaf per tree per call: the matches' batch is their games, as in self-play, and
    # the recorded figures were measured so.
    search = PlayerConfig(simulations=arguments.simulations, leaves_per_call=1,
                          exact_endgame_cells=arguments.exact_endgame_cells).search_config()
    # --search changes fields of that search (SearchConfig's checks name a bad value).
    search = replace_fields(search, arguments.search, "general_targets")
    factory = AgentFactory(Rules(side=6), search, "cpu", model_reader=read_model_network)
    settings = {"games": arguments.games, "simulations": arguments.simulations,
                "exact_endgame_cells": arguments.exact_endgame_cells,
                "seed": arguments.seed, "komi": parse_komis(arguments.komi)}
    if arguments.search:  # absent otherwise, so reports written before --search resume
        settings["search"] = list(arguments.search)
    out = Path(arguments.json)
    model_player = player_record(spec, search)
    matches = load_resumed(out, settings, model_player["sha256"]) if arguments.resume else {}
    report = {"format": FORMAT, "format_version": FORMAT_VERSION, "model": str(model_path),
              "model_player": model_player, "settings": settings,
              "matches": matches}
    fair_komi = FairKomi(model_path, factory, spec, settings["komi"])
    started = time.perf_counter()
    for index, target in enumerate(chosen):
        if matches.get(target.name, {}).get("opponent") == target.opponent:
            log(f"[{index + 1}/{len(chosen)}] {target.name}: recorded, skipped")
            continue
        record = play_target(target, spec, factory, fair_komi, arguments.games,
                             arguments.seed + index)
        matches[target.name] = record
        write_report(out, report)
        log(f"[{index + 1}/{len(chosen)}] {target.name}: {describe(record)} "
            f"({record['seconds']:.1f} s)")
    report["seconds"] = time.perf_counter() - started
    log(f"total {report['seconds']:.1f} s for {len(chosen)} matches; wrote {out} and "
        f"{out.with_suffix('.md')}")
    if arguments.ratings_out:
        ratings = greedy_ratings(report)
        if not ratings.elos:
            raise ValueError("--ratings-out: the report has no match against greedy to rate "
                             "a track by")
        write_ratings(arguments.ratings_out, ratings)
        log(f"wrote {arguments.ratings_out}: Elo against greedy on "
            f"{len(ratings.elos)} tracks")
    return report


def greedy_ratings(report: dict) -> Ratings:
    """The model's Elo over greedy on each track of the report's greedy matches (a track's
    records summed when it has several, as side6-greedy and its variant twin)."""
    records: dict[Track, np.ndarray] = {}
    for record in report["matches"].values():
        if record.get("opponent") != "greedy":
            continue
        result = record["result"]
        counts = np.array([result["wins"], result["draws"], result["losses"]])
        track = Track.parse(record["track"])
        records[track] = records.get(track, 0) + counts
    settings = report["settings"]
    komi = ("each track at its fair komi" if not settings["komi"] else
             "komi set for " + ", ".join(sorted(settings["komi"])))
    reference = (f"one-ply greedy player = 0 ({settings['games']}-game matches, "
                 f"{settings['simulations']} simulations a move, {komi}; "
                 f"benchmarks.general_targets)")
    return Ratings(reference, {track: elo_from_record(*map(int, counts))
                               for track, counts in records.items()})


def describe(record: dict) -> str:
    if "optimality" in record:
        return f"{record['optimality']['margin_optimal']['share']:.1%} margin-optimal moves"
    result = record["result"]
    low, high = result["interval"]
    return (f"score {result['score']:.3f} [{low:.3f}, {high:.3f}] at komi {record['komi']} "
            f"({record['komi_source']})")


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="", help="model file or checkpoint (also model=PATH)")
    parser.add_argument("--games", type=int, default=DEFAULT_GAMES, help="games per match")
    parser.add_argument("--simulations", type=int, default=DEFAULT_SIMULATIONS,
                        help="search simulations per move of the model")
    parser.add_argument("--exact-endgame-cells", type=int,
                        default=PlayerConfig.exact_endgame_cells,
                        help="the model's search solves positions with at most this many "
                             "legal cells exactly (default: what play and gtp do)")
    parser.add_argument("--search", action="append", default=[], metavar="FIELD=VALUE",
                        help="change a field of the model's search (SearchConfig, e.g. "
                             "algorithm=puct, max_considered_actions=8; repeatable)")
    parser.add_argument("--only", default="", help="comma-separated match names or patterns")
    parser.add_argument("--komi", action="append", default=[], metavar="TRACK=K",
                        help="play TRACK at komi K instead of its fair komi (repeatable)")
    parser.add_argument("--json", default="general_targets.json",
                        help="report file (the Markdown table goes beside it as .md)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the matches already in --json and play the rest")
    parser.add_argument("--ratings-out", default="",
                        help="write the model's Elo against greedy per track to this ratings "
                             "file (for catena-zero export ratings=PATH)")
    parser.add_argument("--transfer-opponent", default="",
                        help="model file or checkpoint that side6-transfer plays instead of "
                             "the bundled side6.pt")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--list", action="store_true", help="print the match names and exit")
    # key=value words (model=PATH games=20) read as the options of the same name; other
    # words with "=" (the values of --search, --komi) stay as they are.
    options = set(vars(parser.parse_args([])))
    words = [f"--{item.partition('=')[0].replace('_', '-')}={item.partition('=')[2]}"
             if item.partition("=")[1] and item.partition("=")[0] in options else item
             for item in (argv or [])]
    arguments = parser.parse_args(words)
    if not arguments.list and not arguments.model:
        parser.error("give the model file or checkpoint: model=PATH or --model PATH")
    if arguments.games < 2 or arguments.games % 2:
        parser.error(f"--games must be an even number >= 2, got {arguments.games}")
    if arguments.simulations < 1:
        parser.error(f"--simulations must be >= 1, got {arguments.simulations}")
    if arguments.exact_endgame_cells < 0:
        parser.error(f"--exact-endgame-cells must be >= 0, got {arguments.exact_endgame_cells}")
    names = {field.name for field in dataclasses.fields(SearchConfig)}
    for pair in arguments.search:
        if not is_setting(pair, names):
            parser.error(f"--search {pair!r}: expected FIELD=VALUE with FIELD a field of "
                         f"SearchConfig ({', '.join(sorted(names))})")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    if arguments.list:
        for target in targets():
            print(f"{target.name:36s} {target.track:22s} {target.opponent}")
        return 0
    import torch

    torch.set_num_threads(arguments.threads)
    try:
        run(arguments)
    except ValueError as error:
        print(f"general_targets: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
