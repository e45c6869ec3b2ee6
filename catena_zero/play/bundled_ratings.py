"""The bundled models' ratings table (`catena_zero/play/models/ratings.json`): each bundled
model's Elo on each track it was rated on, so that the model library can pick the strongest
bundled model per track.

Version 1 holds one Elo per model and track against one reference player (the one-ply
greedy player, which the models beat 99-100%: the scale saturates at the top):

    {"format": "catena_zero.bundled_ratings", "format_version": 1,
     "reference": "one-ply greedy player = 0 (200-game matches, 128 simulations ...)",
     "models": {"general.pt": {"6/komi/standard": 348.7, ...},
                "side4.pt": {"4/komi/standard": 620.3}}}

Ratings are only comparable against one reference measured one way, so the table has one
`reference` and every Elo in it is relative to that player. Version 2 keeps all of that and
adds, per track, the raw records of the models against anchor players (uct:N), the Elos
fitted from them on one scale (uct:200 = 0) with 95% intervals, and the model that plays
each track by the replacement rule (`catena_zero.play.anchor_ratings`,
`catena_zero.play.replacement`); a track with anchored Elos is chosen by them, any other by
the greedy Elos. A table without anchor records is written as version 1, which older
readers read too. The file is JSON read with
bounds (size, count, finite numbers, known tracks): nothing in it runs code, and a damaged
file is one ModelFileError line naming it. `record_ratings` adds or replaces one model's
Elos from a ratings file (`catena_zero.export.ratings`) of the same reference, atomically;
`record_anchor_results` and `record_anchor_match` add anchor records and decide the tracks'
players again; `rename_ratings` moves a model's entries to a file's new name, and
`drop_ratings` removes a model that plays no track any more.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from catena_zero.data.atomic import atomic_write_text, read_regular_file
from catena_zero.export.metadata import ModelFileError
from catena_zero.export.ratings import check_reference
from catena_zero.play.anchor_ratings import (
    ANCHOR_KEYS,
    AnchorMatch,
    AnchorModel,
    AnchorRatings,
    AnchorRecord,
    is_anchor,
    parse_anchor_ratings,
)
from catena_zero.play.replacement import Decision
from catena_zero.rules import Track

RATINGS_NAME = "ratings.json"
FORMAT = "catena_zero.bundled_ratings"
FORMAT_VERSION = 2
V1_KEYS = ("format", "format_version", "reference", "models")
MAX_BYTES = 1_000_000
MAX_MODELS = 64
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\.pt")
MAX_ELO = 10_000.0


@dataclass
class BundledRatings:
    """One reference player and, per bundled file name, its Elo per track (Track -> Elo);
    the anchored records, Elos and players (empty in a version-1 table)."""

    reference: str
    models: dict[str, dict[Track, float]] = field(default_factory=dict)
    anchors: AnchorRatings = field(default_factory=AnchorRatings)

    def elo(self, name: str, track) -> float | None:
        """The Elo of file `name` on `track` (None when it was not rated there)."""
        return self.models.get(name, {}).get(Track.parse(track))

    def anchored_elo(self, name: str, track) -> tuple[float, float, float] | None:
        """(Elo, low, high) of file `name` on `track` on the anchored scale (None: unrated)."""
        return self.anchors.elo(name, track)

    def decide(self, track, available: list[str]) -> Decision | None:
        """The anchored choice among `available` on `track` and why; None when none of them
        has an anchored Elo there."""
        return self.anchors.decide(track, available) if self.anchors else None

    def choice(self, track, available: list[str]) -> str | None:
        """The file of `available` that plays `track`: by the replacement rule where one of
        them has an anchored Elo there, else the highest greedy Elo (`best`); None when
        none of them is rated there."""
        decision = self.decide(track, available)
        return decision.player if decision is not None else self.best(track, available)

    def names(self) -> set[str]:
        """Every file name with an entry (greedy Elos or anchor records)."""
        return set(self.models) | set(self.anchors.models)

    def best(self, track, available: list[str]) -> str | None:
        """The file name of `available` with the highest Elo on `track` (the earlier listed
        in `available` on a tie); None when none of them is rated there."""
        track = Track.parse(track)
        rated = [(self.models[name][track], -index, name) for index, name in
                 enumerate(available) if track in self.models.get(name, {})]
        return max(rated)[2] if rated else None

    @property
    def short_reference(self) -> str:
        """The reference up to its first parenthesis: `one-ply greedy player = 0`."""
        return self.reference.split(" (", 1)[0]

    def to_json(self) -> str:
        # Version 1 while nothing is anchored: the same bytes as before, and older readers
        # keep reading it.
        document = {"format": FORMAT, "format_version": 2 if self.anchors else 1,
                    "reference": self.reference,
                    "models": {name: {str(track): float(elo) for track, elo in
                                      sorted(elos.items())}
                               for name, elos in sorted(self.models.items())},
                    **self.anchors.to_document()}
        return json.dumps(document, indent=1, allow_nan=False) + "\n"


def read_bundled_ratings(path: str | os.PathLike) -> BundledRatings | None:
    """The table at `path`; None when there is no file; ModelFileError (one line naming the
    file) when it is damaged."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return None

    def refuse(problem: str) -> ModelFileError:
        return ModelFileError(f"bundled ratings {path}: {problem}")

    try:
        data = read_regular_file(path, MAX_BYTES)
    except OSError as error:
        raise refuse(f"cannot read it ({error.strerror or error})") from None
    if len(data) > MAX_BYTES:
        raise refuse(f"larger than {MAX_BYTES} bytes")
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise refuse("not UTF-8 JSON") from None
    return parse_bundled_ratings(document, refuse)


