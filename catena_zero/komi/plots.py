"""Plots and the summary table of the komi analysis (matplotlib, Agg backend).

Every function takes plain column arrays (as `tables.columns` returns them), so the
notebook can redraw everything from the CSV files alone.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PatchCollection  # noqa: E402
from matplotlib.patches import RegularPolygon  # noqa: E402

from catena_zero.data.atomic import atomic_open  # noqa: E402

SUMMARY_COLUMNS = [
    ("track", "track"), ("agent", "agent"), ("exact_fair_komi", "exact"),
    ("search_fair_komi", "search"), ("network_fair_komi", "network"),
    ("empirical_fair_komi", "empirical"), ("empirical_low", "95% low"),
    ("empirical_high", "95% high"), ("crossing_komi", "crossing"), ("komi_values", "komis"),
    ("games", "games"), ("black_score_komi0", "B@k0"),
]


def _finite(value) -> bool:
    return value is not None and isinstance(value, int | float) and math.isfinite(value)


def plot_sweep(sweep: dict, fit: dict, path: str | Path, title: str = "",
               exact: float | None = None, search: float | None = None) -> Path:
    """Black's score against komi with Wilson 95% bars, the logistic fit and the estimates.

    sweep: columns komi, black_score, wilson_low, wilson_high ([K] each); fit: keys
    fair_komi, low, high, slope."""
    komi = np.asarray(sweep["komi"], dtype=float)
    score = np.asarray(sweep["black_score"], dtype=float)
    errors = np.vstack([score - np.asarray(sweep["wilson_low"], dtype=float),
                        np.asarray(sweep["wilson_high"], dtype=float) - score])
    figure, axes = plt.subplots(figsize=(6.4, 4.2))
    axes.errorbar(komi, score, yerr=errors, fmt="o", color="black", capsize=3,
                  label="self-play (Wilson 95%)")
    fair = fit.get("fair_komi")
    if _finite(fair) and _finite(fit.get("slope")):
        grid = np.linspace(komi.min() - 0.5, komi.max() + 0.5, 400)
        curve = 0.5 * (1 + np.tanh(0.5 * fit["slope"] * (fair - grid)))
        axes.plot(grid, curve, color="tab:blue", label=f"logistic fit, fair {fair:.4g}")
        low, high = fit.get("low"), fit.get("high")
        if _finite(low) and _finite(high):
            axes.axvspan(low, high, color="tab:blue", alpha=0.15, label="fair komi 95%")
    if _finite(exact):
        axes.axvline(exact, color="tab:red", linestyle="--", label=f"exact (solver) {exact:g}")
    if _finite(search):
        axes.axvline(search, color="tab:green", linestyle=":", label=f"agent's own {search:.4g}")
    axes.axhline(0.5, color="grey", linewidth=0.8)
    axes.set_xlabel("komi")
    axes.set_ylabel("Black's score (wins + draws/2)")
    axes.set_ylim(-0.03, 1.03)
    axes.set_title(title)
    axes.legend(fontsize=8, loc="upper right")
    return _save(figure, path)


def plot_opening(opening: dict, path: str | Path, title: str = "") -> Path:
    """Hex-board heatmap of Black's score after each opening cell (0.5 = balanced).

    opening: columns name, col, row, black_score ([C] each)."""
    score = np.asarray(opening["black_score"], dtype=float)
    figure, axes = plt.subplots(figsize=(5.6, 5.0))
    labels = [f"{name}\n{value:.2f}" for name, value in zip(opening["name"], score, strict=True)]
    collection = hex_heatmap(axes, opening["col"], opening["row"], score, labels,
                             linewidth=0.6, fontsize=7)
    figure.colorbar(collection, ax=axes, shrink=0.8, label="Black's score after the stone")
    axes.set_title(title)
    return _save(figure, path)


def hex_heatmap(axes, col, row, score, labels=None, linewidth: float = 0.6,
                fontsize: float = 7):
    """Draw values in [0, 1] on the hex cells at (col, row) ([C] each) into `axes`, each
    cell labelled with labels[i] when given, and frame the board; returns the patch
    collection (for a colour bar). The one hex drawing of the komi figures."""
    col = np.asarray(col, dtype=float)
    row = np.asarray(row, dtype=float)
    # Cell (c, r) touches (c+1, r+1), so x = c - r/2 puts the six neighbours around it.
    x = col - row / 2.0
    y = row * math.sqrt(3) / 2.0
    patches = [RegularPolygon((xi, yi), numVertices=6, radius=0.57, orientation=0.0)
               for xi, yi in zip(x, y, strict=True)]
    collection = PatchCollection(patches, cmap="coolwarm", edgecolor="black",
                                 linewidth=linewidth)
    collection.set_array(np.asarray(score, dtype=float))
    collection.set_clim(0.0, 1.0)
    axes.add_collection(collection)
    if labels is not None:
        for xi, yi, label in zip(x, y, labels, strict=True):
            axes.text(xi, yi, label, ha="center", va="center", fontsize=fontsize)
    axes.set_xlim(x.min() - 0.8, x.max() + 0.8)
    axes.set_ylim(y.min() - 0.8, y.max() + 0.8)
    axes.set_aspect("equal")
    axes.axis("off")
    return collection


def _save(figure, path: str | Path) -> Path:
    path = Path(path)
    try:
        figure.tight_layout()
        with atomic_open(path) as handle:
            figure.savefig(handle, dpi=110, format="png")
    finally:
        plt.close(figure)
    return path


def format_summary(rows: list[dict]) -> str:
    """The printed summary table, one line per track."""
    headers = [label for _, label in SUMMARY_COLUMNS]
    body = [[_cell(row.get(key)) for key, _ in SUMMARY_COLUMNS] for row in rows]
    widths = [max(len(h), *(len(line[i]) for line in body)) if body else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in body]
    return "\n".join(lines)


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)
