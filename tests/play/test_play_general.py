"""One size-general model plays every side and variant (GTP, web, terminal), says so when a
track is outside its training, and is preferred among the bundled models."""

from __future__ import annotations

import io
import itertools
import shutil

import pytest
import torch

from catena_zero.cli.gtp import build_engine
from catena_zero.export.model_file import (
    ModelTrack,
    load_model_file,
    metadata_for,
    save_model_file,
)
from catena_zero.play import bundled
from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.gtp import GtpEngine
from catena_zero.play.gtp_analysis import install_model_commands
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.play.terminal import TerminalConfig, play_terminal
from catena_zero.play.web_games import PlayService
from catena_zero.rules import GameType, Rules, Scoring
from tests.export.tiny_model import (
    GENERAL_TRACKS,
    tiny_general_model_file,
    tiny_general_network,
    tiny_model_file,
)
from tests.play.web_helpers import call, running_server

VARIANTS = [(game_type.value, scoring.value) for game_type in GameType for scoring in Scoring]


@pytest.fixture(scope="module")
def player() -> ModelPlayer:
    torch.set_num_threads(1)
    library = ModelLibrary(tiny_general_model_file(program=False))
    return ModelPlayer(library, PlayerConfig(simulations=1, komi_refine=0))


def gtp_engine(player: ModelPlayer, notes: io.StringIO) -> GtpEngine:
    engine = GtpEngine(player, rules=Rules(side=3), note_stream=notes)
    install_model_commands(engine, player)
    return engine


def reply(engine: GtpEngine, line: str) -> str:
    text = engine.handle_line(line)
    assert text.startswith("=") and text.endswith("\n\n"), (line, text)
    return text[1:].strip()


def test_gtp_genmove_is_legal_on_every_side_and_variant(player: ModelPlayer) -> None:
    notes = io.StringIO()
    engine = gtp_engine(player, notes)
    noted = 0
    for side, (game_type, scoring) in itertools.product(range(2, 11), VARIANTS):
        reply(engine, f"boardsize {side}")
        reply(engine, f"catena-set-rules {game_type} {scoring}")
        legal = reply(engine, "all_legal b").split()
        move = reply(engine, "genmove b")
        assert move in legal, (side, game_type, scoring, move)
        assert engine.rules == Rules(side, game_type, scoring) and len(engine.game.history) == 1
        # The last change of rules says whether these rules are outside the training.
        new_lines = notes.getvalue().splitlines()[noted:]
        noted += len(new_lines)
        track = f"{side}/{game_type}/{scoring}"
        said = any(f" {track} is outside the training" in line for line in new_lines)
        assert said == (track not in GENERAL_TRACKS), (track, new_lines)


def test_gtp_notes_go_to_stderr_once_per_rules(player: ModelPlayer) -> None:
    notes = io.StringIO()
    engine = gtp_engine(player, notes)
    reply(engine, "genmove b")  # side 3 komi/standard: trained on
    reply(engine, "boardsize 3")
    assert notes.getvalue() == ""
    reply(engine, "boardsize 7")
    assert notes.getvalue() == ("catena-zero: note: 7/komi/standard is outside the training "
                                "of the model tiny-general-no-program.pt (trained on "
                                "3/komi/standard, 4/nokomi/standard); it plays, but its "
                                "strength there is unmeasured\n")
    reply(engine, "boardsize 7")
    reply(engine, "genmove b")
    reply(engine, "catena-set-rules nokomi standard")  # 7/nokomi: also outside
    reply(engine, "boardsize 4")  # 4/nokomi/standard: trained on
    assert notes.getvalue().count("\n") == 2 and "7/nokomi/standard" in notes.getvalue()
    # Rules given at start are noted at the first genmove.
    late = io.StringIO()
    engine = GtpEngine(player, rules=Rules(side=8, game_type="double"), note_stream=late)
    assert late.getvalue() == ""
    reply(engine, "genmove b")
    assert "8/double/standard is outside" in late.getvalue()


