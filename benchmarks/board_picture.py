"""A Catena position drawn as a PNG (matplotlib), laid out as the web page lays it out:
cell (col, row) at x = col - row / 2 and row 1 at the bottom (the page's y axis points down,
matplotlib's up), neighbours one unit apart."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from catena_zero.data.atomic import atomic_write_bytes
from catena_zero.rules import BLACK, WHITE, Rules

MARK_COLOURS = {"played": "#d62728", "deep": "#2ca02c"}  # the model's move, the deep choice


def cell_positions(rules: Rules) -> np.ndarray:
    """[C, 2] picture coordinates of the cells."""
    coords = rules.board.coords.astype(np.float64)  # [C, 2] (col, row)
    return np.stack([coords[:, 0] - coords[:, 1] / 2, coords[:, 1] * math.sqrt(3) / 2],
                    axis=1)


def draw_board(rules: Rules, stones: np.ndarray, marks: dict[int, str], title: str,
               path: Path) -> None:
    """Draw `stones [C]` (EMPTY/BLACK/WHITE), ring the cells of `marks` (cell -> kind of
    MARK_COLOURS) and write the PNG to `path` atomically."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot
    from matplotlib.patches import Circle, RegularPolygon

    positions = cell_positions(rules)
    figure, axes = pyplot.subplots(figsize=(4.2, 4.2))
    for cell, (x, y) in enumerate(positions):
        axes.add_patch(RegularPolygon((x, y), 6, radius=1 / math.sqrt(3), orientation=0,
                                      facecolor="#e8d7a8", edgecolor="#8a7a50", lw=0.6))
        if stones[cell] in (BLACK, WHITE):
            colour = "black" if stones[cell] == BLACK else "white"
            axes.add_patch(Circle((x, y), 0.38, facecolor=colour, edgecolor="black", lw=0.6))
        if cell in marks:
            axes.add_patch(Circle((x, y), 0.46, fill=False, edgecolor=MARK_COLOURS[marks[cell]],
                                  lw=2.2))
        axes.text(x, y - 0.62, rules.board.cell_name(cell), ha="center", va="center",
                  fontsize=4, color="#6b5d3a")
    axes.set_xlim(positions[:, 0].min() - 1, positions[:, 0].max() + 1)
    axes.set_ylim(positions[:, 1].min() - 1, positions[:, 1].max() + 1)
    axes.set_aspect("equal")
    axes.axis("off")
    axes.set_title(title, fontsize=7)
    buffer = io.BytesIO()
    figure.savefig(buffer, dpi=110, format="png", bbox_inches="tight")
    pyplot.close(figure)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, buffer.getvalue())
