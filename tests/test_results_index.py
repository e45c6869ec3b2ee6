"""docs/results/README.md stays true to its pages: the current figures' table links existing
pages, every dated page is in the index by topic, and each figure with a raw record equals
the figure recomputed from that record.

A row of the current figures names its raw record in its last cell as a link whose text is
the record's name and whose target is the raw file: `[side6-uct200](data/X.json)` is the
match `side6-uct200` of a `benchmarks.general_targets` report (the figure is its score with
draws as half and its Wilson 95% interval, from the wins, draws and losses),
`[side4-komi-standard](../komi/atlas.json)` a komi atlas record (its estimate and interval)
and `[side3-komi-standard exact](../komi/atlas.json)` that record's exact value.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from catena_zero.arena.stats import wilson_interval

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
INDEX = RESULTS / "README.md"
CURRENT_HEADING = "## Current figures"
TOPICS_HEADING = "## Pages by topic"
COLUMNS = ["measure", "figure", "model or setting", "machine", "page", "raw record"]
MACHINES = {"Xeon", "EPYC", "EPYC Zen 3", "dev VM", "dev VM (AMX)", "H200"}
DATED_PAGE = re.compile(r"^\d{4}-\d{2}-\d{2}-[a-z0-9-]+\.md$")
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`[^`\n]*`")
INDEX_ROW = re.compile(r"^\| \[([^\]]+)\]\(([^)]+)\) \| (.+) \|$", re.MULTILINE)


@dataclass(frozen=True)
class FigureRow:
    measure: str
    figure: str
    model: str
    machine: str
    page: str
    raw: str


def section(text: str, heading: str) -> str:
    """The text under `heading` up to the next heading of the same level."""
    start = text.index(heading + "\n") + len(heading) + 1
    following = re.search(r"^## ", text[start:], re.MULTILINE)
    return text[start:start + following.start()] if following else text[start:]


def table_rows(text: str) -> list[list[str]]:
    """The cells of each row of the first Markdown table in `text` (header and rule left
    out)."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in lines[2:]]


def current_figures(text: str) -> list[FigureRow]:
    body = section(text, CURRENT_HEADING)
    header = next(line for line in body.splitlines() if line.startswith("|"))
    assert [cell.strip() for cell in header.strip("|").split("|")] == COLUMNS
    return [FigureRow(*cells) for cells in table_rows(body)]


def match_figure(report: dict, name: str) -> str:
    """A match of a general_targets report as the table writes it: score [low, high] in %."""
    result = report["matches"][name]["result"]
    wins, draws, losses = result["wins"], result["draws"], result["losses"]
    games = wins + draws + losses
    points = wins + draws / 2
    low, high = wilson_interval(points, games)
    return f"{100 * points / games:.1f}% [{100 * float(low):.1f}, {100 * float(high):.1f}]"


def _bound(value: float | None) -> str:
    """An interval's end; the atlas writes an open end as null."""
    return "open" if value is None or math.isinf(value) else f"{value:g}"


def atlas_figure(atlas: dict, name: str) -> str:
    """A komi atlas record as the table writes it: `9.7 [9, 10]`, or `2.5 (exact)` for the
    record's exact value (`NAME exact`)."""
    track, _, part = name.partition(" ")
    record = atlas["records"][track]
    if part == "exact":
        return f"{record['exact']:g} (exact)"
    low, high = record["interval"]
    return f"{record['estimate']:.1f} [{_bound(low)}, {_bound(high)}]"


def recomputed_figure(raw_cell: str, base: Path = RESULTS) -> str:
    """The figure a raw-record cell's file gives for its record."""
    ((name, target),) = LINK.findall(raw_cell)
    data = json.loads((base / target).read_text())
    if data.get("format") in ("catena_zero.general_targets", "catena_zero.loss_study_games"):
        return match_figure(data, name)  # both key their matches by name, each with a result
    if "records" in data:
        return atlas_figure(data, name)
    raise AssertionError(f"{target}: neither a match report nor a komi atlas")


def figure_problems(rows: list[FigureRow], base: Path = RESULTS) -> list[str]:
    """One line per row whose figure differs from the one recomputed from its raw record."""
    problems = []
    for row in rows:
        if row.raw == "-":
            continue
        expected = recomputed_figure(row.raw, base)
        if row.figure != expected:
            problems.append(f"{row.measure}: table {row.figure!r}, {row.raw} gives {expected!r}")
    return problems


