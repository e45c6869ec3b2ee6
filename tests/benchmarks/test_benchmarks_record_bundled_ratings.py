"""benchmarks.record_bundled_ratings: Elos from a ratings file or a model file, anchor
records from a general_targets report of the bundled file and anchor matches, a rename that
moves a bundled file's Elos to its new name, and a drop of a model that plays no track;
refusals leave the table as it was."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from benchmarks import record_bundled_ratings
from catena_zero.export.metadata import ModelFileError
from catena_zero.export.ratings import elo_from_record
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
    ["general.pt", "--from-model", "--replace"],                   # --replace alone
    ["--anchor-match", "6/komi/standard", "uct:1000", "uct:200", "12-3"],   # not W-D-L
    ["--anchor-match", "6/komi/standard", "uct:1000", "uct:200", "0-0-0"],  # no game
    ["--anchor-match", "6/komi/standard", "greedy", "uct:200", "1-0-1"],    # no anchor
    ["general.pt", "--anchor-match", "6/komi/standard", "uct:1000", "uct:200", "1-0-1"],
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


def _report(path, model_path, matches: dict, sha256: str | None = None):
    """A general_targets report of `model_path`: matches {name: (track, opponent, W, D, L)},
    each player named as general_targets names it."""
    from benchmarks.general_targets import FORMAT, FORMAT_VERSION
    from catena_zero.arena.specs import player_record
    from catena_zero.mcts.config import SearchConfig

    model_player = player_record(f"model:{model_path}", SearchConfig())
    if sha256 is not None:
        model_player["sha256"] = sha256
    report = {"format": FORMAT, "format_version": FORMAT_VERSION, "model": str(model_path),
              "model_player": model_player,
              "settings": {"games": 200, "simulations": 128, "seed": 0, "komi": {}},
              "matches": {name: {"name": name, "track": track, "opponent": opponent,
                                 "komi": 7, "komi_source": "given", "games": sum(counts),
                                 "result": {"wins": counts[0], "draws": counts[1],
                                            "losses": counts[2]},
                                 "opponent_player": player_record(opponent, None)}
                          for name, (track, opponent, *counts) in matches.items()}}
    path.write_text(json.dumps(report))
    return path


MATCHES = {"side6-greedy": ("6/komi/standard", "greedy", 199, 0, 1),
           "side6-uct200": ("6/komi/standard", "uct:200", 150, 0, 50),
           "side6-uct1000": ("6/komi/standard", "uct:1000", 90, 2, 108),
           "side8-uct200": ("8/komi/standard", "uct:200", 160, 0, 40)}


def test_the_command_records_a_report_s_anchor_matches_and_decides_the_tracks(
        table, capsys) -> None:
    _bundle(table, ["general.pt", "side4.pt"])
    greedy = read_bundled_ratings(table).models
    report = _report(table.parent / "targets.json", table.parent / "general.pt", MATCHES)
    assert record_bundled_ratings.main(["general.pt", "--targets", str(report), "--table",
                                        str(table)]) == 0
    out = capsys.readouterr().out
    assert "general.pt: 3 anchor records on 2 tracks" in out
    assert "6/komi/standard: first choice general.pt (Elo " in out
    recorded = read_bundled_ratings(table)
    assert recorded.models == greedy  # the greedy Elos as they were
    model = recorded.anchors.models["general.pt"]
    assert model.search["num_simulations"] > 0 and len(model.sha256) == 64
    assert {str(track): sorted(by_anchor) for track, by_anchor in model.records.items()} == {
        "6/komi/standard": ["uct:1000", "uct:200"], "8/komi/standard": ["uct:200"]}
    assert ModelLibrary(directory=table.parent).choice(Track(8, "komi", "standard")) == \
        "general.pt"
    # the anchor's own match places uct:1000 on side 6
    assert record_bundled_ratings.main(["--anchor-match", "6/komi/standard", "uct:1000",
                                        "uct:200", "120-0-80", "--table", str(table)]) == 0
    assert "uct:1000 against uct:200 on 6/komi/standard: 120-0-80" in capsys.readouterr().out
    elos = json.loads(table.read_text())["anchor_elos"]["6/komi/standard"]
    assert abs(elos["uct:1000"]["elo"] - elo_from_record(120, 0, 80)) < 0.01


@pytest.mark.parametrize("problem", ["another file", "no anchor", "no model_player",
                                     "not JSON"])
def test_a_report_that_cannot_rate_the_bundled_file_is_refused_in_one_line(
        table, capsys, problem) -> None:
    _bundle(table, ["general.pt"])
    path = table.parent / "targets.json"
    model = table.parent / "general.pt"
    if problem == "another file":
        _report(path, model, MATCHES, sha256="0" * 64)
        expected = "played the file of SHA-256 0000000000000000..., the bundled general.pt"
    elif problem == "no anchor":
        _report(path, model, {"side6-greedy": MATCHES["side6-greedy"]})
        expected = "has no match against an anchor"
    elif problem == "no model_player":
        _report(path, model, MATCHES)
        report = json.loads(path.read_text())
        del report["model_player"]
        path.write_text(json.dumps(report))
        expected = "names no model file SHA-256"
    else:
        path.write_text("{")
        expected = "unreadable"
    text = table.read_text()
    assert record_bundled_ratings.main(["general.pt", "--targets", str(path), "--table",
                                        str(table)]) == 1
    error = capsys.readouterr().err
    assert error.startswith("record_bundled_ratings: --targets ") and error.count("\n") == 1
    assert expected in error
    assert table.read_text() == text


def test_a_report_of_the_file_before_a_rewrite_that_kept_its_weights_is_recorded(
        table, capsys, monkeypatch) -> None:
    """A report names the bundled file by the SHA-256 it had when it played; a file later
    rewritten with the same metadata and weights (catena_zero.data.file_history, the bundled
    files without their program) keeps it, and the record names today's file."""
    from catena_zero.data import file_history

    _bundle(table, ["general.pt"])
    model = table.parent / "general.pt"
    today = record_bundled_ratings.file_sha256(model)
    monkeypatch.setitem(file_history.EARLIER_SHA256, today, ("1" * 64,))
    report = _report(table.parent / "targets.json", model, MATCHES, sha256="1" * 64)
    assert record_bundled_ratings.main(["general.pt", "--targets", str(report), "--table",
                                        str(table)]) == 0
    assert "general.pt: 3 anchor records on 2 tracks" in capsys.readouterr().out
    assert read_bundled_ratings(table).anchors.models["general.pt"].sha256 == today