def parse_bundled_ratings(document, refuse=ModelFileError) -> BundledRatings:
    """A BundledRatings from a parsed JSON document (`refuse(problem)` builds the error)."""
    if not isinstance(document, dict):
        raise refuse("must be a JSON object")
    if document.get("format") != FORMAT:
        raise refuse(f"format must be {FORMAT!r}")
    version = document.get("format_version")
    if isinstance(version, bool) or version not in (1, FORMAT_VERSION):
        raise refuse(f"format_version must be 1 or {FORMAT_VERSION} (a newer file needs a "
                     f"newer catena_zero)")
    unknown = sorted(set(document) - set(V1_KEYS + (ANCHOR_KEYS if version == 2 else ())))
    if unknown:
        raise refuse(f"unknown key {unknown[0][:40]!r}")
    reference = check_reference(document.get("reference"), refuse)
    models = document.get("models")
    if not isinstance(models, dict) or len(models) > MAX_MODELS:
        raise refuse(f"models must be an object of at most {MAX_MODELS} files")
    parsed: dict[str, dict[Track, float]] = {}
    for name, elos in models.items():
        if not MODEL_NAME.fullmatch(name):
            raise refuse(f"model name {name[:40]!r} is not a plain .pt file name")
        if not isinstance(elos, dict) or len(elos) > 81:
            raise refuse(f"{name}: must map at most 81 tracks to Elos")
        parsed[name] = {}
        for text, elo in elos.items():
            try:
                track = Track.parse(text)
            except (ValueError, TypeError):
                raise refuse(f"{name}: {str(text)[:40]!r} is not a track") from None
            if isinstance(elo, bool) or not isinstance(elo, int | float) or not (
                    math.isfinite(elo) and abs(elo) <= MAX_ELO):
                raise refuse(f"{name}: the Elo of {track} must be a finite number within "
                             f"+-{MAX_ELO:g}")
            parsed[name][track] = float(elo)
    anchors = parse_anchor_ratings(document, refuse, MODEL_NAME) if version == 2 else (
        AnchorRatings())
    if version == 2 and not anchors:
        raise refuse("a version-2 table holds anchor records (without, it is version 1)")
    return BundledRatings(reference=reference, models=parsed, anchors=anchors)


ELO_DECIMALS = 2  # recorded Elos are rounded to this many decimals


