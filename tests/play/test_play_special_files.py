"""Records and special files: `loadsgf` and the terminal's `load` refuse a FIFO, a device
or a directory at once (the engine keeps answering); `catena-savesgf` and `save` refuse to
replace one; errors name the problem, never a temporary file or the file's content; a
loaded record's comments and analyses survive a save."""

from __future__ import annotations

import io
import os
import stat
import threading

import pytest

from catena_zero.data.game_record import (
    GameRecord,
    MoveAnalysis,
    RecordError,
    RecordMove,
    carry_annotations,
    load_record,
    parse_record,
    record_from_game,
    write_record,
)
from catena_zero.data.sgf_reader import character_kind
from catena_zero.play.gtp import GtpEngine
from catena_zero.play.session import PlaySession
from catena_zero.play.terminal import TerminalConfig, play_terminal
from catena_zero.rules import BLACK, Game, Rules
from tests.play.test_play_gtp import ask, ok, refused
from tests.play.test_play_session import ScriptedPlayer
from tests.play.test_play_terminal import player  # noqa: F401  (the tiny model fixture)

ANNOTATED = """(;GM[Catena]FF[4]CA[UTF-8]SZ[2]RU[komi/standard]KM[1]GN[club final]C[root note]
;B[A1]C[a fine start]CZ[wr=0.6;lead=1.5;v=32;top=A1:20,B1:12]
;W[button]C[White passes the button];B[A2]CZ[wr=0.7;v=8])
"""


def _special_files(tmp_path):
    fifo = tmp_path / "fifo.sgf"
    os.mkfifo(fifo)
    made = [(fifo, "FIFO")]
    directory = tmp_path / "folder.sgf"
    directory.mkdir()
    made.append((directory, "directory"))
    device = tmp_path / "null.sgf"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        made.append((device, "character device"))
    except OSError:
        pass
    return made


def _within(seconds: float, action):
    """action() in a thread; fails if it has not returned after `seconds` (a hang)."""
    result: dict = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", action()),
                              daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    return result["value"]


def test_loadsgf_of_a_special_file_is_refused_at_once_and_gtp_goes_on(tmp_path) -> None:
    engine = GtpEngine()
    ok(engine, "play b F6")
    for path, kind in _special_files(tmp_path):
        message = _within(5.0, lambda path=path: refused(engine, f"loadsgf {path}"))
        assert message.startswith("cannot load file:") and kind in message
        assert ok(engine, "name") == engine.name


def test_savesgf_refuses_to_replace_a_special_file(tmp_path) -> None:
    engine = GtpEngine()
    ok(engine, "play b F6")
    for path, kind in _special_files(tmp_path):
        mode = os.lstat(path).st_mode
        message = refused(engine, f"catena-savesgf {path}")
        assert kind in message and "not a regular file" in message
        assert os.lstat(path).st_mode == mode
    link = tmp_path / "link.sgf"
    link.symlink_to(tmp_path / "fifo.sgf")
    assert "FIFO" in refused(engine, f"catena-savesgf {link}")
    assert link.is_symlink()


def test_savesgf_follows_a_link_to_a_regular_file(tmp_path) -> None:
    engine = GtpEngine()
    ok(engine, "play b F6")
    target = tmp_path / "real.sgf"
    target.write_text("old")
    link = tmp_path / "link.sgf"
    link.symlink_to(target)
    ok(engine, f"catena-savesgf {link}")
    assert link.is_symlink() and len(load_record(target).moves) == 1


def test_savesgf_of_the_root_names_the_problem_not_python() -> None:
    message = refused(GtpEngine(), "catena-savesgf /")
    assert message == "cannot write /: not a regular file (a directory)"
    assert "PosixPath" not in message


