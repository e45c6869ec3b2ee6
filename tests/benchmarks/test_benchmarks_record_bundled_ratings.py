"""benchmarks.record_bundled_ratings: Elos from a ratings file or a model file, and a rename
that moves a bundled file's Elos to its new name; refusals leave the table as it was."""

from __future__ import annotations

import shutil

import pytest

from benchmarks import record_bundled_ratings
from catena_zero.export.metadata import ModelFileError
from catena_zero.play.bundled_ratings import (
    RATINGS_NAME,
    read_bundled_ratings,
    record_ratings,
    rename_ratings,
)
from catena_zero.rules import Track
from tests.export.tiny_model import tiny_general_model_file

REFERENCE = "one-ply greedy player = 0 (test)"


@pytest.fixture
def table(tmp_path):
    path = tmp_path / RATINGS_NAME
    record_ratings(path, "general.pt", REFERENCE, {"6/komi/standard": 500.0,
                                                   "4/komi/longest": 321.5})
    record_ratings(path, "side4.pt", REFERENCE, {"4/komi/standard": 600.0})
    return path


def test_a_rename_moves_the_elos_and_keeps_the_rest(table) -> None:
    before = read_bundled_ratings(table)
    after = rename_ratings(table, "general.pt", "general-step90144.pt")
    assert set(after.models) == {"general-step90144.pt", "side4.pt"}
    assert after.models["general-step90144.pt"] == before.models["general.pt"]
    assert read_bundled_ratings(table).models == after.models
    assert read_bundled_ratings(table).elo("general-step90144.pt",
                                           Track.parse("4/komi/longest")) == 321.5


@pytest.mark.parametrize(("old", "new", "problem"), [
    ("missing.pt", "other.pt", "not in the table"),
    ("general.pt", "side4.pt", "already rated"),
    ("general.pt", "../escape.pt", "plain .pt file name"),
    ("general.pt", "general.bin", "plain .pt file name"),
])
def test_a_bad_rename_is_refused_and_changes_nothing(table, old, new, problem) -> None:
    text = table.read_text()
    with pytest.raises(ModelFileError, match=problem):
        rename_ratings(table, old, new)
    assert table.read_text() == text


def test_the_command_renames_a_bundled_file_s_entry(table, capsys) -> None:
    shutil.copy(tiny_general_model_file(program=False), table.parent / "general-old.pt")
    assert record_bundled_ratings.main(["general.pt", "--rename", "general-old.pt",
                                        "--table", str(table)]) == 0
    assert "now belong to general-old.pt" in capsys.readouterr().out
    assert set(read_bundled_ratings(table).models) == {"general-old.pt", "side4.pt"}


@pytest.mark.parametrize("arguments", [
    ["general.pt", "--rename", "absent.pt"],                       # no such bundled file
    ["general.pt", "--rename", "general-old.pt", "--from-model"],  # two sources at once
    ["general.pt"],                                                # none
])
def test_the_command_refuses_in_one_line_and_changes_nothing(table, capsys,
                                                             arguments) -> None:
    shutil.copy(tiny_general_model_file(program=False), table.parent / "general-old.pt")
    text = table.read_text()
    assert record_bundled_ratings.main([*arguments, "--table", str(table)]) == 1
    error = capsys.readouterr().err
    assert error.startswith("record_bundled_ratings: ") and error.count("\n") == 1
    assert table.read_text() == text
