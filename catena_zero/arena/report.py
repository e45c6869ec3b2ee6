"""Plain-text tables of match results, gate results and Elo ratings (for the CLI and docs)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from catena_zero.arena.elo import EloFit
from catena_zero.arena.gate_result import GateResult
from catena_zero.arena.ladder import CHECKPOINT_SUFFIXES, tagged_step
from catena_zero.arena.match import ColourRecord, MatchResult


def format_table(header: Sequence[str], rows: Sequence[Sequence[object]],
                 markdown: bool = False) -> str:
    """Columns padded to their widest cell; first column left-aligned, others right."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row: list[str]) -> str:
        padded = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:],
                                                                          strict=True)]
        return ("| " + " | ".join(padded) + " |") if markdown else "  ".join(padded)

    lines = [line(cells[0])]
    if markdown:
        lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    else:
        lines.append("  ".join("-" * w for w in widths))
    lines += [line(row) for row in cells[1:]]
    return "\n".join(lines)


def short_name(name: str) -> str:
    """A checkpoint spec or path shortened to "<run>/step<N>" for tables; others unchanged.

    Only a file name that says "step" is labelled by its step: "svw50.pt" stays "svw50",
    its digits are part of a name, not a training step.
    """
    text = name.removeprefix("checkpoint:")
    if text == name and not text.endswith(CHECKPOINT_SUFFIXES):
        return name
    path = Path(text)
    step = tagged_step(path)
    run = path.parent.parent if path.parent.name == "checkpoints" else path.parent
    label = f"step{step}" if step is not None else path.stem
    return f"{run.name}/{label}" if run.name else label


def _wdl(record: ColourRecord) -> str:
    return f"{record.wins}-{record.draws}-{record.losses}"


def _elo(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{round(value):+d}"


MATCH_HEADER = ("A", "B", "games", "A W-D-L", "A as Black", "A as White", "A score", "95% CI",
                "Elo A-B", "seconds")


def match_row(result: MatchResult) -> list[str]:
    total = ColourRecord(result.wins, result.draws, result.losses)
    return [
        short_name(result.name_a), short_name(result.name_b), str(result.num_games), _wdl(total),
        _wdl(result.a_as_black), _wdl(result.a_as_white), f"{result.score:.3f}",
        f"[{result.interval[0]:.3f}, {result.interval[1]:.3f}]", _elo(result.elo_difference),
        f"{result.seconds:.1f}",
    ]


def format_matches(results: Sequence[MatchResult], markdown: bool = False) -> str:
    """One row per match: W-D-L of A overall and per colour, score, Wilson interval, Elo."""
    return format_table(MATCH_HEADER, [match_row(r) for r in results], markdown)


def format_gate(result: GateResult) -> str:
    lines = [result.summary()]
    if result.match is not None:
        lines += ["", format_matches([result.match])]
    if result.sprt is not None:
        lines.append(f"SPRT: LLR {result.sprt.llr:+.3f} in [{result.sprt.lower_bound:.3f}, "
                     f"{result.sprt.upper_bound:.3f}] -> {result.sprt.decision.value}")
    return "\n".join(lines)


def format_elo(fit: EloFit, markdown: bool = False) -> str:
    """Players by rating: Elo, 95% interval, training step, games, score."""
    rows = []
    for i in np.argsort(-fit.elo, kind="stable"):
        rows.append([
            fit.names[i], f"{fit.elo[i]:+.0f}", f"[{fit.lower[i]:+.0f}, {fit.upper[i]:+.0f}]",
            "-" if fit.steps[i] is None else str(fit.steps[i]), str(int(fit.games[i])),
            f"{fit.score[i]:.3f}",
        ])
    return format_table(("player", "Elo", "95% CI", "step", "games", "score"), rows, markdown)
