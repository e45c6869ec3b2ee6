"""Which bundled model plays which track: the best rated on the track in the bundled ratings
table (one reference player), else general.pt, else the side's own champion; the shipped
table and files agree, and no track's default player is a model rated lower there than
another bundled one."""

from __future__ import annotations

import itertools
import json
import os
import shutil

import pytest

from catena_zero.export.metadata import ModelFileError
from catena_zero.play import bundled
from catena_zero.play.bundled import ModelLibrary, choose_model
from catena_zero.play.bundled_ratings import (
    RATINGS_NAME,
    BundledRatings,
    read_bundled_ratings,
    record_ratings,
)
from catena_zero.rules import Rules, Track
from tests.export.tiny_model import tiny_general_model_file, tiny_model_file

REFERENCE = "one-ply greedy player = 0 (test)"
ALL_TRACKS = [Track(side, game_type, scoring) for side, game_type, scoring in
              itertools.product(range(2, 11), ("komi", "nokomi", "double"),
                                ("standard", "longest", "quadratic"))]


def _library(tmp_path, files: dict[str, str], table: dict | None) -> ModelLibrary:
    for name, kind in files.items():
        source = tiny_general_model_file(program=False) if kind == "general" else \
            tiny_model_file(int(kind), program=False)
        shutil.copy(source, tmp_path / name)
    if table is not None:
        for name, elos in table.items():
            record_ratings(tmp_path / RATINGS_NAME, name, REFERENCE, elos)
    return ModelLibrary(directory=tmp_path)


def test_the_best_rated_model_plays_its_track_and_general_plays_the_rest(tmp_path) -> None:
    library = _library(tmp_path, {"general.pt": "general", "side3.pt": "3"},
                       {"general.pt": {"3/komi/standard": 100.0, "3/nokomi/standard": 300.0},
                        "side3.pt": {"3/komi/standard": 250.0, "3/nokomi/standard": 200.0}})
    assert library.choice(Rules(3)) == "side3.pt"
    assert library.get(Rules(3)).path.name == "side3.pt"
    assert library.get(3).path.name == "side3.pt"  # a side alone: its komi/standard track
    assert library.choice(Rules(3, "nokomi")) == "general.pt"
    assert library.choice(Rules(3, "double")) == "general.pt"  # rated by none
    assert library.choice(Rules(7)) == "general.pt"
    assert library.sides() == list(range(2, 11))
    assert "side3.pt" in library.describe(Rules(3)) and "Elo 250 on 3/komi/standard" in \
        library.describe(Rules(3))
    assert "general.pt" in library.describe(Rules(3, "nokomi"))
    assert "Elo 300 on 3/nokomi/standard (one-ply greedy player = 0)" in \
        library.describe(Rules(3, "nokomi"))


def test_without_ratings_general_plays_everything_and_side_files_their_side(tmp_path) -> None:
    only_sides = _library(tmp_path, {"side3.pt": "3"}, None)
    assert only_sides.sides() == [3] and only_sides.choice(Rules(3, "double")) == "side3.pt"
    with pytest.raises(ModelFileError, match="no bundled champion for side 5"):
        only_sides.get(5)
    shutil.copy(tiny_general_model_file(program=False), tmp_path / "general.pt")
    both = ModelLibrary(directory=tmp_path)
    assert both.choice(Rules(3)) == "general.pt"  # nothing rated: the general model
    assert both.get(3) is both.get(9)


def test_a_model_of_any_name_plays_only_where_it_is_rated_best(tmp_path) -> None:
    library = _library(tmp_path, {"general.pt": "general", "general-old.pt": "general"},
                       {"general.pt": {"6/komi/standard": 500.0, "4/komi/longest": 100.0,
                                       "7/komi/standard": 250.0},
                        "general-old.pt": {"6/komi/standard": 300.0, "4/komi/longest": 200.0,
                                           "5/komi/standard": -50.0,
                                           "7/komi/standard": 250.0}})
    (tmp_path / ".general.pt.tmp.pt").write_bytes(b"partial")  # a write in progress
    assert library.available() == ["general.pt", "general-old.pt"]
    assert library.choice(Rules(7)) == "general.pt"  # a tie: the general model
    assert library.choice(Rules(6)) == "general.pt"
    assert library.choice(Rules(4, "komi", "longest")) == "general-old.pt"
    assert library.choice(Rules(5)) == "general-old.pt"  # the only rating there
    assert library.choice(Rules(9)) == "general.pt"  # rated by none: the general model
    assert library.get(Rules(4, "komi", "longest")).path.name == "general-old.pt"
    assert ModelLibrary(directory=tmp_path / "missing").available() == []