def record_ratings(table_path: str | os.PathLike, model_name: str, reference: str,
                   elos: dict) -> BundledRatings:
    """Add or replace `model_name`'s Elos (track -> Elo) in the table at `table_path`
    (made when absent), atomically. ModelFileError when `reference` differs from the
    table's: Elos against another player cannot be compared."""
    table = read_bundled_ratings(table_path) or BundledRatings(reference=reference)
    if table.reference != reference:
        raise ModelFileError(f"bundled ratings {table_path}: the Elos are against "
                             f"{reference!r}, the table's against {table.reference!r}")
    document = json.loads(table.to_json())
    document["models"][model_name] = {str(Track.parse(track)): float(elo)
                                      for track, elo in elos.items()}
    # Kept to 0.01 Elo (200 games measure a rating to tens of Elo): two files with the same
    # result on a track then tie exactly, whichever way each Elo was computed.
    document["models"] = {name: {track: round(elo, ELO_DECIMALS) for track, elo in rated.items()}
                          for name, rated in document["models"].items()}
    table = parse_bundled_ratings(document)
    atomic_write_text(table_path, table.to_json())
    return table


def record_anchor_results(table_path: str | os.PathLike, model_name: str, model: AnchorModel,
                          available: list[str], replace: bool = False,
                          ) -> tuple[BundledRatings, list[tuple[Track, Decision | None]]]:
    """Add `model`'s anchor records (track -> anchor -> record) to `model_name`'s in the
    table at `table_path`, atomically, a record replacing the one of the same track and
    anchor (re-adding a report counts nothing twice), and decide the players of those
    tracks again among the files `available`. ModelFileError, changing nothing, when there
    is no table, or the model's recorded entries are of another file or search and
    `replace` (discard them) is not given. Returns the table and each track's decision."""
    table = _existing(table_path)
    if not MODEL_NAME.fullmatch(model_name):
        raise ModelFileError(f"bundled ratings {table_path}: {model_name[:40]!r} is not a plain "
                             f".pt file name")
    earlier = table.anchors.models.get(model_name)
    if earlier is not None and not replace:
        if earlier.sha256 != model.sha256:
            raise ModelFileError(
                f"bundled ratings {table_path}: the anchor records of {model_name} are of the "
                f"file of SHA-256 {earlier.sha256[:16]}..., these of {model.sha256[:16]}...; "
                f"--rename the old file's entries or give --replace to discard them")
        if earlier.search != model.search:
            raise ModelFileError(
                f"bundled ratings {table_path}: the anchor records of {model_name} are of "
                f"another search; give --replace to discard them")
    kept = {} if earlier is None or replace else {
        track: dict(by_anchor) for track, by_anchor in earlier.records.items()}
    for track, by_anchor in model.records.items():
        kept.setdefault(Track.parse(track), {}).update(by_anchor)
    table.anchors.put_model(model_name, AnchorModel(model.sha256, model.training_steps,
                                                    model.search, kept))
    tracks = set(model.records) | (set(earlier.records) if earlier is not None else set())
    return _decide_and_write(table_path, table, sorted(tracks), available)


def record_anchor_match(table_path: str | os.PathLike, track, player: str, opponent: str,
                        record: AnchorRecord, available: list[str],
                        ) -> tuple[BundledRatings, list[tuple[Track, Decision | None]]]:
    """Add one anchor's record against another anchor on `track` (replacing the recorded
    match of the same two), which places it on the track's scale; decide the track's player
    again among `available`. ModelFileError, changing nothing, when there is no table or
    either player is no anchor (uct:N)."""
    table = _existing(table_path)
    if not (is_anchor(player) and is_anchor(opponent)) or player == opponent:
        raise ModelFileError(f"bundled ratings {table_path}: an anchor match is between two "
                             f"anchors uct:N, got {player[:40]!r} and {opponent[:40]!r}")
    track = Track.parse(track)
    table.anchors.put_match(track, AnchorMatch(player, opponent, record))
    return _decide_and_write(table_path, table, [track], available)


