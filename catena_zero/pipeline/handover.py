"""Shards handed from self-play workers to the learner by files (the processes and Ray runtimes).

Handover works as in KataGo: a worker writes each shard atomically into `<run_dir>/pending/`;
the learner adopts it by renaming it (atomically) to `<run_dir>/shards/shard-<iteration>.npz`,
so `shards/` always holds exactly the shards that were trained on, in the order they were
trained on. A shard found in pending/ (left by a stopped run, or moved back there by
`resume.requeue_unsaved_shards`) arrives as `orphan_result`, with the statistics its metadata
holds; the games a worker kept whole travel in the shard's meta (`sample_games_of`).
"""

from __future__ import annotations

import re
from pathlib import Path

from catena_zero.data import list_shards, read_shard_meta
from catena_zero.pipeline.messages import SelfPlayResult
from catena_zero.selfplay.selfplay import SampleGame, SelfPlayStats

PENDING_DIR = "pending"
REQUEUED_PREFIX = "requeued-"  # a shard moved back to pending/ keeps its name after this
_SHARD_SEQUENCE = re.compile(r"shard-(\d+)")


def pending_dir(run_dir: str | Path) -> Path:
    return Path(run_dir) / PENDING_DIR


def shard_sequence(path: Path) -> int:
    """The number in a shard's name (`shard-<n>.npz`: the iteration it became), or -1."""
    match = _SHARD_SEQUENCE.match(path.name)
    return int(match.group(1)) if match else -1


def pending_shards(run_dir: str | Path) -> list[str]:
    """Complete shards waiting in pending/ (left by workers or requeued), oldest first: the
    requeued ones in their old order, then the rest by the time they were written."""
    paths = list_shards(pending_dir(run_dir))
    return [str(p) for p in sorted(paths, key=lambda p: (not p.name.startswith(REQUEUED_PREFIX),
                                                          p.stat().st_mtime, p.name))]


def cleanup_partial_writes(directory: Path) -> None:
    """Temp files of writes that a killed worker never finished (never read by anyone)."""
    for path in directory.glob("*.tmp-*"):
        path.unlink(missing_ok=True)


def sample_games_of(extra: dict) -> list[SampleGame]:
    """The games `selfplay_iteration(keep_games=True)` stored in a shard's meta extras
    (`[[game_id, komi, [action, ...]], ...]`); [] when there are none or they are not in
    that form."""
    entries = extra.get("sample_games")
    if not isinstance(entries, list):
        return []
    games = []
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], list)
                and all(_is_int(value) for value in (entry[0], entry[1], *entry[2]))):
            return []
        games.append(SampleGame(entry[0], entry[1], tuple(entry[2])))
    return games


def orphan_result(path: str | Path) -> SelfPlayResult:
    """A SelfPlayResult for a shard found on disk (its statistics come from its metadata)."""
    meta = read_shard_meta(path)
    extra = meta.extra or {}
    stats = SelfPlayStats(games=int(meta.num_games), positions=int(extra.get("positions", 0)),
                          black_wins=int(extra.get("black_wins", 0)),
                          draws=int(extra.get("draws", 0)), seconds=0.0)
    return SelfPlayResult(iteration=int(extra.get("iteration", -1)),
                          weights_version=int(meta.model_step), shard_path=str(path),
                          stats=stats, fair_komi=float(extra.get("fair_komi", 0.0)))


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