def test_cli_gtp_keeps_stdout_to_the_protocol(capsys) -> None:
    path = tiny_general_model_file(program=False)
    engine = build_engine([f"model={path}", "player.simulations=1"])
    assert engine.rules.side == 3  # the first track's board
    output = io.StringIO()
    engine.run(io.StringIO("1 boardsize 7\n2 genmove b\n3 boardsize 3\n4 genmove b\nquit\n"),
               output)
    answers = output.getvalue().split("\n\n")
    assert answers[0] == "=1" and answers[1].startswith("=2 ") and answers[2] == "=3"
    assert "note" not in output.getvalue()
    err = capsys.readouterr().err
    # one start-up line (how the player searches, how long loading took), then the note
    assert err.count("\n") == 2 and err.startswith("catena-zero gtp: 1 simulations")
    assert "7/komi/standard is outside the training" in err


@pytest.mark.parametrize("side", [3, 5, 8])
def test_choose_komi_on_every_side(player: ModelPlayer, side: int) -> None:
    engine = gtp_engine(player, io.StringIO())
    reply(engine, f"boardsize {side}")
    komi = int(reply(engine, "catena-choose-komi"))
    assert 0 <= komi <= 15
    reply(engine, f"komi {komi}")
    assert reply(engine, "catena-choose-color") in ("black", "white")
    searched = ModelPlayer(player.library, PlayerConfig(simulations=2, komi_refine=2))
    assert 0 <= searched.choose_komi(Rules(side=side)) <= 15


def test_web_info_offers_every_side_and_notes_off_track_games(player: ModelPlayer) -> None:
    with running_server(player, idle_seconds=0) as server:
        port = server.server_address[1]
        status, info = call(port, "GET", "/api/info")
        assert status == 200 and info["sides"] == list(range(2, 11))
        assert info["default_side"] == 3 and info["tracks"] == list(GENERAL_TRACKS)
        assert len(info["game_types"]) * len(info["scorings"]) == 9
        assert len(set(info["models"].values())) == 1  # one model plays them all
        assert "size-general model" in info["models"]["10"]
        status, state = call(port, "POST", "/api/new", {"side": 7, "komi": 3})
        assert status == 200 and "7/komi/standard is outside" in state["track_note"]
        status, state = call(port, "POST", "/api/new", {"side": 4, "game_type": "nokomi"})
        assert status == 200 and state["track_note"] is None


def test_the_page_shows_the_track_note() -> None:
    from catena_zero.play.web import STATIC_DIRECTORY

    assert 'id="track-note"' in (STATIC_DIRECTORY / "index.html").read_text()
    script = (STATIC_DIRECTORY / "app.js").read_text()
    assert '$("track-note").textContent = state.track_note' in script
    assert "info.default_side" in script


def test_terminal_prints_the_note_once_at_start(player: ModelPlayer) -> None:
    output = io.StringIO()
    play_terminal(player, TerminalConfig(side=7), io.StringIO("quit\n"), output)
    assert output.getvalue().count("7/komi/standard is outside the training") == 1
    output = io.StringIO()
    play_terminal(player, TerminalConfig(side=4, game_type="nokomi"), io.StringIO("quit\n"),
                  output)
    assert "outside the training" not in output.getvalue()


