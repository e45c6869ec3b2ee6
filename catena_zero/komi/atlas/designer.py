"""The komi atlas for a game designer: one short page, one row per board side.

For each side's komi/standard track: the fair komi and its interval (and the exact value
where the solver has one), how often the button's half point decided a game at the swept
komi nearest the fair one, how long games were there, and the first player's edge at komi 0
(Black's score and mean margin there, when the sweep played komi 0), and the network's own
estimate beside the games' (its value head read at the empty board: more than
MODEL_ERROR_POINTS from the exact value, or outside the games' interval by that much, is the
model's error, and the row says so). Beside the fair komi (where Black's win rate crosses one
half) stands the other meaning of fair: the komi at which Black's mean margin is zero, with
its bracket and the margin's standard deviation (catena_zero.komi.intervals.zero_margin_komi).
Tracks whose estimate is still moving with search strength say so, and solved tracks give
their outcome against the exact value (catena_zero.komi.atlas.outcome).
Where the strength curve sits beside the atlas (curve/curve.json, catena_zero.komi.atlas.curve),
a second table gives each side at strength, measured with the model that plays it, and the
komi a game against the default player is played at (`catena_zero.komi.fair.komi_for_play`'s
rule: the closed crossing measured nearest the player's search, else the network).
Written beside atlas.md as designer.md by `catena_zero.komi.atlas.report.write_report` and
again by `catena-zero komi curve` when its curve sits in the atlas's directory.
"""

from __future__ import annotations

import math

import numpy as np

from catena_zero.data.file_history import model_label, same_content_hashes
from catena_zero.komi.atlas.outcome import exact_outcome
from catena_zero.komi.fair import nearest_strength, record_rollout_mix, record_simulations
from catena_zero.komi.intervals import ZeroMargin, zero_margin_komi
from catena_zero.rules import Rules

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


def record_zero_margin(record: dict) -> ZeroMargin | None:
    """The zero-margin komi of a record's sweep (catena_zero.komi.intervals.zero_margin_komi,
    a komi counting once it has the record's `bracket_games`); None where the sweep kept no
    margins."""
    sweep = record.get("sweep") or {}
    if not sweep.get("komi") or "mean_margin" not in sweep:
        return None
    size = len(sweep["komi"])
    min_games = ((record.get("settings") or {}).get("atlas") or {}).get("bracket_games", 2)
    return zero_margin_komi(sweep["komi"], sweep["mean_margin"],
                            sweep.get("margin_sd", [math.nan] * size), sweep["games"],
                            min_games=max(2, int(min_games)))


def zero_margin(record: dict) -> tuple[str, str, str]:
    """(komi, interval, spread) of the zero-margin komi as the page shows them; "-" where the
    sweep has no margins, and for the interval and spread where it kept no spread (an atlas
    measured before `margin_sd`)."""
    found = record_zero_margin(record)
    if found is None:
        return "-", "-", "-"
    if math.isinf(found.estimate):
        point = "above the range" if found.estimate > 0 else "below the range"
    else:
        point = _number(found.estimate)
    if math.isnan(found.low):
        return point, "-", "-"
    return point, _interval([None if math.isinf(found.low) else found.low,
                             None if math.isinf(found.high) else found.high]), \
        _number(found.spread)


def measured_with(record: dict) -> str:
    """"general.pt, 32 simulations" (and the weaker check's, "and 8"; and ", 8 opening
    moves" when the games were varied by a drawn opening): the model file and the search of
    a record; "-" where the record names neither."""
    model = record.get("model") or {}
    atlas = (record.get("settings") or {}).get("atlas") or {}
    simulations = atlas.get("simulations")
    if model.get("name") is None and simulations is None:
        return "-"
    weaker = (record.get("weaker") or {}).get("simulations")
    search = ""
    if simulations is not None:
        search = f", {simulations}{f' and {weaker}' if weaker else ''} simulations"
    if atlas.get("opening_moves"):
        search += f", {atlas['opening_moves']} opening moves"
    return f"{model_label(model) if model else 'unnamed model'}{search}"


