"""Versioned `.npz` shards of training samples, and a replay window over the newest ones.

A shard is written to `<path>.tmp-<token>` and renamed into place, so a reader sees
either no file or a whole one; `list_shards` only returns `*.npz`. Planes and legal
masks are bit-packed. The archive's zip comment holds the SHA-256 of every byte before the
digest, so a flipped byte anywhere is caught (the zip CRCs cover only the members' data);
shards written before that seal still read, with their CRCs checked. `read_shard` refuses a
truncated, corrupt, wrong-version or inconsistent file with a `ShardError` naming the file
and the reason, and raises no other exception on any file.

Shard names must sort chronologically; `shard_filename(sequence)` makes such names.

Example::

    from catena_zero.data import ReplayWindow, ShardMeta, read_shard, shard_filename, write_shard

    meta = ShardMeta(side=4, game_type="komi", scoring="standard", model_step=1200, num_games=64)
    write_shard(run_dir / "shards" / shard_filename(iteration), samples, meta)
    samples, meta = read_shard(path)

    window = ReplayWindow(run_dir / "shards", window_samples=200_000)
    window.refresh()                                  # loads new shards, drops old ones
    for batch in window.batches(num_batches=100, batch_size=256, rng=rng):
        ...                                           # batch is a Samples of 256 rows

    # Several boards or variants (tracks) in one directory, drawn at configured shares:
    window = ReplayWindow(run_dir / "shards", 200_000, track_shares={
        Track(4, "komi", "standard"): 0.25, "6/komi/standard": 0.75})
    window.refresh()
    batch = window.sample_batch(256, rng)             # MixedBatch: one part per track
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import time
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from catena_zero.data.atomic import atomic_open
from catena_zero.data.samples import FIELDS, MixedBatch, Samples
from catena_zero.rules import Track
from catena_zero.rules.observe import BASIC_GLOBALS, NUM_GLOBALS, complete_globals

FORMAT_VERSION = 1
SHARD_SUFFIX = ".npz"
_PACKED = ("planes", "legal_mask")
_MEMBERS = {
    "format_version", "meta", "planes_shape", "legal_mask_count",
    *(f"{name}_bits" if name in _PACKED else name for name in FIELDS),
}
_SEAL_PREFIX = b"catena-sha256:"  # zip comment: this prefix, then 64 hex digits
_SEAL_LENGTH = len(_SEAL_PREFIX) + 64
_ZIP_END = b"PK\x05\x06"  # signature of the zip end-of-central-directory record
_ZIP_END_SIZE = 22  # that record without its comment


class ShardError(ValueError):
    """A shard file is missing, truncated, corrupt, of another format version or inconsistent."""


@dataclass
class ShardMeta:
    side: int  # board side n
    game_type: str  # "komi" | "nokomi" | "double"
    scoring: str  # "standard" | "longest" | "quadratic"
    model_step: int = 0  # training step of the weights that played these games
    num_games: int = 0  # games the samples come from
    model_version: str = ""  # free-form weights identifier (e.g. checkpoint name)
    created_time: float = field(default_factory=time.time)  # unix time of writing
    num_samples: int = 0  # rows in the shard (set by write_shard)
    format_version: int = FORMAT_VERSION  # shard format (set by write_shard)
    extra: dict[str, Any] = field(default_factory=dict)  # JSON-able extras (e.g. komi stats)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @property
    def track(self) -> Track:
        """The board and variant the shard's games were played on."""
        return Track(int(self.side), str(self.game_type), str(self.scoring))

    @classmethod
    def from_json(cls, text: str) -> ShardMeta:
        values = json.loads(text)
        if not isinstance(values, dict):
            raise ValueError(f"shard meta must be a JSON object, got {type(values).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown shard meta key(s): {', '.join(unknown)}")
        return cls(**values)


def shard_filename(sequence: int, tag: str = "") -> str:
    """`shard-000000042[-tag].npz`: zero-padded so names sort in sequence order."""
    if not isinstance(sequence, int | np.integer) or sequence < 0:
        raise ValueError(f"shard sequence must be an int >= 0, got {sequence!r}")
    if tag and not tag.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"shard tag must be alphanumeric (with - or _), got {tag!r}")
    return f"shard-{int(sequence):09d}{'-' + tag if tag else ''}{SHARD_SUFFIX}"


