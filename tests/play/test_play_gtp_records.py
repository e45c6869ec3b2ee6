"""GTP game records: loadsgf (with a move number), printsgf and catena-savesgf."""

from __future__ import annotations

from catena_zero.data.game_record import load_record, parse_record, replay, same_position
from catena_zero.play.gtp import GtpEngine
from catena_zero.rules import Rules
from tests.play.test_play_gtp import ask, ok, refused

LITERAL = """(;GM[Catena]FF[4]CA[UTF-8]SZ[2]RU[komi/standard]KM[1]RE[B+3.5]
;B[A1];W[button];B[A2];W[B1];B[B3];W[C3])
"""


def test_record_commands_are_listed():
    engine = GtpEngine()
    listed = ok(engine, "list_commands").split("\n")
    for name in ("loadsgf", "printsgf", "catena-savesgf"):
        assert name in listed
        assert ok(engine, f"known_command {name}") == "true"


def test_loadsgf_replays_the_whole_game(tmp_path):
    path = tmp_path / "game.sgf"
    path.write_text(LITERAL)
    engine = GtpEngine()
    ok(engine, "play b F6")
    ok(engine, f"loadsgf {path}")
    assert engine.rules == Rules(2) and engine.komi == 1
    assert engine.game.is_over
    assert ok(engine, "final_score") == "B+3.5"
    assert ok(engine, "list_stones b") != ""


def test_loadsgf_stops_before_the_move_number(tmp_path):
    path = tmp_path / "game.sgf"
    path.write_text(LITERAL)
    engine = GtpEngine()
    ok(engine, f"loadsgf {path} 3")
    assert len(engine.game.history) == 2  # moves 1 and 2; move 3 is Black's to play
    assert ok(engine, "all_legal b").split() == ["A2", "B1", "B2", "B3", "C2", "C3"]
    ok(engine, "play b A2")
    ok(engine, f"loadsgf {path} 1")
    assert engine.game.history == []
    ok(engine, f"loadsgf {path} 99")
    assert engine.game.is_over
    assert "move number" in refused(engine, f"loadsgf {path} 0")
    assert "move number" in refused(engine, f"loadsgf {path} x")


def test_loadsgf_refuses_a_bad_file_and_changes_nothing(tmp_path):
    engine = GtpEngine()
    ok(engine, "play b F6")
    bad = tmp_path / "bad.sgf"
    bad.write_text(LITERAL.replace(";B[A2]", ";B[A1]"))
    message = refused(engine, f"loadsgf {bad}")
    assert message.startswith("cannot load file:") and "the cell is occupied" in message
    assert "cannot read" in refused(engine, f"loadsgf {tmp_path / 'missing.sgf'}")
    assert "usage" in refused(engine, "loadsgf")


def test_printsgf_and_savesgf_round_trip(tmp_path):
    engine = GtpEngine(seed=3)
    ok(engine, "boardsize 3")
    ok(engine, "catena-set-rules double longest")
    for _ in range(5):
        ok(engine, f"genmove {'b' if engine.game.to_move == 1 else 'w'}")
    text = ask(engine, "printsgf")[2:] + "\n"
    record = parse_record(text)
    assert record.rules == Rules(3, "double", "longest") and record.result is None
    path = tmp_path / "saved.sgf"
    ok(engine, f"catena-savesgf {path}")
    assert load_record(path) == record
    assert same_position(replay(record), engine.game)
    other = GtpEngine()
    ok(other, f"loadsgf {path}")
    assert same_position(other.game, engine.game)
    assert "usage" in refused(engine, "catena-savesgf")
    assert "cannot write" in refused(engine, f"catena-savesgf {tmp_path}")
