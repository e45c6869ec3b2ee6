"""Gating inside a training run: every `every_iterations`-th checkpoint plays its track's
champion exactly once, even across a crash.

Training rotates its own checkpoints away, and a champion must outlive that, so the gate plays
a copy kept beside the registry. Every step leaves a file, written atomically, in this order:

    <registry dir>/champions/<track>/<copy>.pt.pending.json   the gate is due (a PendingGate)
    <registry dir>/champions/<track>/<copy>.pt                 the copy that plays
    <registry>                                                 the promotion, if it wins
    <run_dir>/gates/gate-iter<iteration>.json                  the result (a gate record)

and then the pending marker goes, and so does a copy that lost. The copy's name holds the
run's name, the checkpoint's name and the SHA-256 of its bytes, so the copy of another run
that had the same directory name is never taken for this run's candidate.

`recover(run_dir)` (called when a run starts; the inline loop and the Ray evaluator both do)
finishes what a killed process left: a pending gate whose promotion is already in the registry
gets its record, any other pending gate is played again, and a copy that neither the registry
nor a pending marker refers to (an orphan) is removed. Pending markers of other runs sharing
the registry are left alone, so their copies stay.

    gate = make_training_gate(rules, TrainingGateConfig(gate=GateConfig(registry="runs/c.json")))
    gate.recover("runs/a")                 # at start
    gate(event)                            # after each checkpoint: prepare + gate
    pending = gate.prepare(event)          # or in two steps (Ray: the driver prepares at once,
    gate.gate(pending)                     # before the checkpoint can rotate; the evaluator plays)
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from catena_zero.arena.gating import GateResult
from catena_zero.arena.registry import ChampionRegistry, Track
from catena_zero.data.atomic import atomic_write_bytes, atomic_write_text
from catena_zero.rules import Rules

PENDING_SUFFIX = ".pending.json"
PENDING_FORMAT = "catena_zero.pending_gate"
RECORD_FORMAT = "catena_zero.gate_record"
FORMAT_VERSION = 1
STALE_TEMP_SECONDS = 600.0  # a copy's temp file this old belongs to a killed writer


@dataclass(frozen=True)
class PendingGate:
    """A checkpoint copied beside the registry whose gate is due (prepare -> gate)."""

    candidate: str  # the copy under <registry dir>/champions/<track>/ that plays
    source: str  # the run's checkpoint it is a copy of
    run_dir: str  # the run directory (absolute)
    iteration: int  # the run's iteration of the checkpoint
    step: int  # its training step
    fair_komi: float | None  # the run's fair-komi estimate then (the gate's komi)

    @property
    def marker(self) -> Path:
        return Path(self.candidate + PENDING_SUFFIX)

    def to_json(self) -> str:
        return json.dumps({"format": PENDING_FORMAT, "format_version": FORMAT_VERSION,
                           **asdict(self)}, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_file(cls, path: Path) -> PendingGate:
        """The pending gate of a marker file; ValueError naming the file when it is not one."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.pop("format") != PENDING_FORMAT or data.pop("format_version") != 1:
                raise ValueError("not a pending-gate marker of format version 1")
            names = {field.name for field in fields(cls)}
            if set(data) != names:
                raise ValueError(f"keys {sorted(data)}, expected {sorted(names)}")
            return cls(**data)
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            raise ValueError(f"pending gate {path}: unreadable ({error})") from None


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


