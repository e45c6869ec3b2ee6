"""The strength curve's figure and files: fair komi against search strength, one panel line
per track (matplotlib, Agg backend), and curve.json / curve.md written atomically."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from catena_zero.data.atomic import atomic_open, atomic_write_text  # noqa: E402
from catena_zero.komi.atlas.curve import curve_markdown  # noqa: E402


def _ends(row: dict) -> tuple[float, float, float] | None:
    """(estimate, below, above) of a row for an error bar; an open end is drawn to the
    estimate's side by the bar's cap only. A crossing beyond the range (no estimate,
    `estimate_side` above or below) is drawn at its bracket's closed end, the open end's
    arrow pointing on; None when there is nothing finite to draw."""
    estimate = row["estimate"]
    low, high = row["interval"]
    if estimate is None:
        side = row.get("estimate_side")
        estimate = low if side == "above" else high if side == "below" else None
        if estimate is None:
            return None
    below = estimate - low if low is not None else 0.0
    above = high - estimate if high is not None else 0.0
    return estimate, max(below, 0.0), max(above, 0.0)


def plot_curve(document: dict, path: str | Path) -> Path:
    """Fair komi (the win-rate crossing, with its bracket) against simulations a move on a
    log axis, one line per track; the exact value of a solved track as a dotted line; open
    bracket ends marked with an arrow."""
    path = Path(path)
    figure, axes = plt.subplots(figsize=(7.5, 4.8))
    tracks = list(dict.fromkeys(row["track"] for row in document["rows"]))
    for index, track in enumerate(tracks):
        rows = [row for row in document["rows"] if row["track"] == track]
        colour = f"C{index % 10}"
        points = [(row["simulations"], *_ends(row), row) for row in rows
                  if _ends(row) is not None]
        if points:
            # Tracks are offset a little along x so their bars do not hide each other.
            shift = 1.0 + 0.03 * (index - len(tracks) / 2)
            xs = [point[0] * shift for point in points]
            axes.errorbar(xs, [point[1] for point in points],
                          yerr=[[point[2] for point in points], [point[3] for point in points]],
                          color=colour, marker="o", capsize=3, label=track.replace("side", "side "))
            for x, point in zip(xs, points, strict=True):
                low, high = point[4]["interval"]
                if low is None:
                    axes.annotate("", (x, point[1] - 1.5), (x, point[1]),
                                  arrowprops={"arrowstyle": "->", "color": colour})
                if high is None:
                    axes.annotate("", (x, point[1] + 1.5), (x, point[1]),
                                  arrowprops={"arrowstyle": "->", "color": colour})
        exact = rows[-1]["exact"]
        if exact is not None:
            axes.axhline(exact, color=colour, linestyle=":", linewidth=1)
    axes.set_xscale("log", base=2)
    axes.set_xlabel("search simulations a move (log scale)")
    axes.set_ylabel("fair komi (Black's score crosses 1/2)")
    axes.set_title("Fair komi as play gets stronger (95% brackets; dotted: exact)")
    axes.grid(alpha=0.3)
    if tracks:
        axes.legend(fontsize=8, ncol=2)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as handle:
        figure.savefig(handle, format="png", dpi=110)
    plt.close(figure)
    return path


def write_curve(document: dict, directory: str | Path) -> list[Path]:
    """curve.json, curve.md and curve.png in `directory`."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    json_path, table_path = directory / "curve.json", directory / "curve.md"
    atomic_write_text(json_path, json.dumps(document, indent=1, allow_nan=False) + "\n")
    atomic_write_text(table_path, curve_markdown(document))
    return [json_path, table_path, plot_curve(document, directory / "curve.png")]