def test_terminal_save_to_a_directory_shows_no_temporary_name(player, tmp_path) -> None:  # noqa: F811
    output = io.StringIO()
    folder = tmp_path / "folder"
    folder.mkdir()
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    play_terminal(player, TerminalConfig(side=3),
                  io.StringIO(f"E5\nsave {folder}\nsave {locked / 'game.sgf'}\nquit\n"), output)
    text = output.getvalue()
    assert f"error: cannot save {folder}: not a regular file (a directory)" in text
    assert ".tmp-" not in text and "Errno" not in text


def test_a_refusal_names_the_problem_not_the_content(tmp_path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("root:$6$hash:19000:0:99999:7:::\n")
    with pytest.raises(RecordError) as caught:
        load_record(secret)
    message = str(caught.value)
    assert "'r'" not in message and "root:" not in message and "$6$" not in message
    assert "a lower-case letter" in message


@pytest.mark.parametrize("char, kind", [
    ("r", "a lower-case letter"), ("Q", "an upper-case letter"), ("7", "a digit"),
    ("\x01", "a control character"), ("é", "a non-ASCII character"),
    ("$", "a punctuation character"), ("(", "'('"),
])
def test_character_kinds(char, kind) -> None:
    assert character_kind(char) == kind


def test_sgf_errors_never_quote_a_letter_or_digit_of_the_input() -> None:
    """Fuzz: whatever text is refused, the message holds no quoted letter or digit."""
    import random
    generator = random.Random(7)
    alphabet = "abcXYZ019;()[]\\ \n:$é\x00"
    for _ in range(2000):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 30)))
        try:
            parse_record(text)
        except RecordError as error:
            for char in "abcXYZ019é":
                assert f"'{char}'" not in str(error), (text, str(error))


def test_gtp_load_then_save_keeps_comments_and_analyses(tmp_path) -> None:
    source = tmp_path / "annotated.sgf"
    source.write_text(ANNOTATED)
    engine = GtpEngine()
    ok(engine, f"loadsgf {source}")
    saved = tmp_path / "saved.sgf"
    ok(engine, f"catena-savesgf {saved}")
    original, again = load_record(source), load_record(saved)
    assert again.comment == "root note" and again.game_name == "club final"
    assert [move.comment for move in again.moves] == [move.comment for move in original.moves]
    assert [move.analysis for move in again.moves] == [move.analysis for move in original.moves]
    ok(engine, "undo")
    ok(engine, "play b B1")  # the game leaves the record at move 3: that move has none
    printed = parse_record(ask(engine, "printsgf")[2:] + "\n")
    assert printed.moves[0].comment == "a fine start" and printed.moves[2].analysis is None
    ok(engine, "clear_board")
    assert parse_record(ask(engine, "printsgf")[2:] + "\n").comment == ""


def test_session_load_then_save_keeps_comments_and_analyses() -> None:
    record = parse_record(ANNOTATED)
    session = PlaySession(ScriptedPlayer(komi=1), Rules(2), komi=1)
    session.load_record(record)
    again = parse_record(write_record(session.to_record()))
    assert again.comment == "root note"
    assert again.moves[0].analysis == record.moves[0].analysis
    assert [move.comment for move in again.moves[:3]] == [m.comment for m in record.moves]


def test_carry_annotations_needs_the_same_rules_and_komi() -> None:
    game = Game(Rules(3), komi=2)
    game.play(0)
    source = GameRecord(rules=Rules(3), komi=2, comment="note",
                        moves=[RecordMove(BLACK, 0, "c", MoveAnalysis(winrate=0.5))])
    assert carry_annotations(record_from_game(game), source).moves[0].comment == "c"
    other = GameRecord(rules=Rules(3), komi=3, comment="note",
                       moves=[RecordMove(BLACK, 0, "c", MoveAnalysis(winrate=0.5))])
    carried = carry_annotations(record_from_game(game), other)
    assert carried.comment == "" and carried.moves[0].comment == ""
    assert carry_annotations(record_from_game(game), None).moves[0].comment == ""
