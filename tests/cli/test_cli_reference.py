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


def test_an_indented_comment_under_a_field_continues_its_note() -> None:
    """"#   more" lines under a field belong to its note, not to the next field's; a plain
    "# note" line belongs to the field below it."""
    import dataclasses

    @dataclasses.dataclass
    class Example:
        first: int = 1  # the first field's note
        #   goes on here
        second: int = 2  # its own note
        # a note above the third field
        third: int = 3

    notes = field_notes(Example)
    assert notes == {"first": "the first field's note goes on here", "second": "its own note",
                     "third": "a note above the third field"}