class TrainingGate:
    """The training loop's `on_checkpoint` hook (see the module docstring). A plain object of
    plain parts, so Ray can ship it to an evaluator actor."""

    def __init__(self, callback: Callable[..., GateResult], every_iterations: int,
                 rules: Rules, registry: str, log: Callable[[str], None] | None = print):
        self.callback = callback
        self.every_iterations = every_iterations
        self.track = Track.from_rules(rules)
        self.registry = registry
        self.log = log

    @property
    def store(self) -> Path:
        """Where the copies live: `<registry dir>/champions/<track>/`."""
        return Path(self.registry).parent / "champions" / self.track.key

    def __call__(self, event: Any) -> GateResult | None:
        pending = self.prepare(event)
        return None if pending is None else self.gate(pending)

    def prepare(self, event: Any) -> PendingGate | None:
        """Mark the gate of `event` (a CheckpointEvent) as due and copy its checkpoint; None
        when this iteration is not gated or this checkpoint's gate was already prepared."""
        iteration = int(event.counters.iteration)
        if iteration % self.every_iterations != 0:
            return None
        source = Path(event.path)
        data = source.read_bytes()
        run_dir = Path(event.run_dir).resolve()
        digest = hashlib.sha256(data).hexdigest()[:16]
        candidate = self.store / f"{run_dir.name}-{source.stem}-{digest}.pt"
        record = read_gate_record(gate_record_path(run_dir, iteration))
        if record is not None and record.get("candidate") == str(candidate):
            return None  # gated already
        pending = PendingGate(str(candidate), str(source), str(run_dir), iteration,
                              int(event.counters.step), _float_or_none(event.fair_komi))
        if pending.marker.exists():
            return None  # due already: being played, or played again by `recover`
        # The marker first: a copy that neither it nor the registry names is an orphan.
        atomic_write_text(pending.marker, pending.to_json())
        if not candidate.exists():
            atomic_write_bytes(candidate, data)
        return pending

    def gate(self, pending: PendingGate) -> GateResult:
        """Play the pending gate, record its result in the run, drop the marker and a losing
        copy."""
        result = self.callback(pending.candidate, pending.step, fair_komi=pending.fair_komi)
        self._finish(pending, _record(pending, result, self.track))
        return result

    def recover(self, run_dir: str | Path) -> list[GateResult]:
        """Finish the gates of `run_dir` that a killed process left pending, then remove
        orphaned copies. Returns the results of the gates finished here."""
        run_dir = Path(run_dir).resolve()
        results = []
        for pending in self._pending_of(run_dir):
            done = read_gate_record(gate_record_path(run_dir, pending.iteration))
            if done is not None and done.get("candidate") == pending.candidate:
                self._finish(pending, None)  # killed after writing the record
                continue
            promoted = self._promotion_of(pending.candidate)
            if promoted is not None:  # killed after the promotion, before the record
                result = GateResult(self.track.key, pending.candidate, promoted.previous,
                                    pending.step, True, promoted.reason, None, None)
                record = _record(pending, result, self.track)
                record.update(score=promoted.score, games=promoted.games)
                self._finish(pending, record)
                self._say(f"gate of iteration {pending.iteration} had promoted "
                          f"{pending.candidate} before the run stopped; recorded")
                results.append(result)
                continue
            if not Path(pending.candidate).exists() and not self._copy_again(pending):
                self._say(f"gate of iteration {pending.iteration} cannot be played: its copy "
                          f"{pending.candidate} and checkpoint {pending.source} are gone")
                pending.marker.unlink(missing_ok=True)
                continue
            self._say(f"playing the gate of iteration {pending.iteration} again (the run "
                      f"stopped during it)")
            results.append(self.gate(pending))
        for orphan in self.remove_orphans():
            self._say(f"removed {orphan}: a copy no gate or registry entry refers to")
        return results

    def remove_orphans(self) -> list[Path]:
        """Remove copies in the store that no registry entry and no pending marker names, and
        temp files of copies a killed writer left; returns what was removed."""
        if not self.store.is_dir():
            return []
        # Copies, then markers, then the registry: a gate drops its marker only after its
        # promotion is in the registry, so a live champion is always seen by one of them.
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

    def _entries(self) -> list[Any]:
        registry = ChampionRegistry(self.registry)
        champion = registry.champion(self.track)
        return [*registry.history(self.track), *([champion] if champion else [])]

    def _referenced_names(self) -> set[str]:
        return {Path(entry.checkpoint).name for entry in self._entries()
                if Path(entry.checkpoint).parent.name == self.track.key}

    def _promotion_of(self, candidate: str) -> Any:
        name = Path(candidate).name
        for entry in reversed(self._entries()):
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
        if record is not None:
            atomic_write_text(gate_record_path(pending.run_dir, pending.iteration),
                              json.dumps(record, indent=1, sort_keys=True) + "\n")
        pending.marker.unlink(missing_ok=True)
        if Path(pending.candidate).name not in self._referenced_names():
            Path(pending.candidate).unlink(missing_ok=True)

    def _say(self, message: str) -> None:
        if self.log is not None:
            self.log(message)


def _record(pending: PendingGate, result: GateResult, track: Track) -> dict[str, Any]:
    match = result.match
    return {
        "format": RECORD_FORMAT, "format_version": FORMAT_VERSION, "track": track.key,
        "iteration": pending.iteration, "step": pending.step, "source": pending.source,
        "candidate": pending.candidate, "champion": result.champion,
        "promoted": result.promoted, "reason": result.reason,
        "score": None if match is None else match.score,
        "games": 0 if match is None else match.num_games,
        "wins_draws_losses": None if match is None else [match.wins, match.draws, match.losses],
        "summary": result.summary(),
    }


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)
