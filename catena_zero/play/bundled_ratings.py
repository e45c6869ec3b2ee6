"""The bundled models' ratings table (`catena_zero/play/models/ratings.json`): each bundled
model's Elo on each track it was rated on, all against one reference player, so that the
model library can pick the strongest bundled model per track.

    {"format": "catena_zero.bundled_ratings", "format_version": 1,
     "reference": "one-ply greedy player = 0 (200-game matches, 128 simulations ...)",
     "models": {"general.pt": {"6/komi/standard": 348.7, ...},
                "side4.pt": {"4/komi/standard": 620.3}}}

Ratings are only comparable against one reference measured one way, so the table has one
`reference` and every Elo in it is relative to that player. The file is JSON read with
bounds (size, count, finite numbers, known tracks): nothing in it runs code, and a damaged
file is one ModelFileError line naming it. `record_ratings` adds or replaces one model's
Elos from a ratings file (`catena_zero.export.ratings`) of the same reference, atomically;
`rename_ratings` moves them to a file's new name, and `drop_ratings` removes a model that
plays no track any more.
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
from catena_zero.rules import Track

RATINGS_NAME = "ratings.json"
FORMAT = "catena_zero.bundled_ratings"
FORMAT_VERSION = 1
MAX_BYTES = 1_000_000
MAX_MODELS = 64
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\.pt")
MAX_ELO = 10_000.0


@dataclass
class BundledRatings:
    """One reference player and, per bundled file name, its Elo per track (Track -> Elo)."""

    reference: str
    models: dict[str, dict[Track, float]] = field(default_factory=dict)

    def elo(self, name: str, track) -> float | None:
        """The Elo of file `name` on `track` (None when it was not rated there)."""
        return self.models.get(name, {}).get(Track.parse(track))

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
        document = {"format": FORMAT, "format_version": FORMAT_VERSION,
                    "reference": self.reference,
                    "models": {name: {str(track): float(elo) for track, elo in
                                      sorted(elos.items())}
                               for name, elos in sorted(self.models.items())}}
        return json.dumps(document, indent=1) + "\n"


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
    if document.get("format_version") != FORMAT_VERSION:
        raise refuse(f"format_version must be {FORMAT_VERSION} (a newer file needs a newer "
                     f"catena_zero)")
    unknown = sorted(set(document) - {"format", "format_version", "reference", "models"})
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
    return BundledRatings(reference=reference, models=parsed)


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


def rename_ratings(table_path: str | os.PathLike, old_name: str,
                   new_name: str) -> BundledRatings:
    """Move `old_name`'s Elos to `new_name` in the table at `table_path`, atomically: the
    step that goes with renaming a bundled file (general.pt kept as general-stepN.pt when a
    new champion takes its name). ModelFileError when `old_name` is not in the table or
    `new_name` already is (its Elos would be lost), or `new_name` is no plain .pt name."""
    table = read_bundled_ratings(table_path)
    if table is None or old_name not in table.models:
        raise ModelFileError(f"bundled ratings {table_path}: {old_name!r} is not in the table")
    if not MODEL_NAME.fullmatch(new_name):
        raise ModelFileError(f"bundled ratings {table_path}: {new_name[:40]!r} is not a plain "
                             f".pt file name")
    if new_name in table.models:
        raise ModelFileError(f"bundled ratings {table_path}: {new_name!r} is already rated; "
                             f"rename it first")
    table.models[new_name] = table.models.pop(old_name)
    atomic_write_text(table_path, table.to_json())
    return table


def drop_ratings(table_path: str | os.PathLike, model_name: str,
                 available: list[str], keep: tuple[str, ...] = ()) -> BundledRatings:
    """Remove `model_name`'s Elos from the table at `table_path`, atomically: the step that
    goes with deleting a bundled file that plays no track any more. `available` lists the
    bundled files in the model library's order (ties go to the earlier). ModelFileError,
    changing nothing, when `model_name` is not in the table, is one of `keep` (the library's
    fallback files, which also play unrated tracks), or is still rated best on a track:
    dropping it would put a lower-rated model there."""
    table = read_bundled_ratings(table_path)
    if table is None or model_name not in table.models:
        raise ModelFileError(f"bundled ratings {table_path}: {model_name!r} is not in the table")
    if model_name in keep:
        raise ModelFileError(f"bundled ratings {table_path}: {model_name!r} also plays the "
                             f"tracks no model is rated on; it cannot be dropped")
    # Only the files present play (the library picks among them); the model itself counts
    # even when its file is already deleted, so a drop after `git rm` is checked too.
    candidates = list(available) + ([] if model_name in available else [model_name])
    playing = sorted(str(track) for track in table.models[model_name]
                     if table.best(track, candidates) == model_name)
    if playing:
        raise ModelFileError(f"bundled ratings {table_path}: {model_name!r} is still rated "
                             f"best on {len(playing)} tracks ({', '.join(playing[:4])}); "
                             f"dropping it would make them weaker")
    del table.models[model_name]
    atomic_write_text(table_path, table.to_json())
    return table
