"""The komi atlas for a game designer: one short page, one row per board side.

For each side's komi/standard track: the fair komi and its interval (and the exact value
where the solver has one), how often the button's half point decided a game at the swept
komi nearest the fair one, how long games were there, and the first player's edge at komi 0
(Black's score and mean margin there, when the sweep played komi 0), and the network's own
estimate beside the games' (its value head read at the empty board: a gap of more than
MODEL_ERROR_POINTS is the model's error, and the row says so). Tracks whose estimate is
still moving with search strength, or whose model the solver found too weak, say so.
Written beside atlas.md as designer.md by `catena_zero.komi.atlas_report.write_report`.
"""

from __future__ import annotations

import math

import numpy as np

DESIGNER_FILE = "designer.md"
# How far the network's own fair komi may sit from its games' crossing before the page calls
# the gap the model's error: a komi/standard estimate a designer could act on should agree
# with the games to a point and a half (the atlas's target on sides 4-8).
MODEL_ERROR_POINTS = 1.5


def _number(value, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{value:.0f}"


def _interval(interval) -> str:
    low, high = interval or (None, None)
    if low is None and high is None:
        return "open"
    left = "open" if low is None else _number(low)
    right = "open" if high is None else _number(high)
    return f"[{left}, {right}]"


def sweep_row(sweep: dict, komi: float | None) -> dict:
    """What the sweep saw at the swept komi nearest `komi` and at komi 0 (None where the
    sweep has no such column or the table predates it)."""
    komis = np.asarray(sweep.get("komi") or [], dtype=float)
    row: dict = {"komi": None, "half_point": None, "moves": None, "black_at_0": None,
                 "margin_at_0": None}
    if komis.size == 0:
        return row
    games = np.asarray(sweep["games"], dtype=float)
    if komi is not None:
        near = int(np.argmin(np.abs(komis - komi)))
        row["komi"] = int(komis[near])
        if "half_point" in sweep and games[near] > 0:
            row["half_point"] = float(sweep["half_point"][near]) / games[near]
        if "mean_moves" in sweep:
            row["moves"] = float(sweep["mean_moves"][near])
    zero = np.flatnonzero(komis == 0)
    if zero.size:
        row["black_at_0"] = float(sweep["black_score"][zero[0]])
        row["margin_at_0"] = float(sweep["mean_margin"][zero[0]])
    return row


def measured_with(record: dict) -> str:
    """"general.pt, 32 simulations" (and the weaker check's, "and 8"; and ", 8 opening
    moves" when the games were varied by a drawn opening): the model file and the search of
    a record; "-" where the record names neither."""
    name = (record.get("model") or {}).get("name")
    atlas = (record.get("settings") or {}).get("atlas") or {}
    simulations = atlas.get("simulations")
    if name is None and simulations is None:
        return "-"
    weaker = (record.get("weaker") or {}).get("simulations")
    search = ""
    if simulations is not None:
        search = f", {simulations}{f' and {weaker}' if weaker else ''} simulations"
    if atlas.get("opening_moves"):
        search += f", {atlas['opening_moves']} opening moves"
    return f"{name or 'unnamed model'}{search}"


def model_error(record: dict) -> str | None:
    """The note for a record whose network estimate is more than MODEL_ERROR_POINTS from the
    games' fair komi ("the network says 7.2, 5.7 above the games: the model's error"), None
    when they agree or either is missing (a crossing outside the range has no value)."""
    network, games = record.get("network_estimate"), record.get("estimate")
    if network is None or games is None or record.get("estimate_side"):
        return None
    gap = float(network) - float(games)
    if not math.isfinite(gap) or abs(gap) <= MODEL_ERROR_POINTS + 1e-9:  # 5.4 - 3.9 > 1.5
        return None
    return (f"the network says {_number(network)}, {_number(abs(gap))} "
            f"{'above' if gap > 0 else 'below'} the games: the model's error")


def designer_summary(document: dict) -> str:
    """The page as Markdown (module docstring)."""
    lines = [
        "# Komi for game designers",
        "",
        "Generated from `atlas.json` by `catena_zero.komi.designer`; the whole atlas is in "
        "[atlas.md](atlas.md), the method in [the komi reference](../reference/komi.md).",
        "",
        "komi/standard on each board side. *Fair komi*: the komi at which Black's score in "
        "the model's self-play crosses one half, with the interval the games allow (open: "
        "not bracketed inside the range 0..15). *Half point*: the share of games decided by "
        "exactly half a point (the button's) at the swept komi nearest the fair one. "
        "*Moves*: mean moves a game there. *Komi 0*: Black's score and mean margin without "
        "komi, the first player's edge. *Network*: the model's own fair komi, read from "
        f"its value head at the empty board; more than {MODEL_ERROR_POINTS:g} from the "
        "games' is the model's error. *Measured with*: the model file, its search "
        "simulations a move and the moves of the drawn opening that varies the games (none "
        "named: root noise on every move instead; an atlas re-measures the tracks whose "
        "model or settings changed, so rows can come from different models).",
        "",
        "| side | fair komi | interval | exact | network | half point | moves "
        "| komi 0: Black's score | komi 0: Black's margin | measured with | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    records = [record for record in document.get("records", {}).values()
               if record.get("game_type") == "komi" and record.get("scoring") == "standard"]
    for record in sorted(records, key=lambda record: record["side"]):
        estimate = record.get("estimate")
        if record.get("estimate_side"):
            estimate_text = f"{record['estimate_side']} the range"
        else:
            estimate_text = _number(estimate)
        row = sweep_row(record.get("sweep") or {}, estimate)
        notes = []
        if record.get("moving_with_strength"):
            notes.append("still moving with search strength")
        if record.get("strength_note"):
            notes.append(record["strength_note"])
        if model_error(record):
            notes.append(model_error(record))
        if record.get("status") != "measured":
            notes.append(record.get("status") or "pending")
        half = row["half_point"]
        lines.append("| " + " | ".join([
            str(record["side"]), estimate_text, _interval(record.get("interval")),
            _number(record.get("exact")), _number(record.get("network_estimate")),
            "-" if half is None else f"{100 * half:.0f}% (komi {row['komi']})",
            _number(row["moves"], 0), _number(row["black_at_0"], 2),
            _number(row["margin_at_0"]), measured_with(record), "; ".join(notes) or "-",
        ]) + " |")
    return "\n".join(lines) + "\n"
