"""Fair komi as a function of strength: the atlas's komi tracks measured at several search
strengths of the same model, and where the crossing settles as play gets stronger.

`curve_plan` turns a CurveConfig into one AtlasConfig a strength (simulations a move), each
writing its own atlas file under the curve's directory, so that every strength resumes
after a kill and a track measured with the same model and settings is kept
(catena_zero.komi.atlas.tracks). `curve_document` reads those files back into one row per
track and strength: the win-rate crossing with its bracket, the logistic fit, the
zero-margin komi, the games, the seconds and the model's file and SHA-256.
`side_verdicts` says per track whether the curve has settled: the two strongest
measurements' brackets overlap, and on a solved side the strongest one's outcome against
the exact value. `curve_markdown` and `plot_curve` (catena_zero.komi.atlas.curve_plot) draw it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

from catena_zero.komi.atlas.designer import record_zero_margin
from catena_zero.komi.atlas.document import AtlasError, load_atlas, track_name
from catena_zero.komi.config import AtlasConfig, CurveConfig

CURVE_FORMAT = "catena-zero komi strength curve"
CURVE_FORMAT_VERSION = 1
CURVE_FILE = "curve.json"
# Where an atlas's page looks for its strength curve: a directory "curve" beside atlas.json.
CURVE_DIRECTORY_NAME = "curve"


def read_curve(directory: str | Path) -> dict | None:
    """The curve document written in `directory` (curve.json); None when there is none.
    AtlasError, one line, for a file that is not a curve of this format."""
    path = Path(directory) / CURVE_FILE
    if not path.exists():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise AtlasError(f"strength curve {path}: not readable JSON ({error})") from None
    if (not isinstance(document, dict) or document.get("format") != CURVE_FORMAT
            or document.get("format_version") != CURVE_FORMAT_VERSION
            or not isinstance(document.get("rows"), list)
            or not isinstance(document.get("verdicts"), dict)):
        raise AtlasError(f"strength curve {path}: not a {CURVE_FORMAT!r} file of "
                         f"format_version {CURVE_FORMAT_VERSION}")
    return document


def strengths_by_side(curve: CurveConfig) -> dict[int, list[int]]:
    """{simulations: sides measured at it}: every side at `curve.simulations`, and the sides
    of each "SIDE:SIMULATIONS" of `curve.extra` at theirs; weakest strength first."""
    plan: dict[int, set[int]] = {int(simulations): set(map(int, curve.sides))
                                 for simulations in curve.simulations}
    for side, simulations in curve.extra_pairs():
        plan.setdefault(simulations, set()).add(side)
    return {simulations: sorted(plan[simulations]) for simulations in sorted(plan)}


def strength_path(curve: CurveConfig, simulations: int) -> Path:
    """The atlas file of one strength: DIRECTORY/sims<N>/atlas.json."""
    return Path(curve.output_dir) / f"sims{simulations}" / "atlas.json"


def curve_plan(curve: CurveConfig, atlas: AtlasConfig) -> list[tuple[int, AtlasConfig]]:
    """(simulations, the atlas settings that measure it) for each strength, weakest first:
    `atlas` with the curve's sides and variants at that strength, its own output file, and
    no second check strength (each strength is its own measurement)."""
    return [(simulations, dataclasses.replace(
        atlas, sides=sides, variants=list(curve.variants), simulations=simulations,
        check_simulations=0, exact_sides=[side for side in atlas.exact_sides if side in sides],
        output=str(strength_path(curve, simulations))))
        for simulations, sides in strengths_by_side(curve).items()]


def _finite(value) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def zero_margin_fields(record: dict) -> dict:
    """The zero-margin komi of a record's sweep: {"estimate", "interval", "spread"} (None
    where the sweep kept no margins)."""
    found = record_zero_margin(record)
    if found is None:
        return {"estimate": None, "interval": [None, None], "spread": None}
    return {"estimate": _finite(found.estimate), "interval": [_finite(found.low),
                                                              _finite(found.high)],
            "spread": _finite(found.spread)}


def curve_row(record: dict, simulations: int) -> dict:
    """One measured track at one strength, as the curve keeps it."""
    interval = record.get("interval") or [None, None]
    logistic = record.get("logistic") or {}
    return {
        "track": track_name(record["side"], f"{record['game_type']}/{record['scoring']}"),
        "side": int(record["side"]), "simulations": int(simulations),
        "model": record.get("model"), "estimate": record.get("estimate"),
        "estimate_side": record.get("estimate_side"), "interval": list(interval),
        "logistic": {"fair_komi": logistic.get("fair_komi"), "low": logistic.get("low"),
                     "high": logistic.get("high")},
        "zero_margin": zero_margin_fields(record), "network_estimate":
            record.get("network_estimate"), "exact": record.get("exact"),
        "exact_outcome": record.get("exact_outcome"),
        "exact_outcome_note": record.get("exact_outcome_note"),
        "games": record.get("games"), "seconds": record.get("seconds"),
        "precision": (record.get("settings") or {}).get("precision", "float32"),
    }


def curve_document(curve: CurveConfig) -> dict:
    """Every measured track of every strength of `curve` (rows ordered by track, then
    strength), with each track's verdict; strengths not measured yet are left out."""
    rows = []
    for simulations, sides in strengths_by_side(curve).items():
        path = strength_path(curve, simulations)
        records = load_atlas(path)["records"] if path.exists() else {}
        for side in sides:
            for variant in curve.variants:
                record = records.get(track_name(side, variant))
                if record is not None and record.get("status") == "measured":
                    rows.append(curve_row(record, simulations))
    rows.sort(key=lambda row: (row["side"], row["track"], row["simulations"]))
    return {"format": CURVE_FORMAT, "format_version": CURVE_FORMAT_VERSION,
            "variants": list(curve.variants), "rows": rows, "verdicts": side_verdicts(rows)}


