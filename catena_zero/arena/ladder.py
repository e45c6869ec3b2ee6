"""Elo ladder: the checkpoints of a run and fixed baselines, rated together.

Players are paired round-robin (every pair) or by sampling (each checkpoint
against its successor, every player against `sampled_pairs` random others, and
a chain through all players so the comparison graph is connected). Each pairing
is one batched match; all results feed one Bradley-Terry fit anchored at the
anchor player (uniform random = 0). Writes elo.csv, elo.png, matches.json and
TensorBoard scalars into the output directory.

Every game is played at the track's fair komi unless a komi is given: Black moves first, so
at komi 0 a small board's pairs are decided by the colours drawn (side 3's exact fair komi is
10.5). The fair komi is the caller's (`fair_komi`: the CLI passes the exact value of
`catena_zero.komi.exact` where the solver knows it), else the estimate stored in the newest
checkpoint of the rated run for this track, rounded into the rules' komi range
(`Rules.nearest_komi`); with neither, komi 0.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from catena_zero.arena.config import LadderConfig
from catena_zero.arena.elo import (
    EloFit,
    PairwiseResults,
    fit_bradley_terry,
    plot_elo,
    write_elo_csv,
    write_elo_tensorboard,
)
from catena_zero.arena.match import MatchResult, play_match
from catena_zero.arena.registry import write_json_atomic
from catena_zero.rules import Rules, Track

LADDER_FORMAT_VERSION = 1
CHECKPOINT_SUFFIXES = (".pt", ".pth", ".ckpt")


@dataclass(frozen=True)
class Player:
    name: str  # unique display name
    spec: str  # agent spec ("random", "uct:200", "checkpoint:PATH", ...)
    step: int | None  # training step, None for baselines


@dataclass
class LadderResult:
    players: list[Player]
    matches: list[MatchResult]
    fit: EloFit
    csv_path: Path | None
    plot_path: Path | None
    komi: int = 0  # the komi of every game
    komi_source: str = "given"  # given | exact | estimate (a checkpoint's) | none (komi 0)


STEP_TAG = re.compile(r"step_?(\d+)")  # "step000500", "step_500": a training step


def tagged_step(path: Path) -> int | None:
    """The training step a file name says with its "step" tag
    ("checkpoint-step000000500-iter000010.pt" -> 500); None when it has no such tag."""
    tagged = STEP_TAG.search(path.stem)
    return int(tagged.group(1)) if tagged else None


def checkpoint_step(path: Path) -> int | None:
    """Training step from a checkpoint file name: the digits after "step"
    ("checkpoint-step000000500-iter000010.pt" -> 500), else its last run of digits, else None.
    """
    step = tagged_step(path)
    if step is not None:
        return step
    numbers = re.findall(r"\d+", path.stem)
    return int(numbers[-1]) if numbers else None


def find_checkpoints(run_dir: str | Path) -> list[tuple[Path, int]]:
    """Checkpoints of a run (under run_dir/checkpoints, else run_dir), sorted by step.

    Files without a step in their name (e.g. "latest.pt") are skipped, and of
    several files with the same step only the first in name order is kept.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ValueError(f"run_dir {str(run_dir)!r} is not a directory")
    folder = run_dir / "checkpoints" if (run_dir / "checkpoints").is_dir() else run_dir
    found: dict[int, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.suffix in CHECKPOINT_SUFFIXES and ".tmp" not in path.name:
            step = checkpoint_step(path)
            if step is not None and step not in found:
                found[step] = path
    return [(found[step], step) for step in sorted(found)]


def select_evenly(items: list, limit: int) -> list:
    """At most `limit` items, evenly spaced, always keeping the first and last (0 = all)."""
    if limit <= 0 or len(items) <= limit:
        return list(items)
    positions = np.unique(np.round(np.linspace(0, len(items) - 1, limit)).astype(int))
    return [items[i] for i in positions]


def ladder_players(config: LadderConfig) -> list[Player]:
    """Baselines then checkpoints (from run_dir and `config.checkpoints`) by step."""
    players = [Player(spec, spec, None) for spec in config.baselines]
    checkpoints: list[tuple[Path, int]] = []
    if config.run_dir:
        checkpoints += find_checkpoints(config.run_dir)
    for extra in config.checkpoints:
        path = Path(extra)
        if not path.is_file():
            raise ValueError(f"checkpoint {extra!r} does not exist")
        step = checkpoint_step(path)
        checkpoints.append((path, -1 if step is None else step))
    checkpoints.sort(key=lambda item: item[1])
    for path, step in select_evenly(checkpoints, config.max_checkpoints):
        players.append(Player(f"step{step}" if step >= 0 else path.stem, f"checkpoint:{path}",
                              step))
    names = [p.name for p in players]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"ladder players must be unique, repeated: {duplicates}")
    if config.anchor not in names:
        raise ValueError(f"anchor {config.anchor!r} is not among the players {names}")
    return players


def ladder_pairings(players: list[Player], config: LadderConfig, seed: int = 0
                    ) -> list[tuple[int, int]]:
    """Index pairs (i < j) to play."""
    count = len(players)
    if count < 2:
        raise ValueError(f"a ladder needs at least two players, got {[p.name for p in players]}")
    if config.pairing == "round_robin":
        return list(itertools.combinations(range(count), 2))
    rng = np.random.default_rng([seed, 31337])
    pairs = {(i, i + 1) for i in range(count - 1)}  # the chain keeps the graph connected
    for i in range(count):
        others = [j for j in range(count) if j != i]
        picks = rng.choice(others, size=min(config.sampled_pairs, len(others)), replace=False)
        pairs.update((min(i, int(j)), max(i, int(j))) for j in picks)
    return sorted(pairs)