def write_shard(path: str | os.PathLike, samples: Samples, meta: ShardMeta) -> Path:
    """Write `samples` with `meta` atomically to `path` (must end in .npz); returns the path.

    `meta.num_samples` and `meta.format_version` are set here. Parent dirs are created.
    """
    path = Path(path)
    if path.suffix != SHARD_SUFFIX:
        raise ValueError(f"shard path must end in {SHARD_SUFFIX}, got {str(path)!r}")
    if not isinstance(samples, Samples):
        raise ValueError(f"write_shard needs a Samples, got {type(samples).__name__}")
    if not isinstance(meta, ShardMeta):
        raise ValueError(f"write_shard needs a ShardMeta, got {type(meta).__name__}")
    meta = dataclasses.replace(meta, num_samples=len(samples), format_version=FORMAT_VERSION)
    try:
        meta_json = meta.to_json()
    except (TypeError, ValueError) as error:
        raise ValueError(f"shard meta is not JSON-serialisable: {error}") from None
    count = len(samples)
    arrays: dict[str, np.ndarray] = {
        "format_version": np.array(FORMAT_VERSION, dtype=np.int64),
        "meta": np.frombuffer(meta_json.encode(), dtype=np.uint8),
        "planes_shape": np.array(samples.planes.shape, dtype=np.int64),
        "legal_mask_count": np.array(samples.legal_mask.shape[1], dtype=np.int64),
        "planes_bits": np.packbits(
            samples.planes.reshape(count, int(np.prod(samples.planes.shape[1:]))).astype(bool),
            axis=1,
        ),
        "legal_mask_bits": np.packbits(samples.legal_mask, axis=1),
    }
    for name in FIELDS:
        if name not in _PACKED:
            arrays[name] = getattr(samples, name)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with atomic_open(path) as handle:
        handle.write(_seal(buffer.getvalue()))
    return path


def _seal(archive: bytes) -> bytes:
    """The archive with its zip comment set to the SHA-256 of every byte before the digest
    (the end record's comment length included). Zip readers skip the comment."""
    end = len(archive) - _ZIP_END_SIZE
    if archive[end:end + 4] != _ZIP_END or archive[-2:] != b"\0\0":
        raise ValueError("numpy wrote a zip archive without a plain end record")
    head = archive[:-2] + _SEAL_LENGTH.to_bytes(2, "little") + _SEAL_PREFIX
    return head + hashlib.sha256(head).hexdigest().encode()


def _check_seal(path: Path, data: bytes) -> None:
    """ShardError unless `data` ends with an intact seal, or is an archive written before
    shards were sealed (its end record with an empty comment)."""
    if data[-_ZIP_END_SIZE:-_ZIP_END_SIZE + 4] == _ZIP_END and data[-2:] == b"\0\0":
        return
    end = len(data) - _SEAL_LENGTH - _ZIP_END_SIZE
    comment_length = data[end + _ZIP_END_SIZE - 2:end + _ZIP_END_SIZE]
    if end < 0 or data[end:end + 4] != _ZIP_END or comment_length != _SEAL_LENGTH.to_bytes(
            2, "little"):
        raise ShardError(f"shard {str(path)!r} is truncated or corrupt: no zip end record "
                         f"({len(data)} bytes)")
    head, digest = data[:-64], data[-64:]
    if not head.endswith(_SEAL_PREFIX) or hashlib.sha256(head).hexdigest().encode() != digest:
        raise ShardError(f"shard {str(path)!r} is truncated or corrupt: SHA-256 mismatch "
                         f"({len(data)} bytes)")


def _load_members(path: Path) -> dict[str, np.ndarray]:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ShardError(f"cannot read shard {str(path)!r}: {error}") from None
    _check_seal(path, data)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            names = set(archive.files)
            missing = sorted(_MEMBERS - names)
            if missing:
                raise ShardError(f"shard {str(path)!r} lacks member(s) {', '.join(missing)}")
            version = int(archive["format_version"])
            if version != FORMAT_VERSION:
                raise ShardError(
                    f"shard {str(path)!r} has format version {version}, this reader reads"
                    f" version {FORMAT_VERSION}"
                )
            # Reading every member in full makes zipfile verify each member's CRC-32.
            return {name: archive[name] for name in _MEMBERS}
    except ShardError:
        raise
    except Exception as error:  # zipfile/numpy raise many types on damaged bytes
        raise ShardError(
            f"shard {str(path)!r} is truncated or corrupt: {type(error).__name__}: {error}"
        ) from None


def read_shard_meta(path: str | os.PathLike) -> ShardMeta:
    """Only the metadata of a shard (still checks the whole file)."""
    return read_shard(path)[1]


