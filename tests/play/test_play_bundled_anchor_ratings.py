"""The bundled ratings table, version 2: raw records against anchor players per model and
track, the Elos fitted from them (uct:200 = 0), the player of each track by the replacement
rule; version 1 still read (and written while nothing is anchored), every greedy Elo kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from catena_zero.export.metadata import ModelFileError
from catena_zero.export.ratings import elo_from_record
from catena_zero.play.anchor_ratings import AnchorModel, AnchorRecord
from catena_zero.play.bundled import BUNDLED_DIRECTORY, ModelLibrary
from catena_zero.play.bundled_ratings import (
    RATINGS_NAME,
    drop_ratings,
    read_bundled_ratings,
    record_anchor_match,
    record_anchor_results,
    record_ratings,
    rename_ratings,
)
from catena_zero.rules import Rules, Track
from tests.export.tiny_model import tiny_general_model_file

REFERENCE = "one-ply greedy player = 0 (test)"
SIX, FOUR = Track(6, "komi", "standard"), Track(4, "komi", "standard")
SEARCH = {"num_simulations": 128, "algorithm": "gumbel"}


def _model(steps: int | None, records: dict, sha256: str = "a" * 64,
           search: dict | None = None) -> AnchorModel:
    """records: {track: {anchor: (wins, draws, losses)}}"""
    return AnchorModel(sha256, steps, SEARCH if search is None else search,
                       {Track.parse(track): {anchor: AnchorRecord(*counts, komi=7)
                                             for anchor, counts in by_anchor.items()}
                        for track, by_anchor in records.items()})


@pytest.fixture
def bundle(tmp_path) -> Path:
    """A models folder of general.pt, general-old.pt and general-new.pt, rated against
    greedy (general-old.pt best on 6/komi/standard there); returns the table's path."""
    for name in ("general.pt", "general-old.pt", "general-new.pt"):
        shutil.copy(tiny_general_model_file(program=False), tmp_path / name)
    table = tmp_path / RATINGS_NAME
    record_ratings(table, "general.pt", REFERENCE, {SIX: 500.0, FOUR: 400.0})
    record_ratings(table, "general-old.pt", REFERENCE, {SIX: 700.0, FOUR: 450.0})
    return table


def _available(table: Path) -> list[str]:
    return ModelLibrary(directory=table.parent).available()


def test_the_shipped_table_reads_and_writes_back_byte_for_byte() -> None:
    path = BUNDLED_DIRECTORY / RATINGS_NAME
    table = read_bundled_ratings(path)
    assert table.to_json() == path.read_text()
    assert json.loads(path.read_text())["format_version"] in (1, 2)


def test_anchor_records_make_a_version_2_table_that_keeps_every_greedy_elo(tmp_path) -> None:
    path = tmp_path / RATINGS_NAME
    # The shipped table's greedy Elos as a version-1 table, without its anchor records.
    shipped = json.loads((BUNDLED_DIRECTORY / RATINGS_NAME).read_text())
    version_1 = {key: shipped[key] for key in ("format", "reference", "models")}
    path.write_text(json.dumps({**version_1, "format_version": 1}, indent=1) + "\n")
    before = read_bundled_ratings(path)
    table, decisions = record_anchor_results(
        path, "general.pt", _model(216608, {SIX: {"uct:200": (150, 0, 50)}}),
        ["general.pt", "side6.pt"])
    document = json.loads(path.read_text())
    assert document["format_version"] == 2 and document["reference"] == before.reference
    assert read_bundled_ratings(path).models == before.models  # every v1 figure kept
    assert document["anchor_models"]["general.pt"]["sha256"] == "a" * 64
    assert document["anchor_models"]["general.pt"]["search"] == SEARCH
    assert document["anchor_models"]["general.pt"]["records"] == {
        "6/komi/standard": {"uct:200": {"wins": 150, "draws": 0, "losses": 50, "komi": 7}}}
    entry = document["anchor_elos"]["6/komi/standard"]["general.pt"]
    assert entry["elo"] == pytest.approx(elo_from_record(150, 0, 50), abs=0.01)
    assert entry["low"] < entry["elo"] < entry["high"]
    assert document["players"] == {"6/komi/standard": "general.pt"}
    assert [(str(track), decision.player) for track, decision in decisions] == [
        ("6/komi/standard", "general.pt")]
    assert table.choice(SIX, ["general.pt", "side6.pt"]) == "general.pt"


