"""benchmarks.record_bundled_ratings: Elos from a ratings file or a model file, a rename
that moves a bundled file's Elos to its new name, and a drop of a model that plays no track;
refusals leave the table as it was."""

from __future__ import annotations

import re
import shutil

import pytest

from benchmarks import record_bundled_ratings
from catena_zero.export.metadata import ModelFileError
from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.bundled_ratings import (
    RATINGS_NAME,
    drop_ratings,
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


def _bundle(table, names) -> list[str]:
    for name in names:
        shutil.copy(tiny_general_model_file(program=False), table.parent / name)
    return ModelLibrary(directory=table.parent).available()


def _choices(directory) -> dict:
    library = ModelLibrary(directory=directory)
    tracks = {track for rated in library.ratings().models.values() for track in rated}
    return {str(track): library.choice(track) for track in tracks}


def test_a_model_rated_best_nowhere_is_dropped_and_no_track_changes_player(table) -> None:
    record_ratings(table, "general-old.pt", REFERENCE, {"6/komi/standard": 400.0,
                                                        "4/komi/longest": 321.5})
    record_ratings(table, "general-mid.pt", REFERENCE, {"4/komi/longest": 350.0})
    available = _bundle(table, ["general.pt", "side4.pt", "general-old.pt",
                                "general-mid.pt"])
    before = _choices(table.parent)
    # general-old ties general.pt on 4/komi/longest and loses: the earlier listed wins
    after = drop_ratings(table, "general-old.pt", available)
    assert set(after.models) == {"general.pt", "general-mid.pt", "side4.pt"}
    (table.parent / "general-old.pt").unlink()
    assert _choices(table.parent) == before
    assert before["4/komi/longest"] == "general-mid.pt"


def test_a_rated_model_whose_file_is_gone_does_not_stand_in_for_one_that_plays(table) -> None:
    record_ratings(table, "general-best.pt", REFERENCE, {"4/komi/standard": 700.0})
    record_ratings(table, "general-gone.pt", REFERENCE, {"4/komi/standard": 900.0})
    available = _bundle(table, ["general.pt", "side4.pt", "general-best.pt"])
    text = table.read_text()
    with pytest.raises(ModelFileError, match="still rated best on 1 tracks"):
        drop_ratings(table, "general-best.pt", available)
    assert table.read_text() == text
    # the file deleted first: the model is still checked as if present
    (table.parent / "general-best.pt").unlink()
    with pytest.raises(ModelFileError, match="still rated best on 1 tracks"):
        drop_ratings(table, "general-best.pt", ModelLibrary(directory=table.parent).available())


@pytest.mark.parametrize(("name", "problem"), [
    ("general-best.pt", "still rated best on 1 tracks (4/komi/standard)"),
    ("general.pt", "also plays the tracks no model is rated on"),
    ("side4.pt", "also plays the tracks no model is rated on"),
    ("absent.pt", "not in the table"),
])
def test_a_drop_that_would_weaken_a_track_is_refused_and_changes_nothing(table, name,
                                                                        problem) -> None:
    record_ratings(table, "general-best.pt", REFERENCE, {"4/komi/standard": 700.0,
                                                         "6/komi/standard": 100.0})
    available = _bundle(table, ["general.pt", "side4.pt", "general-best.pt"])
    text = table.read_text()
    with pytest.raises(ModelFileError, match=re.escape(problem)):
        drop_ratings(table, name, available, keep=("general.pt", "side4.pt"))
    assert table.read_text() == text


def test_the_command_drops_a_model_that_plays_nothing_and_refuses_one_that_plays(
        table, capsys) -> None:
    record_ratings(table, "general-old.pt", REFERENCE, {"6/komi/standard": 100.0})
    record_ratings(table, "general-best.pt", REFERENCE, {"6/komi/standard": 900.0})
    _bundle(table, ["general.pt", "side4.pt", "general-old.pt", "general-best.pt"])
    for name in ("general-best.pt", "general.pt", "side4.pt"):
        text = table.read_text()
        assert record_bundled_ratings.main([name, "--drop", "--table", str(table)]) == 1
        error = capsys.readouterr().err
        assert error.startswith("record_bundled_ratings: ") and error.count("\n") == 1
        assert table.read_text() == text
    assert record_bundled_ratings.main(["general-old.pt", "--drop", "--table",
                                        str(table)]) == 0
    assert "Elos of general-old.pt are dropped" in capsys.readouterr().out
    assert set(read_bundled_ratings(table).models) == {"general.pt", "general-best.pt",
                                                       "side4.pt"}
