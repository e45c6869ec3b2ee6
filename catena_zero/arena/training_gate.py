"""Gating inside a training run: every `every_iterations`-th checkpoint plays the champion of
each track of the run's mix exactly once, even across a crash.

Training rotates its own checkpoints away, and a champion must outlive that, so the gate plays
a copy kept beside the registry, one copy however many tracks it plays (or wins: the registry
entries of several tracks may name it). Every step leaves a file, written atomically, in this
order:

    <registry dir>/champions/<track>/<copy>.pt.pending.json   the gate is due (a PendingGate,
                                                               listing the tracks to play)
    <registry dir>/champions/<track>/<copy>.pt                 the copy that plays
    then for each track, in the mix's order:
    <registry>                                                 the promotion, if it wins
    <run_dir>/gates/gate-iter<iteration>.json                  the record, with this track
    the pending marker again, without this track

and then the pending marker goes, and so does a copy that no registry entry names. `<track>`
is the track of the hook's rules (the run's own), whichever tracks the copy plays. The copy's
name holds the run's name, the checkpoint's name and the SHA-256 of its bytes, so the copy of
another run that had the same directory name is never taken for this run's candidate.

The tracks gated are those of the CheckpointEvent's mix (`event.tracks`; none named: the
track of the hook's rules), or of them those in `TrainingGateConfig.tracks`; each match is
played at that track's fair komi (`event.fair_komis[track.key]`, else `event.fair_komi`,
rounded into the track's komi range; 0 without an estimate).

A gate record (format version 2) holds one entry per track played, in order:

    {"format": "catena_zero.gate_record", "format_version": 2, "iteration": 10, "step": 40,
     "source": ".../checkpoint-...pt", "candidate": ".../champions/<track>/<copy>.pt",
     "tracks": [{"track": "side2-komi-standard", "champion": <path or null>,
                 "promoted": true, "reason": "threshold", "score": 0.6, "games": 40,
                 "wins_draws_losses": [24, 0, 16], "komi": 1, "fair_komi": 0.8,
                 "summary": "..."}, ...],
     "pending": [],                 # tracks still to play (a gate a crash stopped)
     "summary": "..."}              # the entries' summaries, one line each

and a gate of one track also has its entry's fields at the top level, as format 1 had.

`recover(run_dir)` (called when a run starts; the inline loop and the Ray evaluator both do)
finishes what a killed process left: of a pending gate, a track whose result is recorded is
skipped, a track whose promotion is already in the registry gets its record, any other track
is played again; then a copy that neither the registry nor a pending marker refers to (an
orphan) is removed. Pending markers of other runs sharing the registry are left alone, so
their copies stay.

    gate = make_training_gate(rules, TrainingGateConfig(gate=GateConfig(registry="runs/c.json")))
    gate.recover("runs/a")                 # at start
    gate(event)                            # after each checkpoint: prepare + gate
    pending = gate.prepare(event)          # or in two steps (Ray: the driver prepares at once,
    gate.gate(pending)                     # before the checkpoint can rotate; the evaluator plays)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from catena_zero.arena.gate_result import GateResult, MixGateResult, finite_or_none
from catena_zero.arena.registry import ChampionRegistry, Track
from catena_zero.data.atomic import atomic_write_bytes, atomic_write_text
from catena_zero.rules import Rules

PENDING_SUFFIX = ".pending.json"
PENDING_FORMAT = "catena_zero.pending_gate"
RECORD_FORMAT = "catena_zero.gate_record"
FORMAT_VERSION = 2  # of markers and records; version 1 (one track, no track list) still reads
STALE_TEMP_SECONDS = 600.0  # a copy's temp file this old belongs to a killed writer
_FORMAT_1_FIELDS = ("candidate", "source", "run_dir", "iteration", "step", "fair_komi")


@dataclass(frozen=True)
class PendingGate:
    """A checkpoint copied beside the registry whose gate is due (prepare -> gate)."""

    candidate: str  # the copy under <registry dir>/champions/<track>/ that plays
    source: str  # the run's checkpoint it is a copy of
    run_dir: str  # the run directory (absolute)
    iteration: int  # the run's iteration of the checkpoint
    step: int  # its training step
    fair_komi: float | None  # the run's fair-komi estimate then (of its first track)
    # Track keys still to play, in order; empty (a marker of format 1): the hook's own track
    tracks: tuple[str, ...] = ()
    # Track key -> that track's fair-komi estimate then (absent: `fair_komi`)
    fair_komis: dict[str, float | None] = field(default_factory=dict)

    @property
    def marker(self) -> Path:
        return Path(self.candidate + PENDING_SUFFIX)

    def komi_estimate(self, track: str) -> float | None:
        """The fair-komi estimate the gate on `track` (a key) plays at."""
        return self.fair_komis.get(track, self.fair_komi)

    def to_json(self) -> str:
        return json.dumps({"format": PENDING_FORMAT, "format_version": FORMAT_VERSION,
                           **asdict(self)}, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_file(cls, path: Path) -> PendingGate:
        """The pending gate of a marker file (format version 1 or 2); ValueError naming the
        file when it is not one."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.pop("format") != PENDING_FORMAT:
                raise ValueError("not a pending-gate marker")
            version = data.pop("format_version")
            if version not in (1, 2) or isinstance(version, bool):
                raise ValueError(f"format version {version!r}, this code reads 1 and 2")
            names = set(_FORMAT_1_FIELDS) if version == 1 else {f.name for f in fields(cls)}
            if set(data) != names:
                raise ValueError(f"keys {sorted(data)}, expected {sorted(names)}")
            if version == 2:
                data["tracks"] = _track_keys(data["tracks"])
                data["fair_komis"] = _estimates(data["fair_komis"])
            return cls(**data)
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            raise ValueError(f"pending gate {path}: unreadable ({error})") from None