def test_the_library_chooses_by_anchors_where_a_track_has_them_else_by_greedy(bundle) -> None:
    record_anchor_results(bundle, "general.pt", _model(10, {SIX: {"uct:200": (150, 0, 50)}}),
                          _available(bundle))
    record_anchor_results(bundle, "general-old.pt",
                          _model(5, {SIX: {"uct:200": (90, 0, 110)}}), _available(bundle))
    library = ModelLibrary(directory=bundle.parent)
    # greedy rates general-old.pt 200 Elo higher on side 6; the anchors rate general.pt
    assert library.choice(Rules(6)) == "general.pt"
    assert library.choice(Rules(4)) == "general-old.pt"  # no anchored Elo: greedy's choice
    described = library.describe(Rules(6))
    assert f"Elo {elo_from_record(150, 0, 50):.0f} [" in described
    assert "on 6/komi/standard (uct:200 = 0)" in described
    assert "(one-ply greedy player = 0)" in library.describe(Rules(4))


def test_a_first_choice_tie_goes_to_the_newer_model_not_the_file_order(bundle) -> None:
    tie = {SIX: {"uct:200": (150, 0, 50)}}
    record_anchor_results(bundle, "general.pt", _model(10, tie), _available(bundle))
    record_anchor_results(bundle, "general-new.pt", _model(20, tie), _available(bundle))
    # general.pt was the only rated model, so it holds the track: a tie keeps it
    assert ModelLibrary(directory=bundle.parent).choice(Rules(6)) == "general.pt"
    (bundle.parent / "general.pt").unlink()  # the incumbent gone: a first choice
    shutil.copy(bundle.parent / "general-new.pt", bundle.parent / "general-newer.pt")
    record_anchor_results(bundle, "general-newer.pt", _model(30, tie), _available(bundle))
    assert ModelLibrary(directory=bundle.parent).choice(Rules(6)) == "general-newer.pt"


def test_a_challenger_replaces_the_player_only_with_a_significant_lead(bundle) -> None:
    record_anchor_results(bundle, "general.pt", _model(10, {SIX: {"uct:200": (100, 0, 100)}}),
                          _available(bundle))
    _, decisions = record_anchor_results(
        bundle, "general-new.pt", _model(20, {SIX: {"uct:200": (112, 0, 88)}}),
        _available(bundle))
    (_, decision), = decisions
    assert decision.player == "general.pt" and "no significant lead" in decision.reason
    assert ModelLibrary(directory=bundle.parent).choice(Rules(6)) == "general.pt"
    _, decisions = record_anchor_results(
        bundle, "general-new.pt", _model(20, {SIX: {"uct:200": (175, 0, 25)}}),
        _available(bundle))
    assert decisions[0][1].reason.startswith("general-new.pt replaces general.pt: lead +")
    assert ModelLibrary(directory=bundle.parent).choice(Rules(6)) == "general-new.pt"
    # the later report's record replaced the earlier one: nothing is counted twice
    records = read_bundled_ratings(bundle).anchors.models["general-new.pt"].records
    assert records[SIX]["uct:200"] == AnchorRecord(175, 0, 25, komi=7)


def test_records_of_another_file_or_search_are_refused_unless_replaced(bundle) -> None:
    record_anchor_results(bundle, "general.pt", _model(10, {SIX: {"uct:200": (150, 0, 50)},
                                                            FOUR: {"uct:200": (160, 0, 40)}}),
                          _available(bundle))
    text = bundle.read_text()
    for other in (_model(10, {SIX: {"uct:200": (1, 0, 1)}}, sha256="b" * 64),
                  _model(10, {SIX: {"uct:200": (1, 0, 1)}}, search={"num_simulations": 8})):
        with pytest.raises(ModelFileError, match="give --replace") as caught:
            record_anchor_results(bundle, "general.pt", other, _available(bundle))
        assert "\n" not in str(caught.value) and bundle.read_text() == text
    record_anchor_results(bundle, "general.pt",
                          _model(10, {SIX: {"uct:200": (120, 0, 80)}}, sha256="b" * 64),
                          _available(bundle), replace=True)
    table = read_bundled_ratings(bundle)
    assert table.anchors.models["general.pt"].sha256 == "b" * 64
    assert set(table.anchors.models["general.pt"].records) == {SIX}  # FOUR's went with it
    assert table.anchored_elo("general.pt", FOUR) is None


def test_an_anchor_match_places_the_anchor_and_a_new_one_replaces_it(bundle) -> None:
    record_anchor_results(bundle, "general.pt", _model(10, {SIX: {"uct:1000": (100, 0, 100)}}),
                          _available(bundle))
    table = read_bundled_ratings(bundle)
    assert table.anchored_elo("general.pt", SIX) is None  # no path to uct:200 yet
    assert table.choice(SIX, _available(bundle)) == "general-old.pt"  # greedy's choice
    record_anchor_match(bundle, SIX, "uct:1000", "uct:200", AnchorRecord(150, 0, 50),
                        _available(bundle))
    table, _ = record_anchor_match(bundle, SIX, "uct:200", "uct:1000", AnchorRecord(40, 0, 160),
                                   _available(bundle))
    assert len(table.anchors.matches[SIX]) == 1
    elos = json.loads(bundle.read_text())["anchor_elos"]["6/komi/standard"]
    assert elos["uct:1000"]["elo"] == pytest.approx(-elo_from_record(40, 0, 160), abs=0.01)
    assert elos["general.pt"]["elo"] == pytest.approx(-elo_from_record(40, 0, 160), abs=0.01)
    assert table.choice(SIX, _available(bundle)) == "general.pt"
    with pytest.raises(ModelFileError, match="between two anchors"):
        record_anchor_match(bundle, SIX, "greedy", "uct:200", AnchorRecord(1, 0, 1),
                            _available(bundle))


