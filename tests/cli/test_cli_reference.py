"""docs/configuration.md is the generated reference of every config key, and up to date."""

from __future__ import annotations

from pathlib import Path

from catena_zero.cli.reference import field_notes, reference_text
from catena_zero.mcts.config import SearchConfig
from catena_zero.pipeline.config import LoopConfig

PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_committed_reference_is_what_the_schemas_generate() -> None:
    assert PAGE.read_text() == reference_text() + "\n", (
        "docs/configuration.md is stale: python -m catena_zero.cli.reference > "
        "docs/configuration.md")


def test_every_key_has_a_note() -> None:
    rows = [line for line in reference_text().splitlines() if line.startswith("| `")]
    assert len(rows) > 150
    missing = [row.split("`")[1] for row in rows if row.rstrip().endswith("|  |")]
    assert not missing, f"fields without a one-line note: {missing}"


def test_notes_come_from_the_line_beside_or_above_the_field() -> None:
    assert field_notes(SearchConfig)["num_simulations"].startswith("simulations per move")
    assert "Ray actor" in field_notes(LoopConfig)["threads"]  # written above the field
