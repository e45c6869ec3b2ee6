"""The komi atlas's JSON document: one record per track, keyed by the track's name.

The atlas is one JSON file (format version ATLAS_FORMAT_VERSION), rewritten atomically after
every track, so a stopped run loses at most the tracks in progress (one per worker,
catena_zero.komi.atlas.workers). It is resumable: a track whose record was measured with the
same model (its SHA-256) and the same settings (the record's `fingerprint`,
catena_zero.komi.atlas.tracks) is not measured again; exact values, which depend on no
model, are kept once solved.

Statuses: "measured" (estimate from the model), "pending" (exact values only so far, or
estimates not asked for), "no model" (no model plays that side).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from catena_zero.data.atomic import atomic_write_text
from catena_zero.komi.atlas.outcome import exact_outcome, holds_exact
from catena_zero.komi.config import ATLAS_VARIANTS
from catena_zero.komi.intervals import score_of_margin
from catena_zero.komi.strength import strength_note
from catena_zero.mcts.solver import enum_value
from catena_zero.rules import Rules

ATLAS_FORMAT_VERSION = 1
EXACT_KEYS = ("margin", "fair_komi", "fair_komi_note", "black_wins_up_to_komi",
              "margins_by_komi", "optimal_moves", "move_values", "positions", "nodes",
              "seconds", "cpu_seconds", "peak_rss_mb")


class AtlasError(ValueError):
    """An atlas file that cannot be read or continued (one line naming the file)."""


def track_name(side: int, variant: str) -> str:
    return f"side{side}-{variant.replace('/', '-')}"


def load_atlas(path: str | Path) -> dict:
    """The atlas document ({"format_version", "records": {track: record}}); an empty one
    for a missing file. AtlasError for another format or a damaged file."""
    path = Path(path)
    if not path.exists():
        return {"format_version": ATLAS_FORMAT_VERSION, "records": {}}
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise AtlasError(f"atlas {path}: not readable JSON ({error})") from None
    if not isinstance(document, dict) or document.get("format_version") != ATLAS_FORMAT_VERSION:
        version = document.get("format_version") if isinstance(document, dict) else None
        raise AtlasError(f"atlas {path}: format_version {version!r}, expected "
                         f"{ATLAS_FORMAT_VERSION}")
    if not isinstance(document.get("records"), dict):
        raise AtlasError(f"atlas {path}: no records object")
    return document


def save_atlas(path: str | Path, document: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = dict(document, format_version=ATLAS_FORMAT_VERSION)
    document["records"] = dict(sorted(document["records"].items(),
                                      key=lambda item: _order(item[1])))
    atomic_write_text(path, json.dumps(document, indent=1, allow_nan=False) + "\n")


def _order(record: dict) -> tuple:
    variant = f"{record['game_type']}/{record['scoring']}"
    return record["side"], ATLAS_VARIANTS.index(variant)


def new_record(side: int, variant: str) -> dict:
    game_type, scoring = variant.split("/")
    return {"side": side, "game_type": game_type, "scoring": scoring,
            "track": track_name(side, variant), "status": "pending", "method": None,
            "estimate": None, "interval": [None, None], "exact": None, "exact_note": None,
            "in_range": None, "exact_in_range": None, "games": 0, "model": None,
            "settings": None, "seconds": None, "fingerprint": None}


def exact_fields(rules: Rules, report: dict) -> dict:
    """The exact counterpart of the track's estimate (same quantity, see the reference):
    komi: the fair komi (None when Black wins at every komi, exact_in_range False); nokomi:
    Black's score after the exact fairest first stone; double: Black's score (1 win,
    0.5 draw, 0 loss) under perfect play."""
    game_type = enum_value(rules.game_type)
    margin = float(report["margin"])
    kept = {key: report[key] for key in EXACT_KEYS if key in report}
    fields: dict[str, Any] = {"exact_report": kept, "exact_margin": margin}
    low, high = rules.komi_range
    if game_type == "komi":
        fair = report.get("fair_komi")
        fields["exact"] = fair
        fields["exact_note"] = report.get("fair_komi_note")
        fields["exact_in_range"] = fair is not None and low <= fair <= high
        if fair is None:
            margins = report.get("margins_by_komi") or {}
            at_end = margins.get(str(high), margin - high)
            fields["exact_note"] = (f"{report.get('fair_komi_note')}: at komi {high} Black "
                                    f"still wins by {at_end:g}; the second player takes Black")
    elif game_type == "nokomi":
        values = report.get("move_values") or {}
        closest = min(abs(v) for v in values.values()) if values else abs(margin)
        fair = sorted(name for name, value in values.items() if abs(value) == closest)
        sign = [values[name] for name in fair][:1] or [margin]
        fields["exact"] = score_of_margin(sign[0])
        fields["exact_fair_stones"] = fair
        fields["exact_note"] = (f"fairest first stones {' '.join(fair)} leave Black "
                                f"{sign[0]:+g}: the second player takes "
                                f"{'Black' if sign[0] > 0 else 'White'}")
    else:
        fields["exact"] = score_of_margin(margin)
        fields["exact_note"] = f"perfect play: Black {margin:+g}"
    return fields


def refresh_outcome(record: dict) -> None:
    """A solved record's fields derived from its data: `exact_agrees`, `strength_note`, and
    `exact_outcome` with its note (catena_zero.komi.atlas.outcome: holds, player too weak or
    method error; a miss is never left unexplained). Records read from a file get them
    again, so every record is judged by the same rules."""
    outcome, note = exact_outcome(record)
    if outcome is None:
        return
    record["exact_agrees"] = holds_exact(record)
    if "strength" in record:
        record["strength_note"] = strength_note(record["strength"])
    record["exact_outcome"] = outcome
    record["exact_outcome_note"] = note


def atlas_status(records: dict) -> str:
    """One line: how many tracks are measured, pending (exact values only) or lack a model."""
    counts: dict[str, int] = {}
    for record in records.values():
        counts[record["status"]] = counts.get(record["status"], 0) + 1
    exact = sum(1 for record in records.values() if record.get("exact_report") is not None)
    parts = [f"{count} {status}" for status, count in sorted(counts.items())]
    return f"{len(records)} tracks: {', '.join(parts)}; {exact} with exact values"


def summary_line(record: dict) -> str:
    low, high = record.get("interval") or (None, None)
    estimate = record.get("estimate")
    text = "-" if estimate is None else f"{estimate:g}"
    if record.get("estimate_side"):
        text = f"{record['estimate_side']} the range"
    bounds = f"[{'-inf' if low is None else f'{low:g}'}, {'+inf' if high is None else f'{high:g}'}]"
    exact = record.get("exact")
    return (f"{text} {bounds}, exact {'-' if exact is None else f'{exact:g}'}, "
            f"{record.get('games')} games, {record.get('seconds')} s")