def test_a_fixed_model_plays_every_track_whatever_the_table(tmp_path) -> None:
    _library(tmp_path, {"side3.pt": "3"}, {"side3.pt": {"3/komi/standard": 900.0}})
    library = ModelLibrary(tiny_model_file(4, program=False), directory=tmp_path)
    assert library.choice(Rules(3)) is None and library.get(Rules(3)) is library.fixed


@pytest.mark.parametrize("seed", range(25))
def test_property_the_choice_is_never_rated_below_another_bundled_model(seed) -> None:
    import random
    generator = random.Random(seed)
    names = ["general.pt"] + [f"side{side}.pt" for side in range(2, 11)]
    available = [name for name in names if generator.random() < 0.6]
    table = BundledRatings(reference=REFERENCE, models={
        name: {track: generator.uniform(-500, 900) for track in ALL_TRACKS
               if generator.random() < 0.3}
        for name in available + ["side9.pt"] if generator.random() < 0.8})
    for track in ALL_TRACKS:
        chosen = choose_model(track, table, available)
        rated = {name: table.models[name][track] for name in available
                 if track in table.models.get(name, {})}
        if rated:
            assert chosen in rated and rated[chosen] == max(rated.values())
        elif "general.pt" in available:
            assert chosen == "general.pt"
        else:
            own = f"side{track.side}.pt"
            assert chosen == (own if own in available else None)


def test_the_shipped_choice_follows_the_shipped_ratings() -> None:
    """The bundled table names only bundled files, all against one reference, and the
    default player of every track is the bundled model rated best there: where a bundled
    file has an anchored Elo, the recorded player, which no other anchored file leads
    significantly; elsewhere the highest greedy Elo."""
    library = ModelLibrary()
    table = library.ratings()
    assert table is not None and table.reference.startswith("one-ply greedy player = 0")
    available = library.available()
    assert table.names() <= set(available)
    anchored_tracks = 0
    for track in ALL_TRACKS:
        chosen = library.choice(track)
        fit = table.anchors.fit(track) if table.anchors else None
        anchored = [name for name in available if fit is not None and name in fit]
        rated = {name: elos[track] for name, elos in table.models.items() if track in elos}
        if anchored:
            anchored_tracks += 1
            assert chosen == table.anchors.players[track], (track, chosen)
            for other in anchored:
                if other != chosen:
                    _lead, low, _high = fit.lead(other, chosen)
                    assert low <= 0, (track, other, "leads", chosen)
        elif rated:
            assert rated.get(chosen) == max(rated.values()), (track, chosen, rated)
        else:
            assert chosen == bundled.GENERAL_MODEL_NAME
    assert anchored_tracks >= 1
    # the measured cases: side4.pt beats the general model on 4/komi/standard, and the
    # champion's file leads general.pt against the anchors on 6/komi/standard
    assert library.choice(Rules(4)) == "side4.pt"
    assert library.choice(Rules(6)) == "general-step275680.pt"
    # the measured case: side4.pt beats the general model on 4/komi/standard
    assert library.choice(Rules(4)) == "side4.pt"


