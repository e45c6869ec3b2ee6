"""The komi atlas as a Markdown table and PNG figures, drawn from its JSON alone.

`write_report(document, directory)` writes atlas.md, atlas_fair_komi.png (the fair komi
against board side, one panel per scoring, estimates with their intervals and exact points)
and atlas_first_stones_side<N>.png (nokomi first-stone heatmaps, one panel per scoring)
for the sides in HEATMAP_SIDES that have a measured nokomi track, and designer.md
(`write_designer`, with the strength curve beside the atlas when there is one).
docs/komi/atlas.ipynb calls the same functions.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from catena_zero.data.atomic import atomic_open, atomic_write_text  # noqa: E402
from catena_zero.data.file_history import model_label  # noqa: E402
from catena_zero.komi.atlas.curve import CURVE_DIRECTORY_NAME, read_curve  # noqa: E402
from catena_zero.komi.atlas.designer import DESIGNER_FILE, designer_summary  # noqa: E402
from catena_zero.komi.atlas.outcome import exact_outcome  # noqa: E402
from catena_zero.komi.config import SCORINGS  # noqa: E402
from catena_zero.komi.fair import record_rollout_mix, record_simulations  # noqa: E402
from catena_zero.komi.plots import _save, hex_heatmap  # noqa: E402

HEATMAP_SIDES = (4, 6, 8)
KOMI_HIGH = {"standard": 15, "longest": 15, "quadratic": 1000}
TABLE_FILE = "atlas.md"
FAIR_KOMI_FIGURE = "atlas_fair_komi.png"


def _number(value, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def interval_text(interval) -> str:
    low, high = interval or (None, None)
    if low is None and high is None:
        return "-"
    left = "-inf" if low is None else _number(low)
    right = "+inf" if high is None else _number(high)
    return f"[{left}, {right}]"


def estimate_text(record: dict) -> str:
    if record.get("status") != "measured":
        return record.get("status") or "pending"
    if record.get("estimate_side"):
        return f"{record['estimate_side']} range"
    return _number(record.get("estimate"))


def exact_text(record: dict) -> str:
    if record.get("exact_report") is None:
        return "-"
    if record["game_type"] == "komi" and record.get("exact") is None:
        return "above range"
    return _number(record.get("exact"))


MEASURES = {"komi": "fair komi", "nokomi": "B score, fairest stone", "double": "B score"}


def search_text(record: dict) -> str:
    """The search a measured record's games were played with: simulations a move, and the
    leaf values' mix with random playouts when there was one ("-" before a measurement)."""
    simulations = record_simulations(record) if record.get("status") == "measured" else None
    if simulations is None:
        return "-"
    mix = record_rollout_mix(record)
    return f"{simulations} simulations" + (f", mix {mix:g}" if mix else "")