ROWS = current_figures(INDEX.read_text())


def test_every_link_of_the_index_names_an_existing_file() -> None:
    targets = [target for _, target in LINK.findall(CODE_SPAN.sub("", INDEX.read_text()))
               if not re.match(r"^[a-z]+:", target)]
    assert targets
    missing = [target for target in targets
               if not (RESULTS / target.partition("#")[0]).exists()]
    assert missing == []


def test_every_dated_page_is_in_the_index_by_topic_once() -> None:
    pages = sorted(path.name for path in RESULTS.glob("*.md") if DATED_PAGE.match(path.name))
    listed = [target for _, target, _ in INDEX_ROW.findall(section(INDEX.read_text(),
                                                                    TOPICS_HEADING))]
    assert sorted(listed) == pages
    summaries = [summary for _, _, summary in INDEX_ROW.findall(INDEX.read_text())]
    assert all(len(summary) > 20 for summary in summaries)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.measure)
def test_each_current_figure_names_its_model_machine_and_page(row: FigureRow) -> None:
    assert row.figure and row.model and row.figure != "-"
    assert row.machine in MACHINES, f"{row.machine!r}: not one of the machines named above"
    pages = [target for _, target in LINK.findall(row.page)]
    assert pages and all(DATED_PAGE.match(page) and (RESULTS / page).is_file()
                         for page in pages), row.page


def test_the_current_figures_cover_strength_komi_speed_and_reliability() -> None:
    measures = " ".join(row.measure for row in ROWS)
    for phrase in ("side 6 against `uct:200`", "side 6 against `uct:1000`", "greedy",
                   "side 7", "side 8", "side 10", "side 4", "fair komi, side 2",
                   "fair komi, side 10", "self-play", "search", "rules cross-check"):
        assert phrase in measures, phrase
    assert {"Xeon", "EPYC", "H200"} <= {row.machine for row in ROWS}
    raw = [row for row in ROWS if row.raw != "-"]
    assert len(raw) >= 15 and any("exact" in row.raw for row in raw)


@pytest.mark.parametrize("row", [row for row in ROWS if row.raw != "-"],
                         ids=lambda row: row.measure)
def test_each_figure_equals_its_raw_record(row: FigureRow) -> None:
    assert figure_problems([row]) == []


def test_a_changed_figure_is_caught(tmp_path: Path) -> None:
    """The check itself: a match and an atlas record, right and then altered."""
    report = {"format": "catena_zero.general_targets", "matches": {"side6-uct200": {
        "result": {"wins": 146, "draws": 0, "losses": 54}}}}
    atlas = {"records": {"side6-komi-standard": {"estimate": 9.209, "interval": [8.0, None],
                                                  "exact": None},
                         "side3-komi-standard": {"estimate": 10.0, "interval": [9.0, 11.0],
                                                 "exact": 10.5}}}
    (tmp_path / "report.json").write_text(json.dumps(report))
    (tmp_path / "atlas.json").write_text(json.dumps(atlas))
    right = [FigureRow("m", "73.0% [66.5, 78.7]", "x", "Xeon", "p",
                       "[side6-uct200](report.json)"),
             FigureRow("k", "9.2 [8, open]", "x", "EPYC", "p",
                       "[side6-komi-standard](atlas.json)"),
             FigureRow("e", "10.5 (exact)", "x", "dev VM", "p",
                       "[side3-komi-standard exact](atlas.json)"),
             FigureRow("none", "whatever", "x", "Xeon", "p", "-")]
    assert figure_problems(right, base=tmp_path) == []
    wrong = [FigureRow("m", "73.5% [66.5, 78.7]", "x", "Xeon", "p",
                       "[side6-uct200](report.json)"),
             FigureRow("k", "9.2 [8, 10]", "x", "EPYC", "p",
                       "[side6-komi-standard](atlas.json)"),
             FigureRow("e", "10 (exact)", "x", "dev VM", "p",
                       "[side3-komi-standard exact](atlas.json)")]
    assert figure_problems(wrong, base=tmp_path) == [
        "m: table '73.5% [66.5, 78.7]', [side6-uct200](report.json) gives "
        "'73.0% [66.5, 78.7]'",
        "k: table '9.2 [8, 10]', [side6-komi-standard](atlas.json) gives '9.2 [8, open]'",
        "e: table '10 (exact)', [side3-komi-standard exact](atlas.json) gives '10.5 (exact)'",
    ]