def network_text(record: dict) -> str:
    """The network's own fair komi as the page shows it: ">= 15" / "<= 0" where the estimate
    sits at an end of the rules' komi range (komi/fair.py clips it there, so the value only
    says the crossing is at or beyond that end)."""
    network = record.get("network_estimate")
    if network is None or not math.isfinite(float(network)):
        return "-"
    low, high = _komi_range(record)
    if high is not None and float(network) >= high:
        return f">= {_number(high)}"
    if low is not None and float(network) <= low:
        return f"<= {_number(low)}"
    return _number(network)


def _komi_range(record: dict) -> tuple[float | None, float | None]:
    try:
        low, high = Rules(record["side"], record["game_type"], record["scoring"]).komi_range
    except (KeyError, TypeError, ValueError):
        return None, None
    return float(low), float(high)


def model_error(record: dict) -> str | None:
    """The note for a record whose network estimate disagrees with what is known of the fair
    komi by more than MODEL_ERROR_POINTS, None when they agree or either is missing.

    Against the exact value where the solver has one ("the network says 11.5, 9 above the
    exact value: the model's error"). Otherwise against the games: a network estimate outside
    the games' interval by more than MODEL_ERROR_POINTS is the model's error; one that is far
    from the games' estimate but inside their interval only disagrees with it (the games do not
    yet tell which is wrong). An estimate clipped at a range end counts as that end."""
    network = record.get("network_estimate")
    if network is None or not math.isfinite(float(network)):
        return None
    network, shown = float(network), network_text(record)
    tolerance = MODEL_ERROR_POINTS + 1e-9  # 5.4 - 3.9 is 1.5000000000000004
    if record.get("exact") is not None:
        gap = network - float(record["exact"])
        if abs(gap) <= tolerance:
            return None
        return (f"the network says {shown}, {_number(abs(gap))} {_side(gap)} the exact "
                f"value: the model's error")
    low, high = record.get("interval") or (None, None)
    below = low is not None and network < low - tolerance
    if below or (high is not None and network > high + tolerance):
        bound = low if below else high
        return (f"the network says {shown}, outside the games' interval by "
                f"{_number(abs(network - bound))}: the model's error")
    games = record.get("estimate")
    if games is None or record.get("estimate_side"):
        return None
    gap = network - float(games)
    if abs(gap) <= tolerance:
        return None
    return (f"the network says {shown}, {_number(abs(gap))} {_side(gap)} the games' estimate "
            f"but inside their interval")


def _side(gap: float) -> str:
    return "above" if gap > 0 else "below"


def played_at(rows: list[dict], player_simulations: int | None,
              player_rollout_mix: float | None = None) -> str:
    """The komi a game against a player searching `player_simulations` a move, its leaf
    values mixed `player_rollout_mix` with random playouts, is played at, from one track's
    curve rows and atlas record of the same model (komi_for_play's rule), with where it
    comes from."""
    row = nearest_strength(rows, player_simulations, player_rollout_mix)
    if row is None:
        return "the network's own estimate (no closed bracket)"
    komi = Rules(side=row["side"]).nearest_komi(row["estimate"])
    mix = record_rollout_mix(row)
    return (f"{komi} (the crossing at {record_simulations(row)} simulations"
            + (f", leaf values mixed {mix:g}" if mix else "")
            + (", the atlas" if row.get("status") == "measured" else "") + ")")


def same_model_record(document: dict | None, track: str, model: dict) -> list[dict]:
    """The atlas's record of `track` when it was measured with `model` (its SHA-256 or an
    earlier one of the same file): a measurement the komi of play weighs with the curve's."""
    record = ((document or {}).get("records") or {}).get(track)
    sha256 = (model or {}).get("sha256")
    if not record or record.get("status") != "measured" or not sha256:
        return []
    measured_with = (record.get("model") or {}).get("sha256")
    return [record] if measured_with in same_content_hashes(sha256) else []


