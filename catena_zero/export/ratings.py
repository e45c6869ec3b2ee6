"""Ratings files: one model's Elo on each of its tracks against one fixed reference player,
for `export_model(..., ratings=...)` (`catena-zero export ratings=PATH`) to record.

    {"format": "catena_zero.ratings", "format_version": 1,
     "reference": "one-ply greedy player = 0 (200 games a track, 128 simulations)",
     "elos": {"6/komi/standard": 338.0, "8/komi/standard": 314.6}}

A run trained without gating has no ladder Elo for its tracks; a fixed opponent still rates
them. `benchmarks.general_targets --ratings-out` writes such a file from its matches against
greedy. A perfect or a null score has no finite logistic Elo, so `elo_from_record` shrinks
every score by half a game toward one half, (W + D/2 + 1/2) / (N + 1), which keeps the Elo
finite and changes a 200-game score by at most 0.25%.

Reading never runs code: the file is plain JSON, size-capped, with no NaN or infinity.
A damaged or foreign file raises RatingsFileError naming it and its problem.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from catena_zero.arena.stats import elo_from_score
from catena_zero.data.atomic import atomic_write_text
from catena_zero.rules import Track

RATINGS_FORMAT = "catena_zero.ratings"
RATINGS_FORMAT_VERSION = 1
MAX_RATINGS_BYTES = 1 << 20  # a file of every track is a few kilobytes
MAX_REFERENCE_CHARS = 300  # the reference is a note shown beside the Elo


class RatingsFileError(ValueError):
    """A ratings file is missing, unreadable, or not a ratings file of this version."""


@dataclass(frozen=True)
class Ratings:
    reference: str  # the player the Elos are relative to (rated 0), and how it was measured
    elos: dict[Track, float] = field(default_factory=dict)  # Elo by track, finite


def elo_from_record(wins: int, draws: int, losses: int) -> float:
    """Logistic Elo of a player over its opponent from a match record, the score shrunk by
    half a game toward one half (finite even at 100% or 0%)."""
    games = wins + draws + losses
    if min(wins, draws, losses) < 0 or games == 0:
        raise ValueError(f"a match record needs non-negative counts and a game, got "
                         f"{wins}-{draws}-{losses}")
    return float(elo_from_score((wins + 0.5 * draws + 0.5) / (games + 1)))


def is_finite_number(value: object) -> bool:
    """Whether `value` is an int or float (not a bool) with a finite value."""
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))


def write_ratings(path: str | os.PathLike, ratings: Ratings) -> None:
    """Write `ratings` atomically (a reader sees the old file or the whole new one)."""
    document = {"format": RATINGS_FORMAT, "format_version": RATINGS_FORMAT_VERSION,
                "reference": ratings.reference,
                "elos": {str(track): float(elo) for track, elo in ratings.elos.items()}}
    _validate(document, Path(path))  # refuse to write what could not be read back
    atomic_write_text(path, json.dumps(document, indent=1, allow_nan=False) + "\n")


def read_ratings(path: str | os.PathLike) -> Ratings:
    """The ratings in `path`; RatingsFileError naming the file and what is wrong."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_RATINGS_BYTES:
            raise RatingsFileError(f"ratings file {path} is {size} bytes, more than a ratings "
                                   f"file can be ({MAX_RATINGS_BYTES})")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RatingsFileError(f"ratings file {path} does not exist") from None
    except IsADirectoryError:
        raise RatingsFileError(f"ratings file {path} is a directory") from None
    except (OSError, UnicodeDecodeError) as error:
        raise RatingsFileError(f"ratings file {path} cannot be read: {error}") from None
    try:
        document = json.loads(text, parse_constant=_refuse_constant)
    except ValueError as error:
        raise RatingsFileError(f"ratings file {path} is not valid JSON: {error}") from None
    return _validate(document, path)


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a rating")


def check_reference(reference: object, refuse) -> str:
    """`reference` when it is one printable line naming a player (`refuse(problem)` builds
    the error otherwise); shared by every file that records Elos against a reference."""
    if not isinstance(reference, str) or not reference.strip():
        raise refuse("reference must name the player the Elos are relative to")
    if len(reference) > MAX_REFERENCE_CHARS or not reference.isprintable():
        raise refuse(f"reference must be one printable line of at most "
                     f"{MAX_REFERENCE_CHARS} characters")
    return reference


def _validate(document: object, path: Path) -> Ratings:
    def refuse(problem: str) -> RatingsFileError:
        return RatingsFileError(f"ratings file {path}: {problem}")

    if not isinstance(document, dict) or document.get("format") != RATINGS_FORMAT:
        raise refuse(f"not a ratings file (its format is not {RATINGS_FORMAT!r})")
    version = document.get("format_version")
    if version != RATINGS_FORMAT_VERSION:
        raise refuse(f"format version {version!r:.20} is not {RATINGS_FORMAT_VERSION}, the "
                     f"one this program reads")
    unknown = sorted(set(document) - {"format", "format_version", "reference", "elos"})
    if unknown:
        raise refuse(f"unknown field {unknown[0]!r:.40}")
    reference = check_reference(document.get("reference"), refuse)
    elos = document.get("elos")
    if not isinstance(elos, dict) or not elos:
        raise refuse("elos must map one or more tracks to their Elo")
    parsed: dict[Track, float] = {}
    for key, value in elos.items():
        try:
            track = Track.parse(key)
        except ValueError as error:
            raise refuse(f"elos entry {key!r:.40}: {error}") from None
        if track in parsed:
            raise refuse(f"track {track} is rated twice")
        if not is_finite_number(value):
            raise refuse(f"the Elo of track {track} must be a finite number, got {value!r:.40}")
        parsed[track] = float(value)
    return Ratings(reference=reference, elos=parsed)