def _existing(table_path) -> BundledRatings:
    table = read_bundled_ratings(table_path)
    if table is None:
        raise ModelFileError(f"bundled ratings {table_path}: there is no table (record a "
                             f"greedy rating first)")
    return table


def _decide_and_write(table_path, table: BundledRatings, tracks: list[Track],
                      available: list[str]):
    decisions = []
    for track in tracks:
        decision = table.anchors.decide(track, available)
        if decision is None:
            table.anchors.players.pop(track, None)
        else:
            table.anchors.players[track] = decision.player
        decisions.append((track, decision))
    table = parse_bundled_ratings(json.loads(table.to_json()))  # written only if it reads
    atomic_write_text(table_path, table.to_json())
    return table, decisions


def rename_ratings(table_path: str | os.PathLike, old_name: str,
                   new_name: str) -> BundledRatings:
    """Move `old_name`'s entries (greedy Elos, anchor records, the tracks it plays) to
    `new_name` in the table at `table_path`, atomically: the step that goes with renaming a
    bundled file (general.pt kept as general-stepN.pt when a new champion takes its name).
    ModelFileError when `old_name` is not in the table or `new_name` already is (its
    entries would be lost), or `new_name` is no plain .pt name."""
    table = read_bundled_ratings(table_path)
    if table is None or old_name not in table.names():
        raise ModelFileError(f"bundled ratings {table_path}: {old_name!r} is not in the table")
    if not MODEL_NAME.fullmatch(new_name):
        raise ModelFileError(f"bundled ratings {table_path}: {new_name[:40]!r} is not a plain "
                             f".pt file name")
    if new_name in table.names():
        raise ModelFileError(f"bundled ratings {table_path}: {new_name!r} is already rated; "
                             f"rename it first")
    if old_name in table.models:
        table.models[new_name] = table.models.pop(old_name)
    if old_name in table.anchors.models:
        table.anchors.rename_model(old_name, new_name)
    atomic_write_text(table_path, table.to_json())
    return table


def drop_ratings(table_path: str | os.PathLike, model_name: str,
                 available: list[str], keep: tuple[str, ...] = ()) -> BundledRatings:
    """Remove `model_name`'s entries from the table at `table_path`, atomically: the step
    that goes with deleting a bundled file that plays no track any more. `available` lists
    the bundled files in the model library's order. ModelFileError, changing nothing, when
    `model_name` is not in the table, is one of `keep` (the library's fallback files, which
    also play unrated tracks), still plays a track (rated best there, or the anchored
    player), or its records place an anchor so that dropping them would change another
    track's player."""
    table = read_bundled_ratings(table_path)
    if table is None or model_name not in table.names():
        raise ModelFileError(f"bundled ratings {table_path}: {model_name!r} is not in the table")
    if model_name in keep:
        raise ModelFileError(f"bundled ratings {table_path}: {model_name!r} also plays the "
                             f"tracks no model is rated on; it cannot be dropped")
    # Only the files present play (the library picks among them); the model itself counts
    # even when its file is already deleted, so a drop after `git rm` is checked too.
    candidates = list(available) + ([] if model_name in available else [model_name])
    tracks = sorted({track for elos in table.models.values() for track in elos}
                    | set(table.anchors.tracks()))
    before = {track: table.choice(track, candidates) for track in tracks}
    playing = [str(track) for track in tracks if before[track] == model_name]
    if playing:
        raise ModelFileError(f"bundled ratings {table_path}: {model_name!r} is still rated "
                             f"best on {len(playing)} tracks ({', '.join(playing[:4])}); "
                             f"dropping it would make them weaker")
    table.models.pop(model_name, None)
    table.anchors.remove_model(model_name)
    remaining = [name for name in candidates if name != model_name]
    moved = [str(track) for track in tracks if table.choice(track, remaining) != before[track]]
    if moved:
        raise ModelFileError(f"bundled ratings {table_path}: without {model_name!r}'s records "
                             f"the anchored player of {len(moved)} tracks would change "
                             f"({', '.join(moved[:4])}); it cannot be dropped")
    atomic_write_text(table_path, table.to_json())
    return table
