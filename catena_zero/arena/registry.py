"""Champion registry: the current champion of each track and the history of promotions.

A track is (board side, game type, scoring). Each track has its own champion, and one
checkpoint (a size-general network) may be the champion of several tracks: their entries then
name the same file. The registry is one small JSON file:

    {"format": "catena_zero.champion_registry", "format_version": 1,
     "tracks": {"side6-komi-standard": {"champion": {...}, "history": [{...}, ...]}}}

Every update runs under an exclusive `fcntl.flock` on a sibling lock file, reads
the current file, applies the change and writes the result atomically (temp file,
fsync, `os.replace`), so concurrent writers never lose each other's promotions
and a crash at any point leaves either the old or the new file, never a torn one.
A file that does not parse, or whose structure or any field has the wrong type or an
unknown format version, is refused with `RegistryCorruptError` naming the file and the field;
it is never overwritten.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import math
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from catena_zero.data.atomic import atomic_write_text, read_regular_file
from catena_zero.rules import Track

REGISTRY_FORMAT = "catena_zero.champion_registry"
REGISTRY_FORMAT_VERSION = 1

# Default of `promote(expected_previous=...)`: promote whoever the champion is.
UNCHECKED = object()
_TRACK_KEY = re.compile(r"side(\d+)-([a-z]+)-([a-z]+)")


class RegistryCorruptError(ValueError):
    """The registry file exists but cannot be trusted; it is left untouched."""


class StaleChampionError(RuntimeError):
    """A promotion expected a champion that is no longer the current one."""


@dataclass(frozen=True)
class ChampionEntry:
    checkpoint: str  # path of the champion's checkpoint
    step: int = -1  # training step of the checkpoint, -1 when unknown
    reason: str = "manual"  # "first", "threshold", "sprt" or "manual"
    score: float | None = None  # score of the winning gate match, None without a match
    games: int = 0  # games played in that match
    previous: str | None = None  # checkpoint of the champion it replaced
    promoted_at: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    )  # UTC time of the promotion
    extra: dict = field(default_factory=dict)  # free-form details (e.g. W/D/L, SPRT LLR)
    # The run's fair-komi estimate for the track at the promotion (the gate's komi was it,
    # rounded into the rules' range); None when unknown. Optional: files without it still read.
    fair_komi: float | None = None

    @classmethod
    def from_dict(cls, data: Any, where: str) -> ChampionEntry:
        """The entry stored as `data`; RegistryCorruptError naming `where` and the field when
        a key is unknown or a value has the wrong type (the file is never trusted)."""
        if not isinstance(data, dict):
            raise RegistryCorruptError(f"{where}: entry is {type(data).__name__}, expected an "
                                       f"object")
        if "checkpoint" not in data:
            raise RegistryCorruptError(f"{where}: entry without a checkpoint: {data!r}")
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise RegistryCorruptError(f"{where}: entry has unknown keys {sorted(unknown)}")
        for name, value in data.items():
            expected = _check_field(name, value)
            if expected is not None:
                raise RegistryCorruptError(f"{where}: field {name!r} must be {expected}, "
                                           f"got {value!r}")
        return cls(**data)


def _check_field(name: str, value: Any) -> str | None:
    """None when `value` fits the entry field `name`, else what it should have been."""
    if name == "checkpoint":
        return None if isinstance(value, str) and value else "a non-empty string"
    if name in ("step", "games"):
        fits = isinstance(value, int) and not isinstance(value, bool)
        minimum = -1 if name == "step" else 0
        return None if fits and value >= minimum else f"an integer >= {minimum}"
    if name in ("reason", "promoted_at"):
        return None if isinstance(value, str) else "a string"
    if name == "previous":
        return None if value is None or isinstance(value, str) else "a string or null"
    if name in ("score", "fair_komi"):
        fits = value is None or (isinstance(value, int | float) and not isinstance(value, bool)
                                 and math.isfinite(value))
        return None if fits else "a finite number or null"
    if name == "extra":
        return None if isinstance(value, dict) else "an object"
    return None


def _empty_document() -> dict:
    return {"format": REGISTRY_FORMAT, "format_version": REGISTRY_FORMAT_VERSION, "tracks": {}}


def _validate(document: Any, path: Path) -> dict:
    """`document` when every part of it has the registry's structure and types, else
    RegistryCorruptError naming the file and the first bad field."""
    if not isinstance(document, dict):
        raise RegistryCorruptError(f"{path}: top level is {type(document).__name__}, "
                                   f"expected an object")
    if document.get("format") != REGISTRY_FORMAT:
        raise RegistryCorruptError(f"{path}: format is {document.get('format')!r}, "
                                   f"expected {REGISTRY_FORMAT!r}")
    version = document.get("format_version")
    if isinstance(version, bool) or version != REGISTRY_FORMAT_VERSION:
        raise RegistryCorruptError(f"{path}: format_version is {version!r}, this code reads "
                                   f"{REGISTRY_FORMAT_VERSION}")
    unknown = sorted(set(document) - {"format", "format_version", "tracks"})
    if unknown:
        raise RegistryCorruptError(f"{path}: unknown top-level keys {unknown}")
    tracks = document.get("tracks")
    if not isinstance(tracks, dict):
        raise RegistryCorruptError(f"{path}: 'tracks' is {type(tracks).__name__}, expected an "
                                   f"object")
    for key, track in tracks.items():
        where = f"{path}: track {key!r}"
        if not _is_track_key(key):
            raise RegistryCorruptError(f"{where}: not a track name like 'side6-komi-standard'")
        if not isinstance(track, dict):
            raise RegistryCorruptError(f"{where} is {type(track).__name__}, expected an object")
        unknown = sorted(set(track) - {"champion", "history"})
        if unknown:
            raise RegistryCorruptError(f"{where}: unknown keys {unknown}")
        if not isinstance(track.get("history"), list):
            raise RegistryCorruptError(f"{where}: 'history' is "
                                       f"{type(track.get('history')).__name__}, expected a list")
        for index, entry in enumerate(track["history"]):
            ChampionEntry.from_dict(entry, f"{where} history[{index}]")
        if track.get("champion") is not None:
            ChampionEntry.from_dict(track["champion"], f"{where} champion")
    return document


def _is_track_key(key: Any) -> bool:
    match = _TRACK_KEY.fullmatch(key) if isinstance(key, str) else None
    if match is None:
        return False
    try:
        return Track(int(match.group(1)), match.group(2), match.group(3)).key == key
    except ValueError:
        return False


def write_json_atomic(path: Path, document: dict) -> None:
    """Write JSON to `path` via a new `path.tmp-<token>`, fsync, then `os.replace`."""
    path = Path(path)
    atomic_write_text(path, json.dumps(document, indent=1, sort_keys=True) + "\n")
    with contextlib.suppress(OSError):
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


class ChampionRegistry:
    """The champion registry stored at `path` (created on the first promotion)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "a") as lock_file:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)

    def read(self) -> dict:
        """The whole validated document; an empty one when the file does not exist."""
        try:
            text = read_regular_file(self.path).decode("utf-8")
        except FileNotFoundError:
            return _empty_document()
        except OSError as error:
            raise RegistryCorruptError(f"{self.path}: cannot read ({error.strerror or error})"
                                       ) from None
        except UnicodeDecodeError as error:
            raise RegistryCorruptError(f"{self.path}: not UTF-8 text ({error.reason} at byte "
                                       f"{error.start}); refusing to use or overwrite it. "
                                       "Repair or move the file away.") from None
        try:
            document = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as error:
            raise RegistryCorruptError(
                f"{self.path}: not valid JSON ({error}); refusing to use or overwrite it. "
                "Repair or move the file away."
            ) from None
        return _validate(document, self.path)

    def update(self, change: Callable[[dict], None]) -> dict:
        """Apply `change(document)` (mutating it) under the lock and write the result."""
        with self._locked():
            document = self.read()
            change(document)
            _validate(document, self.path)
            write_json_atomic(self.path, document)
            return document

    def champion(self, track: Track) -> ChampionEntry | None:
        data = self.read()["tracks"].get(track.key)
        if data is None or data.get("champion") is None:
            return None
        return ChampionEntry.from_dict(data["champion"], f"{self.path}: {track.key}")

    def history(self, track: Track) -> list[ChampionEntry]:
        data = self.read()["tracks"].get(track.key, {"history": []})
        return [ChampionEntry.from_dict(e, f"{self.path}: {track.key}") for e in data["history"]]

    def tracks(self) -> list[str]:
        return sorted(self.read()["tracks"])

    def checkpoints(self) -> set[str]:
        """Every checkpoint path an entry of any track names (champions and history)."""
        named = set()
        for track in self.read()["tracks"].values():
            entries = [*track["history"], *([track["champion"]] if track.get("champion") else [])]
            named.update(entry["checkpoint"] for entry in entries)
        return named

    def promote(
        self,
        track: Track,
        entry: ChampionEntry,
        expected_previous: str | None | object = UNCHECKED,
    ) -> ChampionEntry:
        """Make `entry` the champion of `track` and append it to the history.

        With `expected_previous` given (a checkpoint path, or None for "no
        champion yet"), the promotion only happens if that is still the champion
        when the lock is held; otherwise `StaleChampionError` is raised and the
        file is unchanged. The stored entry records the replaced champion.
        """
        if not isinstance(entry.checkpoint, str) or not entry.checkpoint:
            raise ValueError(
                f"entry checkpoint must be a non-empty string, got {entry.checkpoint!r}"
            )
        stored: list[ChampionEntry] = []

        def change(document: dict) -> None:
            track_data = document["tracks"].setdefault(track.key, {"champion": None, "history": []})
            current = track_data.get("champion")
            current_checkpoint = None if current is None else current["checkpoint"]
            if expected_previous is not UNCHECKED and expected_previous != current_checkpoint:
                raise StaleChampionError(
                    f"track {track.key}: expected champion {expected_previous!r}, "
                    f"found {current_checkpoint!r}"
                )
            final = ChampionEntry(**{**asdict(entry), "previous": current_checkpoint})
            track_data["champion"] = asdict(final)
            track_data["history"].append(asdict(final))
            stored.append(final)

        self.update(change)
        return stored[0]