def _closed(interval) -> bool:
    return all(isinstance(end, int | float) for end in interval)


def brackets_overlap(first, second) -> bool:
    """Whether two brackets [low, high] (None: open) share a point."""
    low = max(-math.inf if first[0] is None else first[0],
              -math.inf if second[0] is None else second[0])
    high = min(math.inf if first[1] is None else first[1],
               math.inf if second[1] is None else second[1])
    return low <= high


def side_verdicts(rows: list[dict]) -> dict[str, dict]:
    """{track: verdict}: its strengths, whether the two strongest brackets overlap (the
    curve has stopped moving by more than the intervals can tell), the strongest
    measurement's estimate and bracket, its width when closed, and on a solved track that
    measurement's outcome against the exact value (catena_zero.komi.atlas.outcome: holds,
    player too weak with the solver's evidence, or method error)."""
    verdicts: dict[str, dict] = {}
    for track in dict.fromkeys(row["track"] for row in rows):
        mine = [row for row in rows if row["track"] == track]
        strongest = mine[-1]
        interval = strongest["interval"]
        settled = (brackets_overlap(mine[-2]["interval"], interval)
                   if len(mine) >= 2 else None)
        exact = strongest["exact"]
        outcome = strongest["exact_outcome"]
        verdicts[track] = {
            "strengths": [row["simulations"] for row in mine],
            "strongest": strongest["simulations"], "estimate": strongest["estimate"],
            "interval": interval,
            "width": (interval[1] - interval[0]) if _closed(interval) else None,
            "last_two_overlap": settled, "exact": exact, "exact_outcome": outcome,
            "exact_outcome_note": strongest["exact_outcome_note"],
        }
    return verdicts


def _number(value, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _bracket(interval) -> str:
    low, high = interval
    return f"[{'open' if low is None else f'{low:g}'}, {'open' if high is None else f'{high:g}'}]"


def curve_markdown(document: dict) -> str:
    """The curve's table: one row per track and strength, then one verdict per track."""
    lines = ["| track | simulations | model (SHA-256) | fair komi | bracket | logistic "
             "[95%] | zero margin [bracket] | network | exact | games | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in document["rows"]:
        model = row.get("model") or {}
        logistic = row["logistic"]
        zero = row["zero_margin"]
        estimate = (f"{row['estimate_side']} the range" if row.get("estimate_side")
                    else _number(row["estimate"]))
        lines.append(
            f"| {row['track']} | {row['simulations']} | {model.get('name', '-')} "
            f"({str(model.get('sha256', ''))[:12]}) | {estimate} | {_bracket(row['interval'])} "
            f"| {_number(logistic['fair_komi'])} [{_number(logistic['low'])}, "
            f"{_number(logistic['high'])}] | {_number(zero['estimate'])} "
            f"{_bracket(zero['interval'])} | {_number(row['network_estimate'])} "
            f"| {_number(row['exact'])} | {row['games']} | {_number(row['seconds'], 0)} |")
    lines += ["", "| track | strengths | strongest | its fair komi | bracket | width "
              "| the two strongest overlap | against the exact value |",
              "|---|---|---|---|---|---|---|---|"]
    for track, verdict in document["verdicts"].items():
        overlap = {True: "yes", False: "no", None: "-"}[verdict["last_two_overlap"]]
        # The note, where there is one, opens with the outcome's name.
        outcome = verdict["exact_outcome_note"] or verdict["exact_outcome"] or "-"
        lines.append(
            f"| {track} | {', '.join(map(str, verdict['strengths']))} | {verdict['strongest']} "
            f"| {_number(verdict['estimate'])} | {_bracket(verdict['interval'])} "
            f"| {_number(verdict['width'], 0)} | {overlap} | {outcome} |")
    return "\n".join(lines) + "\n"