def test_a_bundled_general_model_is_preferred(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(bundled, "BUNDLED_DIRECTORY", tmp_path)
    shutil.copy(tiny_model_file(3, program=False), tmp_path / "side3.pt")
    per_side = ModelLibrary()
    assert per_side.sides() == [3] and per_side.get(3).metadata.format_version == 2
    assert per_side.note(Rules(side=3)) is None and per_side.note(Rules(side=5)) is None
    shutil.copy(tiny_general_model_file(program=False), tmp_path / "general.pt")
    library = ModelLibrary()
    assert library.sides() == list(range(2, 11)) and bundled.default_side(library) == 6
    assert library.get(3).metadata.is_general and library.get(9) is library.get(3)
    assert library.trained_tracks() == list(GENERAL_TRACKS)
    assert "6/komi/standard is outside" in library.note(Rules(side=6))
    service = PlayService(ModelPlayer(library, PlayerConfig(simulations=1)))
    assert service.info()["sides"] == list(range(2, 11))
    (tmp_path / "general.pt").write_bytes(b"broken")
    with pytest.raises(ValueError, match="truncated or not a model"):
        ModelLibrary().get(3)


def test_a_per_side_model_file_plays_every_side_with_a_note() -> None:
    library = ModelLibrary(tiny_model_file(3, program=False))
    assert library.sides() == list(range(2, 11)) and library.get(10) is library.fixed
    assert library.note(Rules(side=3)) is None
    assert "10/komi/standard is outside" in library.note(Rules(side=10))
    assert library.describe(10) == ("side 3 komi/standard model tiny-side3-no-program.pt "
                                    "(unrated, 0 steps)")


def test_the_shipped_version_2_champions_still_load_and_play() -> None:
    from catena_zero.rules import Game

    assert bundled.bundled_sides() == [4, 6]
    for side in bundled.bundled_sides():
        model = load_model_file(bundled.bundled_model_path(side))
        assert model.metadata.format_version == 2 and model.metadata.home_side == side
        player = ModelPlayer(ModelLibrary(bundled.bundled_model_path(side)),
                             PlayerConfig(simulations=2))
        for game in (Game(Rules(side=side)), Game(Rules(side=side + 1, game_type="double"))):
            assert player.genmove(game) in game.legal_actions()
        assert player.track_note(Rules(side=side)) is None


def test_the_shipped_general_champion_plays_every_side_and_variant() -> None:
    """The default everywhere: with no model file, every side 2..10 and every variant gets a
    legal move from the bundled general model, and its own tracks carry no note."""
    from catena_zero.rules import Game

    library = ModelLibrary()
    assert bundled.bundled_general_path().is_file() and library.plays_every_side()
    # unrated tracks (side 2 is no model's) go to general.pt; every other track to a
    # size-general net too, but where a side's own champion is rated best
    assert library.get(2).path.name == "general.pt" and library.get(3) is library.get(2)
    for side in range(2, 11):
        assert library.choice(Rules(side=side)) == f"side{side}.pt" or \
            library.get(Rules(side=side)).metadata.is_general
    player = ModelPlayer(library, PlayerConfig(simulations=2))
    for side in range(2, 11):
        for game_type in ("komi", "nokomi", "double"):
            for scoring in ("standard", "longest", "quadratic"):
                game = Game(Rules(side=side, game_type=game_type, scoring=scoring))
                assert player.genmove(game) in game.legal_actions(), (side, game_type, scoring)
    assert player.track_note(Rules(side=6)) is None
    assert player.track_note(Rules(side=4, game_type="double", scoring="longest")) is None
    assert "2/komi/standard is outside" in player.track_note(Rules(side=2))


def test_gtp_with_no_model_answers_genmove_on_every_side_and_variant() -> None:
    """`catena-zero gtp` with no model: the bundled general champion answers a legal move
    on every side 2..10 and every variant (`boardsize` then `genmove`)."""
    engine = build_engine(["player.simulations=2"])
    lines = []
    for number, (side, game_type, scoring) in enumerate(itertools.product(
            range(2, 11), ("komi", "nokomi", "double"), ("standard", "longest", "quadratic"))):
        lines += [f"boardsize {side}", f"catena-set-rules {game_type} {scoring}",
                  "clear_board", f"{number} genmove b"]
    output = io.StringIO()
    engine.run(io.StringIO("\n".join(lines) + "\nquit\n"), output)
    answers = [answer for answer in output.getvalue().split("\n\n") if answer]
    moves = [answer for answer in answers if answer.split(" ")[0][1:].isdigit()
             and not answer.startswith("=\n")]
    assert not [answer for answer in answers if answer.startswith("?")], answers
    assert len([answer for answer in moves if answer[0] == "="]) == 81


def test_a_general_model_is_described_by_the_elo_of_the_side_asked(tmp_path) -> None:
    net = tiny_general_network()
    tracks = [ModelTrack.of("3/komi/standard", elo=120.0, elo_reference="greedy = 0"),
              ModelTrack.of("6/komi/standard", elo=338.0, elo_reference="greedy = 0"),
              ModelTrack.of("7/komi/standard")]
    metadata = metadata_for(net, tracks, network_config=net.config.to_dict(),
                            training_steps=5, source="test")
    library = ModelLibrary(save_model_file(net, metadata, tmp_path / "rated.pt", program=False))
    assert "Elo 338 on 6/komi/standard" in library.describe(6)
    assert "Elo 120 on 3/komi/standard" in library.describe(3)
    assert "Elo 120 on 3/komi/standard" in library.describe(7)  # unrated side: the first
