"""Game records: Catena games as SGF (FF[4]) text in this project's notation.

The format is documented in docs/reference/records.md. In short::

    (;GM[Catena]FF[4]CA[UTF-8]CV[1]AP[catena_zero:0.1.0]SZ[4]RU[komi/standard]KM[2]
     PB[human]PW[catena_zero]DT[2026-12-01]RE[W+2.5]
     ;B[D4]CZ[wr=0.48;lead=-1.5;v=64;top=D4:30,C3:20]
     ;W[C3];B[button] ...)

One game tree, no variations; the root node holds the game's properties, every later node
exactly one move (`B[cell]`, `W[cell]` or `B[button]`) with an optional comment `C[...]`
and an optional analysis `CZ[...]`. Claims are not moves (they follow from the stones), so
a record has none; each stone of a double-placement turn is its own node.

`parse_record` is strict and safe: it reads text only (nothing is evaluated), and any
defect, from a stray byte to an illegal move or a result the moves do not reach, is one
`RecordError` line naming the property or move. Every parsed record has been replayed.

The record as a value (`GameRecord`, `record_from_game`, `replay`, ...) lives in
catena_zero.data.record_model; this module exports those names too, so one import serves.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from catena_zero.data.atomic import NotRegularFileError, atomic_write_text, read_regular_file
from catena_zero.data.record_model import (
    APPLICATION,
    COLOUR_LETTERS,
    GameRecord,
    MoveAnalysis,
    RecordMove,
    carry_annotations,
    check_analysis,
    check_fields,
    record_from_actions,
    record_from_game,
    replay,
    same_position,
)
from catena_zero.data.sgf_reader import RecordError, read_game_tree, shown_value
from catena_zero.rules import BLACK, WHITE, Rules

FORMAT_VERSION = 1  # the CV[...] property; a reader refuses newer versions
MAX_RECORD_BYTES = 1_000_000  # larger inputs are refused before they are parsed

_LETTER_COLOURS = {"B": BLACK, "W": WHITE}
_ROOT_TEXT = {"PB": "black_player", "PW": "white_player", "DT": "date", "EV": "event",
              "GN": "game_name", "AP": "application"}
_ROOT_KNOWN = {"GM", "FF", "CA", "CV", "SZ", "RU", "KM", "RE", "SW", "C", *_ROOT_TEXT}
_MOVE_KNOWN = {"B", "W", "C", "CZ"}
_INTEGER = re.compile(r"[+-]?[0-9]{1,9}")
_REAL = re.compile(r"[+-]?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,3})?")
_RESULT = re.compile(r"0|[BW]\+(?:[0-9]{1,9}(?:\.[05])?)")


# ----- writing ---------------------------------------------------------------------------


def write_record(record: GameRecord) -> str:
    """The SGF text of a record (checked by replaying it first: RecordError if it is bad)."""
    check_fields(record)
    replay(record)
    board = record.rules.board
    root = [("GM", "Catena"), ("FF", "4"), ("CA", "UTF-8"), ("CV", str(FORMAT_VERSION))]
    if record.application:
        root.append(("AP", record.application))
    root += [("SZ", str(record.rules.side)),
             ("RU", f"{record.rules.game_type.value}/{record.rules.scoring.value}"),
             ("KM", str(record.komi))]
    for identifier, name in _ROOT_TEXT.items():
        if identifier != "AP" and getattr(record, name):
            root.append((identifier, getattr(record, name)))
    if record.swapped is not None:
        root.append(("SW", "yes" if record.swapped else "no"))
    if record.result is not None:
        root.append(("RE", record.result))
    if record.comment:
        root.append(("C", record.comment))
    lines = ["(;" + "".join(f"{key}[{_escape(value)}]" for key, value in root)]
    for move in record.moves:
        node = f";{COLOUR_LETTERS[move.colour]}[{board.action_name(move.action)}]"
        if move.analysis is not None and not move.analysis.is_empty():
            node += f"CZ[{_escape(format_analysis(move.analysis))}]"
        if move.comment:
            node += f"C[{_escape(move.comment)}]"
        lines.append(node)
    return "\n".join(lines) + ")\n"


def format_analysis(analysis: MoveAnalysis) -> str:
    """The CZ sub-syntax: `wr=0.61;lead=2.5;v=800;top=F6:420,E5:200` (absent keys left out)."""
    parts = []
    if analysis.winrate is not None:
        parts.append(f"wr={float(analysis.winrate)!r}")
    if analysis.score_lead is not None:
        parts.append(f"lead={float(analysis.score_lead)!r}")
    if analysis.visits is not None:
        parts.append(f"v={int(analysis.visits)}")
    if analysis.top_moves:
        parts.append("top=" + ",".join(f"{name}:{int(visits)}"
                                       for name, visits in analysis.top_moves))
    return ";".join(parts)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def save_record(path: str | os.PathLike, record: GameRecord) -> Path:
    """Write a record atomically (RecordError, and nothing written, if it is bad)."""
    text = write_record(record)
    atomic_write_text(path, text)
    return Path(path)


def load_record(path: str | os.PathLike) -> GameRecord:
    """Read and check a record file; RecordError (one line) for any problem."""
    path = Path(path)
    try:
        data = read_regular_file(path, MAX_RECORD_BYTES)
    except NotRegularFileError as error:
        raise RecordError(f"cannot read {path}: it is {error.strerror}") from error
    except OSError as error:
        raise RecordError(f"cannot read {path}: {error.strerror or error}") from error
    try:
        return parse_record(data)
    except RecordError as error:
        raise RecordError(f"{path}: {error}") from error


# ----- parsing ---------------------------------------------------------------------------


def parse_record(data: str | bytes) -> GameRecord:
    """A GameRecord from SGF text or bytes (UTF-8); RecordError (one line) if anything is
    wrong. The moves are replayed and the stated result checked."""
    if isinstance(data, bytes | bytearray):
        if len(data) > MAX_RECORD_BYTES:
            raise RecordError(f"the record is larger than {MAX_RECORD_BYTES} bytes")
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as error:
            raise RecordError(f"the record is not UTF-8 text (byte {error.start})") from error
    elif isinstance(data, str):
        text = data
        if len(text) > MAX_RECORD_BYTES:
            raise RecordError(f"the record is larger than {MAX_RECORD_BYTES} characters")
    else:
        raise RecordError(f"a record is text or bytes, got {type(data).__name__}")
    nodes = read_game_tree(text.removeprefix("\ufeff"))
    record = _record_of(nodes)
    check_fields(record)
    replay(record)
    return record


def _record_of(nodes: list[dict[str, str]]) -> GameRecord:
    root = nodes[0]
    unknown = sorted(set(root) - _ROOT_KNOWN)
    if unknown:
        moves = [key for key in unknown if key in ("B", "W")]
        if moves:
            raise RecordError(f"the root node holds a move ({moves[0]}); moves go in the "
                              f"nodes after it")
        raise RecordError(f"the root node has an unknown property {unknown[0]}")
    if root.get("GM") != "Catena":
        raise RecordError(f"GM must be Catena, got {shown_value(root.get('GM'))}")
    if root.get("FF", "4") != "4":
        raise RecordError(f"FF must be 4, got {shown_value(root.get('FF'))}")
    if root.get("CA", "UTF-8").upper() not in ("UTF-8", "UTF8"):
        raise RecordError(f"CA must be UTF-8, got {shown_value(root.get('CA'))}")
    version = _integer(root.get("CV", str(FORMAT_VERSION)), "CV")
    if not 1 <= version <= FORMAT_VERSION:
        raise RecordError(f"CV[{version}]: this reader knows record format versions "
                          f"1..{FORMAT_VERSION}")
    if "SZ" not in root:
        raise RecordError("SZ (the board side) is missing")
    side = _integer(root["SZ"], "SZ")
    rules_text = root.get("RU", "komi/standard")
    parts = rules_text.split("/")
    if len(parts) != 2:
        raise RecordError(f"RU must be GAMETYPE/SCORING, e.g. komi/standard, got "
                          f"{shown_value(rules_text)}")
    try:
        rules = Rules(side=side, game_type=parts[0], scoring=parts[1])
    except ValueError as error:
        what = "SZ" if "side" in str(error) else "RU"
        raise RecordError(f"{what}: {error}") from error
    komi = _integer(root.get("KM", "0"), "KM", allow_point_zero=True)
    result = root.get("RE")
    if result is not None and not _RESULT.fullmatch(result):
        raise RecordError(f"RE must be B+x, W+x or 0, got {shown_value(result)}")
    if result is not None and result.endswith(".0"):
        raise RecordError(f"RE {result} is written without a trailing .0")
    swapped = None
    if "SW" in root:
        if root["SW"] not in ("yes", "no"):
            raise RecordError(f"SW must be yes or no, got {shown_value(root['SW'])}")
        swapped = root["SW"] == "yes"
    moves = [_move_of(node, index + 1, rules) for index, node in enumerate(nodes[1:])]
    texts = {name: root.get(identifier, "") for identifier, name in _ROOT_TEXT.items()}
    if "AP" not in root:
        texts["application"] = ""
    return GameRecord(rules=rules, komi=komi, moves=moves, result=result, swapped=swapped,
                      comment=root.get("C", ""), **texts)


def _move_of(node: dict[str, str], number: int, rules: Rules) -> RecordMove:
    unknown = sorted(set(node) - _MOVE_KNOWN)
    if unknown:
        raise RecordError(f"move {number}: unknown property {unknown[0]}")
    colours = [key for key in ("B", "W") if key in node]
    if len(colours) != 1:
        raise RecordError(f"move {number}: a node after the root holds exactly one move "
                          f"(B[...] or W[...]), found {len(colours)}")
    letter = colours[0]
    name = node[letter]
    try:
        action = rules.board.parse_action(name)
    except ValueError as error:
        raise RecordError(f"move {number} ({letter}{shown_value(name)}): "
                          f"{error}") from error
    analysis = _parse_analysis(node["CZ"], rules, number) if "CZ" in node else None
    return RecordMove(_LETTER_COLOURS[letter], action, node.get("C", ""), analysis)


def _parse_analysis(text: str, rules: Rules, number: int) -> MoveAnalysis:
    what = f"move {number} CZ"
    values: dict[str, str] = {}
    for part in text.split(";"):
        key, equals, value = part.partition("=")
        key = key.strip()
        if not equals or key not in ("wr", "lead", "v", "top"):
            raise RecordError(f"{what}: expected wr=, lead=, v= or top=, got "
                              f"{shown_value(part, brackets=False)}")
        if key in values:
            raise RecordError(f"{what}: {key} appears twice")
        values[key] = value.strip()
    fields: dict = {}
    for key, name in (("wr", "winrate"), ("lead", "score_lead")):
        if key in values:
            if not _REAL.fullmatch(values[key]):
                raise RecordError(f"{what}: {key} must be a number, got "
                                  f"{shown_value(values[key], brackets=False)}")
            fields[name] = float(values[key])
    if "v" in values:
        fields["visits"] = _integer(values["v"], f"{what} v")
    if "top" in values:
        top = []
        for entry in values["top"].split(",") if values["top"] else []:
            move, colon, visits = entry.partition(":")
            if not colon:
                raise RecordError(f"{what}: a top move is MOVE:VISITS, got "
                                  f"{shown_value(entry, brackets=False)}")
            try:
                name = rules.board.action_name(rules.board.parse_action(move.strip()))
            except ValueError as error:
                raise RecordError(f"{what}: top move {shown_value(move, brackets=False)}: "
                                  f"{error}") from error
            top.append((name, _integer(visits.strip(), f"{what} top visits")))
        fields["top_moves"] = tuple(top)
    analysis = MoveAnalysis(**fields)
    check_analysis(analysis, rules, what)
    return analysis


def _integer(text: str, what: str, allow_point_zero: bool = False) -> int:
    value = text.strip()
    if allow_point_zero and value.endswith(".0"):
        value = value[:-2]
    if not _INTEGER.fullmatch(value):
        raise RecordError(f"{what} must be a whole number, got {shown_value(text, brackets=False)}")
    return int(value)


__all__ = ["APPLICATION", "FORMAT_VERSION", "MAX_RECORD_BYTES", "GameRecord", "MoveAnalysis",
           "RecordError", "RecordMove", "carry_annotations", "format_analysis", "load_record",
           "parse_record", "record_from_actions", "record_from_game", "replay", "same_position",
           "save_record", "write_record"]
