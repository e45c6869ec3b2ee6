"""The figure of a run's report, drawn from the records of its metrics.jsonl (three panels:
the probe's and the gates' win rates, the gates' Elo, the losses; `catena_zero.pipeline.report`
reads the records and draws it). matplotlib is imported only while drawing, with the Agg
backend (no display needed); the PNG is written atomically (a viewer never sees half of one).
Names from the file are drawn as plain text, whatever characters they hold.
"""

from __future__ import annotations

import io
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

from catena_zero.data.atomic import atomic_write_bytes

REPORT_FILE = "report.png"
LOSSES = ("loss/policy", "loss/value", "loss/score", "loss/ownership")
MAX_LABEL = 80  # characters of a legend label or title drawn


class ReportError(ValueError):
    """A report that cannot be drawn (a missing run directory, say)."""


def series(records: list[dict[str, Any]], kind: str, prefix: str
           ) -> dict[str, tuple[list[int], list[float]]]:
    """name -> (iterations, values) of every value named `prefix...` in records of `kind`;
    a later record of the same iteration replaces an earlier one."""
    points: dict[str, dict[int, float]] = defaultdict(dict)
    for record in records:
        if record["kind"] != kind:
            continue
        for name, value in record["values"].items():
            if name.startswith(prefix):
                points[name][int(record["iteration"])] = float(value)
    return {name: (sorted(by_iteration), [by_iteration[i] for i in sorted(by_iteration)])
            for name, by_iteration in sorted(points.items())}


def run_directory(run_dir: str | Path) -> Path:
    """`run_dir` as a Path; ReportError when it is not a directory."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ReportError(f"run directory {str(run_dir)!r} does not exist")
    return run_dir


def draw_report(run_dir: Path, records: list[dict[str, Any]],
                output: str | Path | None = None) -> Path:
    """Draw the report of the run in `run_dir` from its metrics `records` into `output`
    (default run_dir/report.png); returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 11), layout="constrained")
    strength, elo, losses = figure.subplots(3, 1, sharex=True)
    _strength(strength, records)
    _gate_elo(elo, records)
    _losses(losses, records)
    losses.set_xlabel("iteration")
    figure.suptitle(_label(f"{run_dir.resolve().name}: strength and losses"))
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # a name's character no font has is drawn as a box
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        figure.savefig(buffer, format="png", dpi=90)
    path = Path(output) if output is not None else run_dir / REPORT_FILE
    atomic_write_bytes(path, buffer.getvalue())
    return path


def _label(text: str) -> str:
    """`text` (names from the metrics file) safe to draw: a character the fonts cannot take
    (a lone surrogate, a control character) shown as `?`, at most MAX_LABEL characters, and
    `$` escaped, since matplotlib reads text between two of them as mathematics."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = "".join(character if character.isprintable() else "?" for character in text)
    if len(text) > MAX_LABEL:
        text = text[:MAX_LABEL - 3] + "..."
    return text.replace("$", r"\$")


def _legend_or_note(axes, drawn: bool, note: str) -> None:
    """A panel's legend once it has a curve, else `note` in its middle saying why not."""
    if drawn:
        axes.legend(fontsize="small", loc="best")
    else:
        axes.text(0.5, 0.5, note, ha="center", va="center", transform=axes.transAxes,
                  color="grey")


def _strength(axes, records) -> None:
    probes = series(records, "probe", "probe/")
    drawn = False
    for name, (iterations, values) in probes.items():
        parts = name.split("/")  # probe/<track>/<baseline>/win_rate; a baseline may hold "/"
        if parts[-1] == "win_rate" and len(parts) >= 4:
            track, baseline = parts[1], "/".join(parts[2:-1])
            axes.plot(iterations, values, marker=".", label=_label(f"{track} vs {baseline}"))
            drawn = True
    gates = series(records, "gate", "gate/")
    for name, (iterations, values) in gates.items():
        if name.endswith("/win_rate"):
            track = name.split("/")[1]
            accepted = dict(zip(*gates.get(f"gate/{track}/accepted", ([], [])), strict=True))
            filled = ["black" if accepted.get(i) else "none" for i in iterations]
            axes.scatter(iterations, values, marker="D", facecolors=filled, edgecolors="black",
                         label=_label(f"{track} gate vs champion (filled: accepted)"))
            drawn = True
    axes.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
    axes.set_ylim(-0.02, 1.02)
    axes.set_ylabel("win rate (draws half)")
    axes.set_title("strength: probe against baselines, gates against the champion")
    _legend_or_note(axes, drawn,
                    "no probe or gate results yet (probe.every, gating.every_iterations)")


def _gate_elo(axes, records) -> None:
    drawn = False
    for name, (iterations, values) in series(records, "gate", "gate/").items():
        if name.endswith("/elo"):
            axes.plot(iterations, values, marker="D", label=_label(name.split("/")[1]))
            drawn = True
    axes.axhline(0.0, color="grey", linewidth=0.8, linestyle=":")
    axes.set_ylabel("Elo over the champion")
    axes.set_title("gate Elo (from each gate's score)")
    _legend_or_note(axes, drawn, "no gate yet")


def _losses(axes, records) -> None:
    found = series(records, "iteration", "loss/")
    drawn = False
    for name in LOSSES:
        if name in found:
            axes.plot(*found[name], label=name.split("/")[1])
            drawn = True
    axes.set_ylabel("loss")
    axes.set_title("training losses")
    _legend_or_note(axes, drawn, "no training step yet")