def _track_keys(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(key, str) for key in value):
        raise ValueError(f"'tracks' must be a list of track keys, got {value!r}")
    keys = tuple(Track.parse(key).key for key in value)
    if keys != tuple(value):
        raise ValueError(f"'tracks' must hold keys like 'side6-komi-standard', got {value!r}")
    return keys


def _estimates(value: Any) -> dict[str, float | None]:
    if not isinstance(value, dict):
        raise ValueError(f"'fair_komis' must be an object, got {value!r}")
    for key, estimate in value.items():
        if estimate is not None and (isinstance(estimate, bool)
                                     or not isinstance(estimate, int | float)):
            raise ValueError(f"'fair_komis'[{key!r}] must be a number or null, "
                             f"got {estimate!r}")
    return dict(value)


def gate_record_path(run_dir: str | Path, iteration: int) -> Path:
    return Path(run_dir) / "gates" / f"gate-iter{int(iteration):06d}.json"


def read_gate_record(path: str | Path) -> dict[str, Any] | None:
    """The gate record at `path`; None when there is none or it cannot be read."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        return None
    return data


def recorded_tracks(record: dict[str, Any] | None) -> list[str]:
    """The keys of the tracks a gate record holds results of (format 1: its one track)."""
    if record is None:
        return []
    entries = record.get("tracks")
    if isinstance(entries, list):
        return [entry["track"] for entry in entries
                if isinstance(entry, dict) and isinstance(entry.get("track"), str)]
    return [record["track"]] if isinstance(record.get("track"), str) else []


class TrainingGate:
    """The training loop's `on_checkpoint` hook (see the module docstring). A plain object of
    plain parts, so Ray can ship it to an evaluator actor.

    callback(candidate, step, fair_komi=..., track=Track) plays one track's gate
    (`make_gating_callback`); `tracks` ("side/game_type/scoring" each) limits the tracks
    gated to those of them in the run's mix (empty: all).
    """

    def __init__(self, callback: Callable[..., GateResult], every_iterations: int,
                 rules: Rules, registry: str, log: Callable[[str], None] | None = print,
                 tracks: tuple[str, ...] = ()):
        self.callback = callback
        self.every_iterations = every_iterations
        self.track = Track.from_rules(rules)
        self.registry = registry
        self.log = log
        self.tracks = tuple(Track.parse(track) for track in tracks)
        self._unplayed_said: set[Track] = set()

    @property
    def store(self) -> Path:
        """Where the copies live: `<registry dir>/champions/<track of the hook's rules>/`."""
        return Path(self.registry).parent / "champions" / self.track.key

    def __call__(self, event: Any) -> GateResult | MixGateResult | None:
        pending = self.prepare(event)
        return None if pending is None else self.gate(pending)

    def gated_tracks(self, event: Any) -> list[Track]:
        """The tracks the gate of `event` plays: those of its mix (none named: the hook's
        rules'), in order, of them only the configured ones when `tracks` was given."""
        mix: list[Track] = []
        for track in getattr(event, "tracks", ()) or (self.track,):
            parsed = Track.parse(track)
            if parsed not in mix:
                mix.append(parsed)
        if not self.tracks:
            return mix
        unplayed = [track for track in self.tracks
                    if track not in mix and track not in self._unplayed_said]
        if unplayed:
            self._unplayed_said.update(unplayed)
            self._say(f"warning: gating.tracks {', '.join(map(str, unplayed))} not in the "
                      f"run's mix ({', '.join(map(str, mix))}); not gated")
        return [track for track in mix if track in self.tracks]

    def prepare(self, event: Any) -> PendingGate | None:
        """Mark the gate of `event` (a CheckpointEvent) as due and copy its checkpoint; None
        when this iteration is not gated, no track is, or this checkpoint's gate was already
        prepared."""
        iteration = int(event.counters.iteration)
        if iteration % self.every_iterations != 0:
            return None
        tracks = self.gated_tracks(event)
        if not tracks:
            return None
        source = Path(event.path)
        data = source.read_bytes()
        run_dir = Path(event.run_dir).resolve()
        digest = hashlib.sha256(data).hexdigest()[:16]
        candidate = self.store / f"{run_dir.name}-{source.stem}-{digest}.pt"
        record = read_gate_record(gate_record_path(run_dir, iteration))
        if record is not None and record.get("candidate") == str(candidate):
            return None  # gated already
        estimates = getattr(event, "fair_komis", None) or {}
        fair_komi = finite_or_none(event.fair_komi)
        pending = PendingGate(
            str(candidate), str(source), str(run_dir), iteration, int(event.counters.step),
            fair_komi, tuple(track.key for track in tracks),
            {track.key: finite_or_none(estimates.get(track.key, fair_komi))
             for track in tracks})
        if pending.marker.exists():
            return None  # due already: being played, or played again by `recover`
        # The marker first: a copy that neither it nor the registry names is an orphan.
        atomic_write_text(pending.marker, pending.to_json())
        if not candidate.exists():
            atomic_write_bytes(candidate, data)
        return pending

    def gate(self, pending: PendingGate) -> GateResult | MixGateResult:
        """Play the pending gate on each of its tracks, record each result in the run, then
        drop the marker and a copy no registry entry names. A gate of one track returns its
        GateResult, one of several a MixGateResult."""
        results = self._play(pending, again=False)
        if len(results) == 1 and not self._several(pending):
            return results[0]
        return MixGateResult(tuple(results))

    def recover(self, run_dir: str | Path) -> list[GateResult]:
        """Finish the gates of `run_dir` that a killed process left pending, then remove
        orphaned copies. Returns the results (one per track) of the gates finished here."""
        run_dir = Path(run_dir).resolve()
        results = []
        for pending in self._pending_of(run_dir):
            results.extend(self._play(pending, again=True))
        for orphan in self.remove_orphans():
            self._say(f"removed {orphan}: a copy no gate or registry entry refers to")
        return results

    def remove_orphans(self) -> list[Path]:
        """Remove copies in the store that no registry entry (of any track) and no pending
        marker names, and temp files of copies a killed writer left; returns what was
        removed."""
        if not self.store.is_dir():
            return []
        # Copies, then markers, then the registry: a gate drops its marker only after its
        # promotions are in the registry, so a live champion is always seen by one of them.
        copies = [path for path in self.store.iterdir() if path.suffix == ".pt"]
        marked = {path.name[:-len(PENDING_SUFFIX)] for path in self.store.iterdir()
                  if path.name.endswith(PENDING_SUFFIX)}
        referenced = self._referenced_names()
        removed = []
        for copy in copies:
            if copy.name not in marked and copy.name not in referenced and copy.is_file():
                copy.unlink(missing_ok=True)
                removed.append(copy)
        for temporary in self.store.glob("*.tmp-*"):
            try:
                stale = time.time() - temporary.stat().st_mtime > STALE_TEMP_SECONDS
            except FileNotFoundError:
                continue
            if stale:
                temporary.unlink(missing_ok=True)
                removed.append(temporary)
        return removed

    # --- helpers -----------------------------------------------------------------------
    def _tracks_of(self, pending: PendingGate) -> tuple[str, ...]:
        return pending.tracks or (self.track.key,)

    def _several(self, pending: PendingGate, record: dict[str, Any] | None = None) -> bool:
        """Whether the gate of `pending` plays more than one track (those it has recorded
        and those left)."""
        if record is None:
            record = self._record_of(pending)
        return len(set(recorded_tracks(record)) | set(self._tracks_of(pending))) > 1

    def _record_of(self, pending: PendingGate) -> dict[str, Any] | None:
        """The run's record of this gate so far, None when there is none."""
        record = read_gate_record(gate_record_path(pending.run_dir, pending.iteration))
        if record is None or record.get("candidate") != pending.candidate:
            return None
        return record

    def _play(self, pending: PendingGate, again: bool) -> list[GateResult]:
        """Play, or record, each track of `pending` that its record does not hold yet, in
        order; `again`: the gate a killed process left (recovery)."""
        record = self._record_of(pending)
        done = set(recorded_tracks(record))
        entries = [] if record is None else list(record.get("tracks") or [])
        if record is not None and not entries:  # a record of format 1: its one track
            entries = [{name: value for name, value in record.items()
                        if name not in ("format", "format_version", "iteration", "step",
                                        "source", "candidate")}]
        todo = [key for key in self._tracks_of(pending) if key not in done]
        results: list[GateResult] = []
        tracked = self._several(pending, record)
        for index, key in enumerate(todo):
            track = Track.parse(key)
            estimate = pending.komi_estimate(key)
            where = f" on {key}" if tracked else ""
            promoted = self._promotion_of(pending.candidate, track)
            if promoted is not None:  # killed after the promotion, before the record
                result = GateResult(key, pending.candidate, promoted.previous, pending.step,
                                    True, promoted.reason, None, None,
                                    promoted.extra.get("komi"))
                entry = _track_entry(result, estimate)
                entry.update(score=promoted.score, games=promoted.games)
                self._say(f"gate of iteration {pending.iteration}{where} had promoted "
                          f"{pending.candidate} before the run stopped; recorded")
            else:
                if again:
                    if not Path(pending.candidate).exists() and not self._copy_again(pending):
                        self._say(f"gate of iteration {pending.iteration} cannot be played: "
                                  f"its copy {pending.candidate} and checkpoint "
                                  f"{pending.source} are gone")
                        pending.marker.unlink(missing_ok=True)
                        return results
                    self._say(f"playing the gate of iteration {pending.iteration} again"
                              f"{where} (the run stopped during it)")
                result = self.callback(pending.candidate, pending.step, fair_komi=estimate,
                                       track=track)
                entry = _track_entry(result, estimate)
            entries.append(entry)
            self._finish(pending, _record(pending, entries, tuple(todo[index + 1:])))
            results.append(result)
        if not todo:
            self._finish(pending, None)  # killed after writing the last record
        return results

    def _pending_of(self, run_dir: Path) -> list[PendingGate]:
        if not self.store.is_dir():
            return []
        found = []
        for marker in sorted(self.store.glob("*" + PENDING_SUFFIX)):
            try:
                pending = PendingGate.from_file(marker)
            except ValueError as error:
                self._say(f"warning: {error}; left in place")
                continue
            if Path(pending.run_dir) == run_dir:
                found.append(pending)
        return sorted(found, key=lambda pending: pending.iteration)

    def _referenced_names(self) -> set[str]:
        """Names of the copies in the store that an entry of any track names."""
        return {Path(checkpoint).name
                for checkpoint in ChampionRegistry(self.registry).checkpoints()
                if Path(checkpoint).parent.name == self.store.name}

    def _promotion_of(self, candidate: str, track: Track) -> Any:
        registry = ChampionRegistry(self.registry)
        champion = registry.champion(track)
        name = Path(candidate).name
        for entry in reversed([*registry.history(track), *([champion] if champion else [])]):
            if Path(entry.checkpoint).name == name:
                return entry
        return None

    def _copy_again(self, pending: PendingGate) -> bool:
        """Copy the source again (the run stopped between the marker and the copy), when it
        is still there with the same bytes."""
        try:
            data = Path(pending.source).read_bytes()
        except OSError:
            return False
        if not Path(pending.candidate).stem.endswith(hashlib.sha256(data).hexdigest()[:16]):
            return False
        atomic_write_bytes(pending.candidate, data)
        return True

    def _finish(self, pending: PendingGate, record: dict[str, Any] | None) -> None:
        """Write `record` (None: it is written already), then either mark the tracks it
        leaves to play or, with none left, drop the marker and a copy no entry names."""
        remaining: tuple[str, ...] = ()
        if record is not None:
            atomic_write_text(gate_record_path(pending.run_dir, pending.iteration),
                              json.dumps(record, indent=1, sort_keys=True) + "\n")
            remaining = tuple(record["pending"])
        if remaining:
            atomic_write_text(pending.marker,
                              dataclasses.replace(pending, tracks=remaining).to_json())
            return
        pending.marker.unlink(missing_ok=True)
        if Path(pending.candidate).name not in self._referenced_names():
            Path(pending.candidate).unlink(missing_ok=True)

    def _say(self, message: str) -> None:
        if self.log is not None:
            self.log(message)


def _track_entry(result: GateResult, fair_komi: float | None) -> dict[str, Any]:
    """A gate record's entry of one track."""
    match = result.match
    return {
        "track": result.track, "champion": result.champion, "promoted": result.promoted,
        "reason": result.reason,
        "score": None if match is None else match.score,
        "games": 0 if match is None else match.num_games,
        "wins_draws_losses": None if match is None else [match.wins, match.draws, match.losses],
        "komi": result.komi, "fair_komi": fair_komi, "summary": result.summary(),
    }


def _record(pending: PendingGate, entries: list[dict[str, Any]], remaining: tuple[str, ...]
            ) -> dict[str, Any]:
    record = {
        "format": RECORD_FORMAT, "format_version": FORMAT_VERSION,
        "iteration": pending.iteration, "step": pending.step, "source": pending.source,
        "candidate": pending.candidate, "tracks": entries, "pending": list(remaining),
        "summary": "\n".join(str(entry.get("summary", "")) for entry in entries),
    }
    if len(entries) == 1 and not remaining:  # one track: its fields at the top, as format 1
        record.update({name: value for name, value in entries[0].items() if name != "summary"})
    return record
