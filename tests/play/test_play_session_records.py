"""Game records in play: the session's save and load, and the terminal's save/load commands."""

from __future__ import annotations

import io

import pytest

from catena_zero.data.game_record import RecordError, load_record, replay, same_position
from catena_zero.play.session import HUMAN_NAME, MODEL_NAME, PlaySession
from catena_zero.play.terminal import TerminalConfig, play_terminal
from catena_zero.rules import BLACK, WHITE, Rules
from tests.play.test_play_session import ScriptedPlayer
from tests.play.test_play_terminal import player  # noqa: F401  (the tiny model fixture)


def test_a_saved_session_loads_into_another_and_undo_still_works(tmp_path) -> None:
    session = PlaySession(ScriptedPlayer(), Rules(side=3), komi=2, human_colour="white")
    session.human_move("E5")
    record = session.to_record(date="2026-12-01")
    assert (record.black_player, record.white_player) == (MODEL_NAME, HUMAN_NAME)
    assert same_position(replay(record), session.game)
    other = PlaySession(ScriptedPlayer(), Rules(side=4), komi=0, human_colour="black")
    assert other.load_record(record) == []  # the person (White) is to move
    assert other.human == WHITE and other.rules == Rules(side=3) and other.komi == 2
    assert same_position(other.game, session.game)
    other.undo()  # the person's E5 and the model's reply before it
    assert len(other.game.history) == 1


def test_loading_with_the_model_to_move_lets_it_play() -> None:
    session = PlaySession(ScriptedPlayer(), Rules(side=3), komi=0, human_colour="black")
    session.human_move("E5")
    record = session.to_record()
    record.moves = record.moves[:1]  # Black's E5 only: White (the model) is to move
    record.black_player, record.white_player = HUMAN_NAME, MODEL_NAME
    other = PlaySession(ScriptedPlayer(), Rules(side=3), komi=0, human_colour="white")
    assert len(other.load_record(record)) == 1
    assert other.human == BLACK and len(other.game.history) == 2


def test_nokomi_swap_is_saved_and_loaded() -> None:
    session = PlaySession(ScriptedPlayer(colour=BLACK), Rules(3, "nokomi"), komi=0,
                          human_colour="black")
    session.human_move("E5")  # the model, second player, swaps: it owns the opening stone
    record = session.to_record()
    assert record.swapped is True
    assert (record.black_player, record.white_player) == (MODEL_NAME, HUMAN_NAME)
    other = PlaySession(ScriptedPlayer(), Rules(3, "nokomi"), komi=0)
    other.load_record(record)
    assert other.human == WHITE and same_position(other.game, session.game)
    other.undo()  # back to before the person's opening stone, and before the swap
    assert other.game.history == [] and other.human == BLACK


def test_a_record_that_does_not_replay_changes_nothing() -> None:
    session = PlaySession(ScriptedPlayer(), Rules(side=3), komi=0)
    session.human_move("E5")
    record = session.to_record()
    record.result = "B+1"
    before = list(session.game.history)
    with pytest.raises(RecordError, match="RE"):
        session.load_record(record)
    assert session.game.history == before


def test_terminal_save_and_load(player, tmp_path) -> None:  # noqa: F811
    path = tmp_path / "My Game.sgf"
    output = io.StringIO()
    play_terminal(player, TerminalConfig(side=3), io.StringIO(f"E5\nsave {path}\nquit\n"),
                  output)
    assert f"saved 2 moves to {path}" in output.getvalue()
    record = load_record(path)
    assert record.black_player == HUMAN_NAME and len(record.moves) == 2
    output = io.StringIO()
    play_terminal(player, TerminalConfig(side=3, colour="white"),
                  io.StringIO(f"load {path}\nload {tmp_path / 'none.sgf'}\nsave\nquit\n"),
                  output)
    text = output.getvalue()
    assert "loaded" in text and "2 moves; you play black" in text
    assert "error: cannot read" in text and "error: usage is save FILE" in text


def test_terminal_load_of_a_finished_game_shows_the_result(player, tmp_path) -> None:  # noqa: F811
    path = tmp_path / "done.sgf"
    path.write_text("(;GM[Catena]FF[4]SZ[2]KM[1]PB[human]RE[B+3.5]"
                    ";B[A1];W[button];B[A2];W[B1];B[B3];W[C3])")
    output = io.StringIO()
    play_terminal(player, TerminalConfig(side=3), io.StringIO(f"load {path}\n"), output)
    assert "game over: B+3.5 (you win)" in output.getvalue()