@pytest.mark.parametrize("damage, problem", [
    (b"\xff\xfe", "not UTF-8 JSON"),
    (b"[]", "must be a JSON object"),
    (b'{"format": "x"}', "format must be"),
    (b'{"format": "catena_zero.bundled_ratings", "format_version": 3}', "format_version"),
    (json.dumps({"format": "catena_zero.bundled_ratings", "format_version": 1,
                 "reference": "r", "models": {"../x.pt": {}}}).encode(), "plain .pt"),
    (json.dumps({"format": "catena_zero.bundled_ratings", "format_version": 1,
                 "reference": "r", "models": {"a.pt": {"11/komi/standard": 1}}}).encode(),
     "not a track"),
    (json.dumps({"format": "catena_zero.bundled_ratings", "format_version": 1,
                 "reference": "r", "models": {"a.pt": {"4/komi/standard": True}}}).encode(),
     "finite number"),
    (b'{"format": "catena_zero.bundled_ratings", "format_version": 1, "reference": "r", '
     b'"models": {"a.pt": {"4/komi/standard": 1e999}}}', "finite number"),
    (b"[" * 100_000 + b"]" * 100_000, "not UTF-8 JSON"),
])
def test_a_damaged_table_is_one_line_naming_the_file(tmp_path, damage, problem) -> None:
    path = tmp_path / RATINGS_NAME
    path.write_bytes(damage)
    with pytest.raises(ModelFileError, match=problem) as caught:
        read_bundled_ratings(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_fifo_table_is_refused_without_blocking(tmp_path) -> None:
    os.mkfifo(tmp_path / RATINGS_NAME)
    with pytest.raises(ModelFileError, match="FIFO"):
        read_bundled_ratings(tmp_path / RATINGS_NAME)


def test_equal_results_tie_exactly_and_the_general_model_keeps_the_track(tmp_path) -> None:
    # 0.975 from a score and 195/200 from a count differ in the last bits of their Elo
    library = _library(tmp_path, {"general.pt": "general", "general-old.pt": "general"},
                       {"general-old.pt": {"6/komi/longest": 620.3136288950565},
                        "general.pt": {"6/komi/longest": 620.3136288950558}})
    table = library.ratings()
    assert table.models["general.pt"] == table.models["general-old.pt"]
    assert library.choice(Rules(6, "komi", "longest")) == "general.pt"


def test_elos_against_another_reference_are_refused(tmp_path) -> None:
    record_ratings(tmp_path / RATINGS_NAME, "a.pt", REFERENCE, {"4/komi/standard": 1.0})
    with pytest.raises(ModelFileError, match="against"):
        record_ratings(tmp_path / RATINGS_NAME, "b.pt", "random = 0", {"4/komi/standard": 2})
    assert set(read_bundled_ratings(tmp_path / RATINGS_NAME).models) == {"a.pt"}


def test_every_surface_says_which_model_plays(tmp_path) -> None:
    """The analysis engine's answer names the file, GTP says it on stderr, the terminal
    describes it: each the model the ratings choose for the track."""
    import io

    from catena_zero.play.analysis_engine import AnalysisConfig, AnalysisEngine
    from catena_zero.play.gtp import GtpEngine
    from catena_zero.play.model_player import ModelPlayer, PlayerConfig
    from catena_zero.play.terminal import TerminalConfig, play_terminal

    library = _library(tmp_path, {"general.pt": "general", "side3.pt": "3"},
                       {"side3.pt": {"3/komi/standard": 500.0},
                        "general.pt": {"3/komi/standard": 100.0}})
    engine = AnalysisEngine(library, AnalysisConfig(visits=2))
    answers = engine.handle_lines(['{"id": "a", "side": 3, "moves": []}',
                                   '{"id": "b", "rules": "3/nokomi/standard", '
                                   '"moves": []}'])
    assert [answer["model"] for answer in answers] == ["side3.pt", "general.pt"]
    player = ModelPlayer(library, PlayerConfig(simulations=1))
    notes = io.StringIO()
    gtp = GtpEngine(player, rules=Rules(3), note_stream=notes)
    gtp.handle_line("genmove b\n")
    assert notes.getvalue().startswith("catena-zero: 3/komi/standard is played by the side 3 "
                                       "komi/standard model side3.pt (Elo 500 on 3/komi/")
    output = io.StringIO()
    play_terminal(player, TerminalConfig(side=3), io.StringIO("quit\n"), output)
    assert "side3.pt (Elo 500 on 3/komi/standard" in output.getvalue()


def test_komi_standard_players_name_each_sides_file_by_its_hash() -> None:
    """The komi atlas's designer page names each side's player of today: the library's
    choice of every side's komi/standard track with the SHA-256 of that file; none with a
    fixed model file."""
    from catena_zero.data.file_history import file_sha256

    library = ModelLibrary()
    players = library.komi_standard_players()
    assert sorted(players) == list(range(2, 11))
    for side, player in players.items():
        assert player["name"] == library.choice(side)
        assert player["sha256"] == file_sha256(library.bundled_directory() / player["name"])
    assert players[4]["name"] == "side4.pt"
    assert ModelLibrary(library.bundled_directory() / "side4.pt").komi_standard_players() == {}