def test_a_rename_moves_the_anchor_records_and_the_tracks_it_plays(bundle) -> None:
    record_anchor_results(bundle, "general-new.pt",
                          _model(10, {SIX: {"uct:200": (150, 0, 50)}}), _available(bundle))
    table = rename_ratings(bundle, "general-new.pt", "general-step10.pt")
    assert "general-step10.pt" in table.anchors.models and table.anchors.players == {
        SIX: "general-step10.pt"}
    assert read_bundled_ratings(bundle).anchors.players == {SIX: "general-step10.pt"}


def test_a_drop_is_refused_for_the_player_and_for_records_that_place_another(bundle) -> None:
    available = _available(bundle)
    # general.pt (rated best by greedy nowhere) links uct:1000 to uct:200; general-new.pt
    # played only uct:1000
    record_anchor_results(bundle, "general.pt", _model(5, {
        SIX: {"uct:200": (120, 0, 80), "uct:1000": (60, 0, 140)}}), available)
    record_anchor_results(bundle, "general-new.pt",
                          _model(20, {SIX: {"uct:1000": (170, 0, 30)}}), available)
    assert read_bundled_ratings(bundle).anchors.players == {SIX: "general-new.pt"}
    text = bundle.read_text()
    with pytest.raises(ModelFileError, match="still rated best on 1 tracks"):
        drop_ratings(bundle, "general-new.pt", available)
    with pytest.raises(ModelFileError, match="the anchored player of 1 tracks would change"):
        drop_ratings(bundle, "general.pt", available)
    assert bundle.read_text() == text


def test_a_model_that_plays_no_track_is_dropped_with_its_anchor_records(bundle) -> None:
    available = _available(bundle)
    record_anchor_results(bundle, "general-new.pt",
                          _model(20, {SIX: {"uct:200": (170, 0, 30)}}), available)
    record_anchor_results(bundle, "general.pt", _model(5, {SIX: {"uct:200": (30, 0, 170)}}),
                          available)
    dropped = drop_ratings(bundle, "general.pt", available)
    assert "general.pt" not in dropped.names()
    assert read_bundled_ratings(bundle).anchors.players == {SIX: "general-new.pt"}


def _v2_document(bundle) -> dict:
    record_anchor_results(bundle, "general.pt", _model(10, {SIX: {"uct:200": (150, 0, 50)}}),
                          _available(bundle))
    return json.loads(bundle.read_text())


def _tamper_elo(document):
    document["anchor_elos"]["6/komi/standard"]["general.pt"]["elo"] += 1.0


def _tamper_record(document):
    document["anchor_models"]["general.pt"]["records"]["6/komi/standard"]["uct:200"][
        "wins"] = 149


@pytest.mark.parametrize("damage, problem", [
    (_tamper_elo, "does not follow from the records"),
    (_tamper_record, "does not follow from the records"),
    (lambda document: document["anchor_models"]["general.pt"].update(sha256="xyz"),
     "64 lower-case hex"),
    (lambda document: document["anchor_models"]["general.pt"].update(extra=1),
     "unknown key 'extra'"),
    (lambda document: document["anchor_models"]["general.pt"]["records"][
        "6/komi/standard"].update(greedy={"wins": 1, "draws": 0, "losses": 0, "komi": 7}),
     "is no anchor"),
    (lambda document: document["anchor_models"]["general.pt"]["records"][
        "6/komi/standard"]["uct:200"].update(losses=-1), "counts with a game"),
    (lambda document: document["players"].update({"6/komi/standard": "general-old.pt"}),
     "has no anchored Elo there"),
    (lambda document: document.update(format_version=1), "unknown key 'anchor_elos'"),
    (lambda document: document.update(anchor_models={}, anchor_matches={}, anchor_elos={},
                                      players={}), "holds anchor records"),
])
def test_a_damaged_version_2_table_is_one_line_naming_the_file(bundle, damage,
                                                               problem) -> None:
    document = _v2_document(bundle)
    damage(document)
    bundle.write_text(json.dumps(document))
    with pytest.raises(ModelFileError, match=problem) as caught:
        read_bundled_ratings(bundle)
    assert str(bundle) in str(caught.value) and "\n" not in str(caught.value)