def checkpoint_fair_komi(path: str | Path, track: Track) -> float | None:
    """The fair-komi estimate of `track` a training checkpoint stored (its `fair_komis`, or
    its `fair_komi` when the checkpoint's run played this track alone); None without one."""
    # lazy: torch (seconds to import), loaded only for a ladder of checkpoints
    from catena_zero.train.checkpoint import load_checkpoint

    checkpoint = load_checkpoint(path)
    extra = checkpoint.extra or {}
    value = (extra.get("fair_komis") or {}).get(track.key)
    if value is None and Track.from_rules(Rules(**_rules_fields(checkpoint.rules))) == track:
        value = extra.get("fair_komi")
    return None if value is None else float(value)


def _rules_fields(rules: dict | None) -> dict:
    rules = rules or {}
    return {name: rules[name] for name in ("side", "game_type", "scoring") if name in rules}


def ladder_komi(rules: Rules, players: list[Player], komi: int | None = None,
                fair_komi: float | None = None) -> tuple[int, str]:
    """(komi of the ladder's games, where it came from): `komi` when given; else the fair
    komi, `fair_komi` (the exact value, say) or the newest rated checkpoint's estimate for
    this track, rounded into the rules' komi range; else 0."""
    if komi is not None:
        rules.validate_komi(komi)
        return int(komi), "given"
    if fair_komi is not None:
        return rules.nearest_komi(fair_komi), "exact"
    track = Track.from_rules(rules)
    checkpoints = [player for player in players if player.spec.startswith("checkpoint:")]
    for player in sorted(checkpoints, key=lambda player: -1 if player.step is None
                         else player.step, reverse=True):
        try:
            estimate = checkpoint_fair_komi(player.spec[len("checkpoint:"):], track)
        except (OSError, ValueError, TypeError):
            continue  # not a training checkpoint with rules; the next one may be
        if estimate is not None:
            return rules.nearest_komi(estimate), "estimate"
    return rules.nearest_komi(None), "none"


def run_ladder(
    rules: Rules,
    config: LadderConfig,
    factory: Callable[[str], Any],
    komi: int | None = None,
    seed: int = 0,
    opening_plies: int = 2,
    progress: Callable[[str, int, int], None] | None = None,
    players: list[Player] | None = None,
    opening_agent: Any = None,
    fair_komi: float | None = None,
) -> LadderResult:
    """Play every pairing, fit Elo, write outputs. progress(label, finished, total).

    komi: of every game; None (the default) plays at the fair komi (`ladder_komi`)."""
    players = players if players is not None else ladder_players(config)
    komi, komi_source = ladder_komi(rules, players, komi, fair_komi)
    pairings = ladder_pairings(players, config, seed)
    results = PairwiseResults([p.name for p in players], [p.step for p in players])
    # Every agent is built (every checkpoint loaded) before the first game: a missing or
    # corrupt file fails at once, and checkpoints rotated away by a running training loop
    # later cannot break the ladder halfway.
    agents = {player.name: factory(player.spec) for player in players}
    matches = []
    for number, (i, j) in enumerate(pairings):
        a, b = players[i], players[j]
        label = f"[{number + 1}/{len(pairings)}] {a.name} vs {b.name}"

        def match_progress(finished: int, total: int, label: str = label) -> None:
            if progress is not None:
                progress(label, finished, total)

        match = play_match(rules, agents[a.name], agents[b.name], config.games_per_pair,
                           komi=komi, seed=seed + 1009 * number, progress=match_progress,
                           opening_plies=opening_plies, opening_agent=opening_agent,
                           name_a=a.name, name_b=b.name)
        results.add(a.name, b.name, match.wins, match.draws, match.losses)
        matches.append(match)
    fit = fit_bradley_terry(results, anchor=config.anchor)
    csv_path = plot_path = None
    output_dir = config.output_dir or (str(Path(config.run_dir) / "elo") if config.run_dir
                                       else None)
    if output_dir:
        output = Path(output_dir)
        output.mkdir(parents=True, exist_ok=True)
        csv_path = write_elo_csv(output / "elo.csv", fit)
        plot_path = plot_elo(fit, output / "elo.png")
        write_elo_tensorboard(fit, output / "tensorboard")
        write_json_atomic(output / "matches.json", {
            "format": "catena_zero.ladder_matches", "format_version": LADDER_FORMAT_VERSION,
            "komi": komi, "komi_source": komi_source,
            "players": [{**p.__dict__, **described(factory, p.spec)} for p in players],
            "matches": [_match_summary(m) for m in matches],
        })
    return LadderResult(players, matches, fit, csv_path, plot_path, komi, komi_source)


def described(factory: Callable[[str], Any], spec: str) -> dict:
    """{"player": its spec, file, SHA-256 and search} when the factory can say
    (`AgentFactory.describe`), so the raw file names each checkpoint by its content."""
    describe = getattr(factory, "describe", None)
    return {} if describe is None else {"player": describe(spec)}


def _match_summary(match: MatchResult) -> dict:
    data = match.to_dict()
    data.pop("games")  # per-game records make the file large; the counts suffice for a refit
    return data