def markdown_table(document: dict) -> str:
    """The atlas as one Markdown table (one row per track) with a short legend."""
    lines = [
        "# The komi atlas",
        "",
        "Generated from `atlas.json` by `catena_zero.komi.atlas.report` (also "
        "`atlas.ipynb`); see [the komi reference](../reference/komi.md#the-komi-atlas).",
        "",
        "Measure per game type: komi, the fair komi (self-play sweep; interval: the bracket "
        "of Wilson 95% intervals around the crossing); nokomi, Black's score after the "
        "fairest first stone; double, Black's score. Exact values: the solver (sides 2-3). "
        "*Against exact* (solved tracks): holds (the interval holds the exact value), player "
        "too weak (it misses, and the solver's check of the player's moves fell below a "
        "bar), or method error (it misses though the player cleared the bars).",
        "",
        f"Status: {document.get('status', '-')} (updated {document.get('updated', '-')}).",
        "",
        "| side | variant | status | measure | estimate | interval | logistic | network "
        "| exact | in range | against exact | games | model | search | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for record in document["records"].values():
        logistic = record.get("logistic") or {}
        model = record.get("model") or {}
        model_text = model_label(model)
        in_range = record.get("in_range")
        if in_range is None and record.get("exact_in_range") is not None:
            in_range = f"exact: {'yes' if record['exact_in_range'] else 'no'}"
        elif in_range is not None:
            in_range = "yes" if in_range else "no"
        outcome, _ = exact_outcome(record)
        lines.append("| " + " | ".join([
            str(record["side"]), f"{record['game_type']}/{record['scoring']}",
            record.get("status") or "pending", MEASURES[record["game_type"]],
            estimate_text(record), interval_text(record.get("interval")),
            _number(logistic.get("fair_komi")), _number(record.get("network_estimate")),
            exact_text(record), in_range or "-", outcome_text(record, outcome),
            str(record.get("games") or 0), model_text, search_text(record),
            _number(record.get("seconds")),
        ]) + " |")
    notes = [(record["track"], record.get("range_note") or record.get("exact_note"))
             for record in document["records"].values()
             if record.get("range_note") or (record.get("exact_in_range") is False)]
    if notes:
        lines += ["", "Outside the komi range:", ""]
        lines += [f"- {track}: {note}" for track, note in notes]
    moving = [record for record in document["records"].values()
              if record.get("moving_with_strength")]
    if moving:
        lines += ["", "Still moving with search strength (the interval holds both "
                      "measurements):", ""]
        lines += [f"- {record['track']}: {record['weaker']['simulations']} simulations "
                  f"{interval_text(record['weaker']['interval'])}, {record['simulations']} "
                  f"{interval_text(record.get('stronger_interval'))}; reported "
                  f"{interval_text(record.get('interval'))}" for record in moving]
    judged = [(record["track"], *exact_outcome(record))
              for record in document["records"].values()]
    judged = [(track, outcome, note) for track, outcome, note in judged if note]
    if judged:
        lines += ["", "Solved tracks against the exact values (the solver's evidence; "
                      "a method error is the measurement's fault, not the player's):", ""]
        lines += [f"- {track}: {note}" for track, _, note in judged]
    return "\n".join(lines) + "\n"


def outcome_text(record: dict, outcome: str | None) -> str:
    """The table's cell for a solved track's outcome: "holds", "player too weak (70%
    optimal, bar 80%)" or "method error"; "-" for an unsolved track."""
    if outcome is None:
        return "-"
    check = record.get("strength") or {}
    if outcome == "player too weak" and check:
        share = check["margin_optimal"]["share"]
        text = f"{100 * share:.0f}% optimal, bar {100 * check['min_share']:.0f}%"
        if "min_result_share" in check:
            text += (f"; {100 * check['result_keeping']['share']:.0f}% result-keeping, bar "
                     f"{100 * check['min_result_share']:.0f}%")
        return f"{outcome} ({text})"
    return outcome


def plot_fair_komi_by_side(document: dict, path: str | Path) -> Path:
    """Fair komi against board side, one panel per scoring: estimates with their intervals
    (an open end drawn to the panel's edge), exact values as crosses, the komi range shaded."""
    records = [r for r in document["records"].values() if r["game_type"] == "komi"]
    figure, axes = plt.subplots(1, len(SCORINGS), figsize=(13, 4.0))
    for axis, scoring in zip(axes, SCORINGS, strict=True):
        high = KOMI_HIGH[scoring]
        top = high * 1.25
        axis.axhspan(0, high, color="grey", alpha=0.12, label=f"komi range 0..{high}")
        chosen = [r for r in records if r["scoring"] == scoring]
        for record in chosen:
            side = record["side"]
            if record.get("status") == "measured":
                low, upper = record.get("interval") or (None, None)
                low = -0.05 * top if low is None else low
                upper = top if upper is None else upper
                point = record.get("estimate")
                if point is None:
                    point = upper if record.get("estimate_side") == "above" else low
                axis.errorbar([side], [point], yerr=[[point - low], [upper - point]], fmt="o",
                              color="tab:blue", capsize=3)
                logistic = (record.get("logistic") or {}).get("fair_komi")
                if logistic is not None:
                    axis.plot([side + 0.15], [logistic], "s", color="tab:green", markersize=4)
            if record.get("exact_report") is not None:
                exact = record.get("exact")
                marker = "x" if exact is not None else "^"
                axis.plot([side], [exact if exact is not None else top * 0.97], marker,
                          color="tab:red", markersize=8)
        axis.plot([], [], "o", color="tab:blue", label="self-play (bracket 95%)")
        axis.plot([], [], "s", color="tab:green", label="logistic fit")
        axis.plot([], [], "x", color="tab:red", label="exact (solver)")
        axis.plot([], [], "^", color="tab:red", label="exact: above range")
        axis.set_xlim(1.5, 10.5)
        axis.set_ylim(-0.05 * top, top)
        axis.set_xticks(range(2, 11))
        axis.set_xlabel("board side")
        axis.set_ylabel("fair komi")
        axis.set_title(f"komi/{scoring}")
    axes[0].legend(fontsize=7, loc="upper left")
    return _save(figure, path)


def _hex_panel(axis, stones: list[dict], key: str, title: str):
    score = [stone.get(key, np.nan) for stone in stones]
    # Values as labels only while they stay legible (up to side 6's 91 cells).
    labels = [f"{value:.2f}" for value in score] if len(stones) <= 91 else None
    collection = hex_heatmap(axis, [stone["col"] for stone in stones],
                             [stone["row"] for stone in stones], score, labels,
                             linewidth=0.4, fontsize=5)
    axis.set_title(title, fontsize=9)
    return collection


def plot_first_stones(document: dict, side: int, path: str | Path) -> Path | None:
    """nokomi heatmaps of one side: Black's score after each first stone, one panel per
    scoring (0.5 = a fair stone: the swap is even). None when no nokomi track of the side
    is measured."""
    records = [r for r in document["records"].values()
               if r["side"] == side and r["game_type"] == "nokomi"
               and r.get("status") == "measured" and r.get("stones")]
    if not records:
        return None
    figure, axes = plt.subplots(1, len(records), figsize=(4.6 * len(records), 4.4),
                                squeeze=False)
    collection = None
    for axis, record in zip(axes[0], records, strict=True):
        key = "black_score" if "black_score" in record["stones"][0] else "search_value"
        fair = " ".join(record.get("fair_stones", [])[:4])
        collection = _hex_panel(axis, record["stones"], key,
                                f"side {side} nokomi/{record['scoring']}\nfair: {fair}; "
                                f"{record.get('near_even_stones')} near even")
    figure.colorbar(collection, ax=axes[0].tolist(), shrink=0.8,
                    label="Black's score after the first stone")
    path = Path(path)
    try:
        with atomic_open(path) as handle:
            figure.savefig(handle, dpi=110, format="png")
    finally:
        plt.close(figure)
    return path


def write_designer(document: dict, directory: str | Path,
                   player_simulations: int | None = None,
                   player_rollout_mix: float | None = None,
                   players: dict[int, dict] | None = None) -> Path:
    """designer.md in `directory`, with the table at strength when a strength curve sits
    beside the atlas (`directory`/curve/curve.json; AtlasError for a damaged one, before
    anything is written); `players`: the file that plays each side today
    (catena_zero.komi.atlas.designer.strength_section)."""
    directory = Path(directory)
    return _write_designer(document, directory, read_curve(directory / CURVE_DIRECTORY_NAME),
                           player_simulations, player_rollout_mix, players)


def _write_designer(document: dict, directory: Path, curve: dict | None,
                    player_simulations: int | None, player_rollout_mix: float | None,
                    players: dict[int, dict] | None = None) -> Path:
    designer = directory / DESIGNER_FILE
    atomic_write_text(designer, designer_summary(document, curve, player_simulations,
                                                 player_rollout_mix, players))
    return designer


def write_report(document: dict, directory: str | Path,
                 player_simulations: int | None = None,
                 player_rollout_mix: float | None = None,
                 players: dict[int, dict] | None = None) -> list[Path]:
    """atlas.md, designer.md (catena_zero.komi.atlas.designer; `player_simulations` and
    `player_rollout_mix`: the default player's search, `players` the file that plays each
    side, for its table at strength) and the figures of the module doc, written atomically
    under `directory`."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    curve = read_curve(directory / CURVE_DIRECTORY_NAME)  # a damaged one: before any write
    table = directory / TABLE_FILE
    atomic_write_text(table, markdown_table(document))
    designer = _write_designer(document, directory, curve, player_simulations,
                               player_rollout_mix, players)
    written = [table, designer, plot_fair_komi_by_side(document, directory / FAIR_KOMI_FIGURE)]
    for side in HEATMAP_SIDES:
        figure = plot_first_stones(document, side, directory / f"atlas_first_stones_side{side}.png")
        if figure is not None:
            written.append(figure)
    return written