def _atlas_rows(records: list[dict]) -> list[dict]:
    """Atlas records as the curve's rows (its strength, crossing, zero margin, network),
    marked as the atlas's."""
    # lazy: the curve module imports this one
    from catena_zero.komi.atlas.curve import curve_row

    return [{**curve_row(record, record_simulations(record) or 0), "source": "atlas"}
            for record in records]


def strength_section(curve: dict, player_simulations: int | None,
                     document: dict | None = None,
                     player_rollout_mix: float | None = None,
                     players: dict[int, dict] | None = None) -> list[str]:
    """The page's second table: komi/standard at strength, from the strength curve.
    `players` ({side: {"name", "sha256"}}, the bundled file that plays each side today):
    where a side's player is not the model the curve measured, its row is that player's
    own measurements (the atlas's record of it), and a line under the table says so."""
    player = (f"the default player, {player_simulations} simulations a move"
              if player_simulations else "the strongest measurement")
    lines = [
        "", "## At strength, with the models that play today", "",
        "From the strength curve ([curve.md](curve/curve.md)): each side's komi/standard "
        "measured with the model that plays it, at several search strengths a move. *At the "
        "strongest*: the crossing and its bracket at the strongest strength measured, and the "
        "zero-margin komi there. *Settled*: whether the brackets of the two strongest overlap "
        "(the curve no longer moves by more than the games can tell). *A game is played at*: "
        f"the komi GTP's `catena-choose-komi`, the terminal's `--komi auto` and the page's "
        f"`auto` give a game against {player}: the closed crossing measured nearest the "
        "player's own simulations, in the curve or (with the same model) in the atlas, at "
        "equal distance the one whose leaf values were mixed with random playouts as the "
        "player's are; else the network's own estimate. Where this table and "
        "the one above differ, the cause is the model (the rows above may come from an "
        "older one) and the strength: fair komi moves with strength.", "",
        "| side | model | strengths | at the strongest: fair komi | bracket | zero margin "
        "| settled | network | a game is played at |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    replaced = []
    rows = [row for row in curve.get("rows", []) if row.get("track", "").endswith("-komi-standard")]
    for track, verdict in (curve.get("verdicts") or {}).items():
        mine = [row for row in rows if row["track"] == track]
        if not mine:
            continue
        side = mine[-1]["side"]
        measured = mine[-1].get("model") or {}
        model = (players or {}).get(side) or measured
        atlas = same_model_record(document, track, model)
        if model is not measured and (measured.get("sha256") not in
                                      same_content_hashes(model.get("sha256") or "")):
            mine, verdict = [], {}
            replaced.append((side, measured, model, bool(atlas)))
        shown = mine or sorted(_atlas_rows(atlas), key=lambda row: row["simulations"])
        played = played_at(mine + atlas, player_simulations, player_rollout_mix)
        if not shown:
            lines.append(f"| {side} | {model_label(model, 12)} | - | - | - | - | - | - | "
                         f"{played} |")
            continue
        strongest = shown[-1]
        zero = strongest.get("zero_margin") or {}
        settled = {True: "yes", False: "no", None: "-"}[verdict.get("last_two_overlap")]
        estimate = (f"{strongest['estimate_side']} the range" if strongest.get("estimate_side")
                    else _number(strongest.get("estimate")))
        lines.append("| " + " | ".join([
            str(side),
            model_label(model, 12),
            ", ".join(str(row["simulations"]) + (" (the atlas)" if row.get("source") else "")
                      for row in shown),
            f"{estimate} at {strongest['simulations']}", _interval(strongest.get("interval")),
            f"{_number(zero.get('estimate'))} {_interval(zero.get('interval'))}",
            settled, _number(strongest.get("network_estimate")), played,
        ]) + " |")
    for side, measured, model, in_atlas in replaced:
        lines += ["", f"Side {side}: the curve measured {model_label(measured, 12)}, which "
                      f"no longer plays it; the row is {model_label(model, 12)}, which plays "
                      f"it today, " + ("from its own measurement in the atlas." if in_atlas
                                       else "not measured yet: the network's estimate.")]
    return lines


def designer_summary(document: dict, curve: dict | None = None,
                     player_simulations: int | None = None,
                     player_rollout_mix: float | None = None,
                     players: dict[int, dict] | None = None) -> str:
    """The page as Markdown (module docstring); `curve` (a strength-curve document) adds the
    table at strength for a player searching `player_simulations` a move with its leaf
    values mixed `player_rollout_mix` with random playouts."""
    lines = [
        "# Komi for game designers",
        "",
        "Generated from `atlas.json` by `catena_zero.komi.atlas.designer`; the whole atlas is "
        "in [atlas.md](atlas.md), the method in [the komi reference](../reference/komi.md).",
        "",
        "komi/standard on each board side. *Fair komi*: the komi at which Black's score in "
        "the model's self-play crosses one half, with the interval the games allow (open: "
        "not bracketed inside the range 0..15). *Half point*: the share of games decided by "
        "exactly half a point (the button's) at the swept komi nearest the fair one. "
        "*Moves*: mean moves a game there. *Komi 0*: Black's score and mean margin without "
        "komi, the first player's edge. *Network*: the model's own fair komi, read from "
        f"its value head at the empty board (>= 15: at the range's end); more than "
        f"{MODEL_ERROR_POINTS:g} from the exact value, or outside the games' interval by "
        "that much, is the model's error. *Measured with*: the model file, its search "
        "simulations a move and the moves of the drawn opening that varies the games (none "
        "named: root noise on every move instead; an atlas re-measures the tracks whose "
        "model or settings changed, so rows can come from different models).",
        "",
        "*Zero margin*: the other meaning of fair, the komi at which Black's mean margin in "
        "the same games is zero, with its interval (the swept komis nearest it whose mean "
        "margin is above and below zero by its 95% interval) and *margin SD*, the standard "
        "deviation of a game's margin there (\"-\": a sweep measured before the spread was "
        "kept). The project calls fair the first, where Black's win rate crosses one half: "
        "a game is won or lost, not scored, and at that komi the second player's choice of "
        "colour gains nothing in wins, which is what the komi and the colour choice of the "
        "rules are for. Under perfect play the two coincide (the margin moves one for one "
        "with the komi, and Black wins exactly while it is positive); they part where a "
        "player's margins are lopsided, such as narrow wins for one colour against wide "
        "ones for the other. *Against exact*: on a solved side, whether the interval holds "
        "the exact value, or why not (player too weak, with the solver's evidence, or "
        "method error).",
        "",
        "| side | fair komi | interval | exact | zero margin | its interval | margin SD "
        "| network | half point | moves | komi 0: Black's score | komi 0: Black's margin "
        "| measured with | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
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
        outcome, outcome_note = exact_outcome(record)
        if outcome is not None:
            notes.append(outcome_note or f"{outcome}: the interval holds the exact value")
        error = model_error(record)
        if error:
            notes.append(error)
        if record.get("status") != "measured":
            notes.append(record.get("status") or "pending")
        half = row["half_point"]
        lines.append("| " + " | ".join([
            str(record["side"]), estimate_text, _interval(record.get("interval")),
            _number(record.get("exact")), *zero_margin(record), network_text(record),
            "-" if half is None else f"{100 * half:.0f}% (komi {row['komi']})",
            _number(row["moves"], 0), _number(row["black_at_0"], 2),
            _number(row["margin_at_0"]), measured_with(record), "; ".join(notes) or "-",
        ]) + " |")
    if curve:
        lines += strength_section(curve, player_simulations, document, player_rollout_mix,
                                  players)
    return "\n".join(lines) + "\n"