def read_shard(path: str | os.PathLike) -> tuple[Samples, ShardMeta]:
    """Load a shard -> (Samples, ShardMeta). Raises ShardError on any defect; never partial."""
    path = Path(path)
    members = _load_members(path)
    try:
        meta = ShardMeta.from_json(members["meta"].tobytes().decode())
    except (ValueError, TypeError, RecursionError) as error:  # UnicodeDecodeError, JSON, keys
        raise ShardError(f"shard {str(path)!r} has unreadable meta: {error}") from None
    try:
        shape = tuple(int(v) for v in members["planes_shape"])
        if len(shape) != 4 or min(shape) < 0:
            raise ValueError(f"planes_shape {shape} is not a [N, P, H, W] shape")
        count = shape[0]
        plane_values = int(np.prod(shape[1:]))
        planes_bits = members["planes_bits"]
        if planes_bits.shape != (count, (plane_values + 7) // 8):
            raise ValueError(f"planes_bits shape {planes_bits.shape} does not match {shape}")
        planes = np.unpackbits(planes_bits, axis=1, count=plane_values).reshape(shape)
        actions = int(members["legal_mask_count"])
        legal_bits = members["legal_mask_bits"]
        if legal_bits.shape != (count, (actions + 7) // 8):
            raise ValueError(f"legal_mask_bits shape {legal_bits.shape} does not match {actions}")
        legal_mask = np.unpackbits(legal_bits, axis=1, count=actions).astype(bool)
        values = {name: members[name] for name in FIELDS if name not in _PACKED}
        samples = Samples(planes=planes, legal_mask=legal_mask, **values)
        if meta.num_samples != count:
            raise ValueError(f"meta says {meta.num_samples} samples, arrays hold {count}")
    except (ValueError, TypeError, LookupError, ArithmeticError, MemoryError) as error:
        raise ShardError(f"shard {str(path)!r} is inconsistent: {error}") from None
    return samples, meta


def list_shards(directory: str | os.PathLike) -> list[Path]:
    """Complete shard files in `directory`, sorted by name (oldest first); [] if it is missing.

    Temp files (`*.npz.tmp-<token>`) of writes in progress are never listed.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix == SHARD_SUFFIX and p.is_file())


class ReplayWindow:
    """The newest trained samples (weight > 0) of the shards in `directory`, by track.

    `refresh()` reads shards that appeared since the last call and forgets those that fell
    out of the window; the oldest shard in the window is trimmed so that exactly
    min(window_samples, available) samples are held. Bad shards are skipped with a warning
    (`on_bad_shard="skip"`, listed in `bad_shards`) or raise ShardError (`"raise"`).
    With `num_planes`, samples keep their first `num_planes` input planes, so shards written
    before planes were added and after can share one window; a shard with fewer is bad.
    Globals likewise: shards of observation version 1 (BASIC_GLOBALS globals) get today's
    board-size globals from their meta's side; with `num_globals` every shard keeps its first
    `num_globals` (completed the same way when it holds fewer).

    Tracks (`Track`: side, game type, scoring of each shard's meta): without `track_shares`
    the window is the newest `window_samples` of all shards and batches draw uniformly from
    them. With `track_shares` {track: share} (shares > 0, normalised), only those tracks are
    read, track t keeps its newest round(window_samples * share_t) samples, and each batch
    row comes from track t with probability share_t (renormalised over the tracks that hold
    samples yet). `sample_batch` gives a Samples while the window holds one track, else a
    MixedBatch with one part per track drawn (labels: the tracks).
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        window_samples: int,
        on_bad_shard: str = "skip",
        num_planes: int | None = None,
        track_shares: Mapping[Track | tuple | str, float] | None = None,
        num_globals: int | None = None,
    ):
        if not isinstance(window_samples, int | np.integer) or window_samples < 1:
            raise ValueError(f"window_samples must be an int >= 1, got {window_samples!r}")
        if on_bad_shard not in ("skip", "raise"):
            raise ValueError(f"on_bad_shard must be 'skip' or 'raise', got {on_bad_shard!r}")
        self.directory = Path(directory)
        self.window_samples = int(window_samples)
        for name, value, low in (("num_planes", num_planes, 1), ("num_globals", num_globals, 0)):
            if value is not None and (not isinstance(value, int | np.integer) or value < low):
                raise ValueError(f"{name} must be None or an int >= {low}, got {value!r}")
        self.on_bad_shard = on_bad_shard
        self.num_planes = num_planes
        self.num_globals = num_globals
        self.track_shares = _normalised_shares(track_shares)
        self.bad_shards: dict[Path, str] = {}
        # Window shards' rows in their track's samples: path -> (track, start, stop).
        # One copy in memory; every shard's track, once read, so that a shard of a track
        # that is not wanted or already full is never read again.
        self._segments: dict[Path, tuple[Track, int, int]] = {}
        self._track_samples: dict[Track, Samples] = {}
        self._track_of: dict[Path, Track] = {}

    @property
    def num_samples(self) -> int:
        return sum(len(samples) for samples in self._track_samples.values())

    @property
    def shard_paths(self) -> list[Path]:
        """Shards (oldest first) contributing to the window after the last refresh."""
        return sorted(self._segments)

    @property
    def tracks(self) -> list[Track]:
        """The tracks holding samples after the last refresh (sorted)."""
        return sorted(self._track_samples)

    @property
    def track_samples(self) -> dict[Track, Samples]:
        """Each track's samples in the window, oldest first."""
        return dict(self._track_samples)

    @property
    def samples(self) -> Samples | None:
        """All samples in the window, oldest first (None while empty); ValueError when the
        window holds several tracks (see `track_samples`)."""
        if len(self._track_samples) > 1:
            raise ValueError(f"the replay window holds {len(self._track_samples)} tracks "
                             f"({', '.join(map(str, self.tracks))}); read track_samples")
        return next(iter(self._track_samples.values()), None)

    def _load(self, path: Path) -> Samples | None:
        if path in self._segments:
            track, start, stop = self._segments[path]
            return self._track_samples[track].take(slice(start, stop))
        if path in self.bad_shards:
            return None
        try:
            samples, meta = read_shard(path)
            self._track_of[path] = meta.track
            if self.track_shares is not None and meta.track not in self.track_shares:
                return None  # another consumer's track: neither read again nor bad
            samples = self._fit_inputs(path, samples, meta)
        except ShardError as error:
            if self.on_bad_shard == "raise":
                raise
            self.bad_shards[path] = str(error)
            warnings.warn(f"skipping bad shard: {error}", stacklevel=3)
            return None
        return samples.trained_only()

    def _fit_inputs(self, path: Path, samples: Samples, meta: ShardMeta) -> Samples:
        """The shard's samples with the planes and globals the window serves."""
        size = samples.planes.shape[2]
        if size != 2 * meta.side - 1:
            raise ShardError(f"shard {str(path)!r} says side {meta.side} but holds planes on "
                             f"a {size}x{size} grid")
        if self.num_planes is not None:
            held = samples.planes.shape[1]
            if held < self.num_planes:
                raise ShardError(f"shard {str(path)!r} holds {held} input planes; the "
                                 f"network reads {self.num_planes}")
            samples = samples.first_planes(self.num_planes)
        held = samples.globals.shape[1]
        wanted = held if self.num_globals is None else self.num_globals
        if self.num_globals is None and held == BASIC_GLOBALS:
            wanted = NUM_GLOBALS  # an older observation: add today's board-size globals
        if wanted > held:
            if held < BASIC_GLOBALS or wanted > NUM_GLOBALS:
                raise ShardError(f"shard {str(path)!r} holds {held} globals; the network "
                                 f"reads {wanted}")
            samples = samples.replace(globals=complete_globals(samples.globals, meta.side))
        if wanted < samples.globals.shape[1]:
            samples = samples.replace(globals=np.ascontiguousarray(samples.globals[:, :wanted]))
        return samples

    def set_track_shares(self, shares: Mapping[Track | tuple | str, float]) -> None:
        """New shares for the next refresh and draws (a run whose mix moves as it trains);
        tracks at share 0 are left out."""
        self.track_shares = _normalised_shares(
            {track: share for track, share in shares.items() if share > 0})

    def _quota(self, track: Track) -> int:
        return max(1, round(self.window_samples * self.track_shares[track]))

    def refresh(self) -> int:
        """Bring the window up to date with the directory; returns the samples held."""
        shares = self.track_shares
        chosen: dict[Track, list[tuple[Path, Samples]]] = {}  # newest first
        totals: dict[Track, int] = {}
        total = 0
        for path in reversed(list_shards(self.directory)):
            if shares is None and total >= self.window_samples:
                break
            if shares is not None and all(totals.get(t, 0) >= self._quota(t) for t in shares):
                break
            known = self._track_of.get(path)
            if shares is not None and known is not None and (
                    known not in shares or totals.get(known, 0) >= self._quota(known)):
                continue  # another track's shard, or one its full track no longer needs
            samples = self._load(path)
            track = self._track_of.get(path)
            if samples is None or len(samples) == 0:
                continue
            if shares is not None and (track not in shares
                                       or totals.get(track, 0) >= self._quota(track)):
                continue
            chosen.setdefault(track, []).append((path, samples))
            totals[track] = totals.get(track, 0) + len(samples)
            total += len(samples)
        if shares is None and total > self.window_samples:
            # Trim the oldest shard's earliest rows so the window holds exactly window_samples.
            oldest_track = min(chosen, key=lambda t: chosen[t][-1][0])
            self._trim_oldest(chosen[oldest_track], total - self.window_samples)
        elif shares is not None:
            for track, parts in chosen.items():
                self._trim_oldest(parts, totals[track] - self._quota(track))
        segments: dict[Path, tuple[Track, int, int]] = {}
        for track, parts in chosen.items():
            start = 0
            for path, samples in reversed(parts):
                segments[path] = (track, start, start + len(samples))
                start += len(samples)
        if segments != self._segments:
            self._track_samples = {
                track: Samples.concatenate([samples for _, samples in reversed(chosen[track])])
                for track in sorted(chosen)
            }
            self._segments = segments
        return self.num_samples

    @staticmethod
    def _trim_oldest(parts: list[tuple[Path, Samples]], excess: int) -> None:
        """Drop the earliest `excess` rows of the oldest of `parts` (newest first)."""
        if excess > 0:
            path, oldest = parts[-1]
            parts[-1] = (path, oldest.take(slice(excess, len(oldest))))

    def sample_batch(self, batch_size: int, rng: np.random.Generator) -> Samples | MixedBatch:
        """`batch_size` samples drawn with replacement: uniformly from the window, or by the
        tracks' shares (see the class docstring). A Samples while one track is held, else a
        MixedBatch (one part per track drawn, sorted by track; labels: the tracks)."""
        if not self._track_samples:
            raise ValueError(f"replay window over {str(self.directory)!r} is empty; refresh()")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        tracks = self.tracks
        if len(tracks) == 1 and self.track_shares is None:
            samples = self._track_samples[tracks[0]]
            return samples.take(rng.integers(0, len(samples), size=batch_size))
        sizes = np.array([len(self._track_samples[t]) for t in tracks])
        if self.track_shares is None:
            # Uniform over all samples held, as one window: rows fall to tracks by size.
            draws = rng.integers(0, int(sizes.sum()), size=batch_size)
            offsets = np.concatenate([[0], np.cumsum(sizes)])
            which = np.searchsorted(offsets, draws, side="right") - 1
            rows = [draws[which == k] - offsets[k] for k in range(len(tracks))]
        else:
            shares = np.array([self.track_shares[t] for t in tracks])
            counts = rng.multinomial(batch_size, shares / shares.sum())
            rows = [rng.integers(0, size, size=count) for size, count in zip(sizes, counts,
                                                                            strict=True)]
        parts = [(track, self._track_samples[track].take(index))
                 for track, index in zip(tracks, rows, strict=True) if len(index)]
        if len(tracks) == 1:
            return parts[0][1]
        return MixedBatch([part for _, part in parts], labels=[track for track, _ in parts])

    def batches(
        self, num_batches: int, batch_size: int, rng: np.random.Generator
    ) -> Iterator[Samples | MixedBatch]:
        """Yield `num_batches` minibatches from `sample_batch`."""
        for _ in range(num_batches):
            yield self.sample_batch(batch_size, rng)


def _normalised_shares(shares: Mapping | None) -> dict[Track, float] | None:
    """{Track: share / sum of shares}, or None; ValueError naming a bad track or share."""
    if shares is None:
        return None
    if not isinstance(shares, Mapping) or not shares:
        raise ValueError(f"track_shares must be a non-empty mapping of track to share, "
                         f"got {shares!r}")
    parsed: dict[Track, float] = {}
    for key, share in shares.items():
        track = Track.parse(key)
        if track in parsed:
            raise ValueError(f"track_shares names track {track} twice")
        if isinstance(share, bool) or not isinstance(share, int | float | np.number) or not (
                np.isfinite(share) and share > 0):
            raise ValueError(f"track_shares[{track}] must be a number > 0, got {share!r}")
        parsed[track] = float(share)
    total = sum(parsed.values())
    return {track: share / total for track, share in parsed.items()}
