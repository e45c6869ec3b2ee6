"""Champion registry: the current champion of each track and the history of promotions.

A track is (board side, game type, scoring). The registry is one small JSON file:

    {"format": "catena_zero.champion_registry", "format_version": 1,
     "tracks": {"side6-komi-standard": {"champion": {...}, "history": [{...}, ...]}}}

Every update runs under an exclusive `fcntl.flock` on a sibling lock file, reads
the current file, applies the change and writes the result atomically (temp file,
fsync, `os.replace`), so concurrent writers never lose each other's promotions
and a crash at any point leaves either the old or the new file, never a torn one.
A file that does not parse or has the wrong format is refused with
`RegistryCorruptError`; it is never overwritten.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from catena_zero.data.atomic import atomic_write_text

REGISTRY_FORMAT = "catena_zero.champion_registry"
REGISTRY_FORMAT_VERSION = 1

# Default of `promote(expected_previous=...)`: promote whoever the champion is.
UNCHECKED = object()


class RegistryCorruptError(ValueError):
    """The registry file exists but cannot be trusted; it is left untouched."""


class StaleChampionError(RuntimeError):
    """A promotion expected a champion that is no longer the current one."""


@dataclass(frozen=True)
class Track:
    side: int  # board side, 2..10
    game_type: str  # "komi", "nokomi" or "double"
    scoring: str  # "standard", "longest" or "quadratic"

    def __post_init__(self) -> None:
        if not isinstance(self.side, int) or not 2 <= self.side <= 10:
            raise ValueError(f"track side must be an int in 2..10, got {self.side!r}")
        if self.game_type not in ("komi", "nokomi", "double"):
            raise ValueError(f"unknown game type {self.game_type!r}")
        if self.scoring not in ("standard", "longest", "quadratic"):
            raise ValueError(f"unknown scoring {self.scoring!r}")

    @property
    def key(self) -> str:
        return f"side{self.side}-{self.game_type}-{self.scoring}"

    @classmethod
    def from_rules(cls, rules: Any) -> Track:
        """The track of a `catena_zero.rules.Rules` (enums or strings)."""
        return cls(
            int(rules.side),
            str(getattr(rules.game_type, "value", rules.game_type)),
            str(getattr(rules.scoring, "value", rules.scoring)),
        )


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

    @classmethod
    def from_dict(cls, data: dict, where: str) -> ChampionEntry:
        known = {f.name for f in fields(cls)}
        if not isinstance(data, dict) or "checkpoint" not in data:
            raise RegistryCorruptError(f"{where}: entry without a checkpoint: {data!r}")
        unknown = set(data) - known
        if unknown:
            raise RegistryCorruptError(f"{where}: entry has unknown keys {sorted(unknown)}")
        return cls(**data)


def _empty_document() -> dict:
    return {"format": REGISTRY_FORMAT, "format_version": REGISTRY_FORMAT_VERSION, "tracks": {}}


def _validate(document: Any, path: Path) -> dict:
    if not isinstance(document, dict):
        raise RegistryCorruptError(f"{path}: top level is not an object")
    if document.get("format") != REGISTRY_FORMAT:
        raise RegistryCorruptError(f"{path}: format is {document.get('format')!r}, "
                                   f"expected {REGISTRY_FORMAT!r}")
    if document.get("format_version") != REGISTRY_FORMAT_VERSION:
        raise RegistryCorruptError(f"{path}: format_version is "
                                   f"{document.get('format_version')!r}, this code reads "
                                   f"{REGISTRY_FORMAT_VERSION}")
    tracks = document.get("tracks")
    if not isinstance(tracks, dict):
        raise RegistryCorruptError(f"{path}: 'tracks' is not an object")
    for key, track in tracks.items():
        if not isinstance(track, dict) or not isinstance(track.get("history"), list):
            raise RegistryCorruptError(f"{path}: track {key!r} lacks a history list")
        for entry in track["history"]:
            ChampionEntry.from_dict(entry, f"{path}: track {key!r}")
        if track.get("champion") is not None:
            ChampionEntry.from_dict(track["champion"], f"{path}: track {key!r}")
    return document


def write_json_atomic(path: Path, document: dict) -> None:
    """Write JSON to `path` via `path.tmp-<pid>`, fsync, then `os.replace`."""
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
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _empty_document()
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            raise RegistryCorruptError(
                f"{self.path}: not valid JSON ({error}); refusing to use or overwrite it. "
                "Repair or move the file away."
            ) from error
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
