"""The GTP commands of game records (docs/reference/records.md): loadsgf, printsgf and
catena-savesgf. A record `loadsgf` read is kept on the engine (`loaded_record`) so that a
later save carries its comments and analyses.
"""

from __future__ import annotations

from catena_zero.data import game_record
from catena_zero.play.gtp_protocol import GtpError, expect_arguments, parse_integer, shown


def _loadsgf(engine, args: list[str]) -> str:
    """GTP 2 `loadsgf FILE [MOVE_NUMBER]`: the record's rules, komi and moves, replayed up
    to the position before move MOVE_NUMBER (1 = the empty board; past the end: the whole
    game). A file that does not read or replay is refused and changes nothing."""
    if len(args) not in (1, 2):
        raise GtpError("syntax error: usage is loadsgf FILE [MOVE_NUMBER]")
    try:
        record = game_record.load_record(args[0])
    except game_record.RecordError as error:
        raise GtpError(f"cannot load file: {error}") from error
    count = len(record.moves)
    if len(args) == 2:
        count = min(parse_integer(args[1], "move number", 1, 10**9) - 1, count)
    game = game_record.replay(record, upto=count)
    engine.rules, engine.komi, engine.game = record.rules, record.komi, game
    engine.loaded_record = record
    engine.note_track()
    return ""


def _game_record(engine):
    record = game_record.record_from_game(engine.game)
    record.application = f"{engine.name}:{engine.version}"
    return game_record.carry_annotations(record, engine.loaded_record)


def _printsgf(engine, args: list[str]) -> str:
    """The current game as a record (docs/reference/records.md), on the reply's lines."""
    expect_arguments(args, 0, "printsgf")
    return game_record.write_record(_game_record(engine))


def _savesgf(engine, args: list[str]) -> str:
    """`catena-savesgf FILE`: write the current game's record to FILE (atomically)."""
    expect_arguments(args, 1, "catena-savesgf FILE")
    try:
        game_record.save_record(args[0], _game_record(engine))
    except OSError as error:
        raise GtpError(f"cannot write {shown(args[0])}: {error.strerror or error}") from error
    return ""


RECORD_COMMANDS = {
    "loadsgf": _loadsgf,
    "printsgf": _printsgf,
    "catena-savesgf": _savesgf,
}
