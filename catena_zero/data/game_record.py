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
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from catena_zero import __version__
from catena_zero.data.atomic import NotRegularFileError, atomic_write_text, read_regular_file
from catena_zero.data.sgf_reader import RecordError, read_game_tree, shown_value
from catena_zero.rules import BLACK, EMPTY, WHITE, Game, GameType, Rules

FORMAT_VERSION = 1  # the CV[...] property; a reader refuses newer versions
MAX_RECORD_BYTES = 1_000_000  # larger inputs are refused before they are parsed
MAX_TEXT_CHARS = 20_000  # a comment or other text value longer than this is refused
MAX_NAME_CHARS = 200  # player names, date, event: one line each
MAX_TOP_MOVES = 64  # entries of an analysis's top-move list
APPLICATION = f"catena_zero:{__version__}"

_COLOUR_LETTERS = {BLACK: "B", WHITE: "W"}
_LETTER_COLOURS = {"B": BLACK, "W": WHITE}
_ROOT_TEXT = {"PB": "black_player", "PW": "white_player", "DT": "date", "EV": "event",
              "GN": "game_name", "AP": "application"}
_ROOT_KNOWN = {"GM", "FF", "CA", "CV", "SZ", "RU", "KM", "RE", "SW", "C", *_ROOT_TEXT}
_MOVE_KNOWN = {"B", "W", "C", "CZ"}
_INTEGER = re.compile(r"[+-]?[0-9]{1,9}")
_REAL = re.compile(r"[+-]?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,3})?")
_RESULT = re.compile(r"0|[BW]\+(?:[0-9]{1,9}(?:\.[05])?)")


@dataclass(frozen=True)
class MoveAnalysis:
    """What a search said before a move (the `CZ[...]` property); any field may be absent."""

    winrate: float | None = None  # the mover's win probability, 0..1
    score_lead: float | None = None  # expected final margin from the mover's view
    visits: int | None = None  # root visits of the search
    top_moves: tuple[tuple[str, int], ...] = ()  # (move name, visits), best first

    def is_empty(self) -> bool:
        return (self.winrate is None and self.score_lead is None and self.visits is None
                and not self.top_moves)


@dataclass(frozen=True)
class RecordMove:
    """One node after the root: a colour and its action (cell index, or the button)."""

    colour: int  # BLACK or WHITE
    action: int  # cell index 0..C-1, or C for the button
    comment: str = ""
    analysis: MoveAnalysis | None = None


@dataclass
class GameRecord:
    """A whole game: rules (side, game type, scoring), komi, moves and what is known
    about it. `result` is the ruling-6 string ("B+3", "W+0.5", "0") once the game is over,
    None before. `swapped` (nokomi only): whether the second player took the opening
    stone; None while undecided or unknown. The player names are those of the colours at
    the end of the game, after any swap."""

    rules: Rules
    komi: int = 0
    moves: list[RecordMove] = field(default_factory=list)
    result: str | None = None
    black_player: str = ""
    white_player: str = ""
    date: str = ""
    event: str = ""
    game_name: str = ""
    comment: str = ""
    swapped: bool | None = None
    application: str = APPLICATION

    @property
    def actions(self) -> list[int]:
        return [move.action for move in self.moves]

    @property
    def side(self) -> int:
        return self.rules.side


def record_from_game(game: Game, black_player: str = "", white_player: str = "",
                     date: str = "", swapped: bool | None = None,
                     analyses: list[MoveAnalysis | None] | None = None,
                     comments: list[str] | None = None, event: str = "") -> GameRecord:
    """The record of a `Game` as it stands (its result filled in when it is over)."""
    colours = _colours_of(game.rules, game.komi, game.history)
    moves = []
    for index, (colour, action) in enumerate(zip(colours, game.history, strict=True)):
        analysis = analyses[index] if analyses is not None and index < len(analyses) else None
        if analysis is not None and analysis.is_empty():
            analysis = None  # an empty analysis is written as none
        comment = comments[index] if comments is not None and index < len(comments) else ""
        moves.append(RecordMove(colour, int(action), comment or "", analysis))
    return GameRecord(rules=game.rules, komi=int(game.komi), moves=moves,
                      result=game.result_string() if game.is_over else None,
                      black_player=black_player, white_player=white_player, date=date,
                      event=event, swapped=swapped)


def carry_annotations(record: GameRecord, source: GameRecord | None) -> GameRecord:
    """`record` with the annotations of `source` (a record it was loaded from) where the two
    games agree: the root comment, event and game name when the rules and komi are the same,
    and each move's comment and analysis (`CZ`) along the moves both records share from the
    start. Moves played after the load, or after an undo took the game elsewhere, keep their
    own. `record` is changed in place and returned."""
    if source is None or source.rules != record.rules or source.komi != record.komi:
        return record
    for name in ("comment", "event", "game_name"):
        if not getattr(record, name):
            setattr(record, name, getattr(source, name))
    for index, (move, loaded) in enumerate(zip(record.moves, source.moves, strict=False)):
        if (move.colour, move.action) != (loaded.colour, loaded.action):
            break
        record.moves[index] = dataclasses.replace(
            move, comment=move.comment or loaded.comment,
            analysis=move.analysis if move.analysis is not None else loaded.analysis)
    return record


def record_from_actions(rules: Rules, komi: int, actions, **properties) -> GameRecord:
    """The record of a game given by its actions (they are replayed, so must be legal)."""
    game = Game(rules, komi=int(komi))
    for index, action in enumerate(actions):
        try:
            game.play(int(action))
        except ValueError as error:
            raise RecordError(f"move {index + 1}: {error}") from error
    return record_from_game(game, **properties)


def _colours_of(rules: Rules, komi: int, actions) -> list[int]:
    game = Game(rules, komi=komi)
    colours = []
    for action in actions:
        colours.append(game.to_move)
        game.play(int(action))
    return colours


# ----- writing ---------------------------------------------------------------------------


def write_record(record: GameRecord) -> str:
    """The SGF text of a record (checked by replaying it first: RecordError if it is bad)."""
    _check_fields(record)
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
        node = f";{_COLOUR_LETTERS[move.colour]}[{board.action_name(move.action)}]"
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


def _check_fields(record: GameRecord) -> None:
    """Field types and ranges of a record (RecordError naming the field)."""
    if not isinstance(record.rules, Rules):
        raise RecordError(f"rules must be a Rules, got {type(record.rules).__name__}")
    try:
        record.rules.validate_komi(record.komi)
    except ValueError as error:
        raise RecordError(f"KM: {error}") from error
    for name in ("black_player", "white_player", "date", "event", "game_name", "application"):
        _check_simple_text(getattr(record, name), name)
    _check_text(record.comment, "comment")
    if record.swapped is not None and record.rules.game_type != GameType.NOKOMI:
        raise RecordError("SW: a swap exists only in the nokomi game type")
    if record.swapped is not None and not record.moves:
        raise RecordError("SW: the swap is decided after the opening stone, but there is no move")
    for index, move in enumerate(record.moves):
        if move.colour not in (BLACK, WHITE):
            raise RecordError(f"move {index + 1}: colour must be BLACK or WHITE")
        _check_text(move.comment, f"move {index + 1} comment")
        if move.analysis is not None:
            _check_analysis(move.analysis, record.rules, f"move {index + 1} CZ")


def _check_simple_text(text, what: str) -> None:
    if not isinstance(text, str):
        raise RecordError(f"{what} must be text")
    if len(text) > MAX_NAME_CHARS:
        raise RecordError(f"{what} is longer than {MAX_NAME_CHARS} characters")
    if any(ch < " " or ch == "\x7f" or "\ud800" <= ch <= "\udfff" for ch in text):
        raise RecordError(f"{what} must be one line without control characters")


def _check_text(text, what: str) -> None:
    if not isinstance(text, str):
        raise RecordError(f"{what} must be text")
    if len(text) > MAX_TEXT_CHARS:
        raise RecordError(f"{what} is longer than {MAX_TEXT_CHARS} characters")
    if any((ch < " " and ch not in "\n\t") or ch == "\x7f" or "\ud800" <= ch <= "\udfff"
           for ch in text):
        raise RecordError(f"{what} holds a control character or a lone surrogate")


def _check_analysis(analysis: MoveAnalysis, rules: Rules, what: str) -> None:
    for name in ("winrate", "score_lead"):
        value = getattr(analysis, name)
        if value is not None and (isinstance(value, bool) or not math.isfinite(float(value))):
            raise RecordError(f"{what}: {name} must be a finite number, got {value!r}")
    if analysis.winrate is not None and not 0.0 <= float(analysis.winrate) <= 1.0:
        raise RecordError(f"{what}: win rate must be in 0..1, got {analysis.winrate!r}")
    if analysis.visits is not None and not 0 <= int(analysis.visits) < 10**9:
        raise RecordError(f"{what}: visits must be in 0..999999999, got {analysis.visits!r}")
    if len(analysis.top_moves) > MAX_TOP_MOVES:
        raise RecordError(f"{what}: more than {MAX_TOP_MOVES} top moves")
    for name, visits in analysis.top_moves:
        try:
            rules.board.parse_action(name)
        except ValueError as error:
            raise RecordError(f"{what}: top move {name!r}: {error}") from error
        if name != name.strip().upper() and name != "button":
            raise RecordError(f"{what}: top move {name!r} must be written as "
                              f"{rules.board.action_name(rules.board.parse_action(name))}")
        if not 0 <= int(visits) < 10**9:
            raise RecordError(f"{what}: top move {name} visits must be in 0..999999999")


# ----- replaying -------------------------------------------------------------------------


def replay(record: GameRecord, upto: int | None = None) -> Game:
    """Play the record's moves (the first `upto` of them when given) on a fresh Game,
    checking each colour and legality; with all moves played, a stated result must be the
    game's. Returns the Game; RecordError naming the move and the reason otherwise."""
    try:
        game = Game(record.rules, komi=record.komi)
    except ValueError as error:
        raise RecordError(f"KM: {error}") from error
    count = len(record.moves) if upto is None else upto
    if not 0 <= count <= len(record.moves):
        raise RecordError(f"move number {upto} is outside 0..{len(record.moves)}")
    board = record.rules.board
    for index, move in enumerate(record.moves[:count]):
        number = index + 1
        if (not isinstance(move.action, int | np.integer)
                or not 0 <= move.action < board.num_actions):
            raise RecordError(f"move {number}: action {move.action!r} is not on the board")
        name = board.action_name(int(move.action))
        if game.is_over:
            raise RecordError(f"move {number} ({_COLOUR_LETTERS.get(move.colour, '?')}[{name}]):"
                              f" the game is already over")
        if move.colour != game.to_move:
            raise RecordError(f"move {number} ({_COLOUR_LETTERS.get(move.colour, '?')}[{name}]):"
                              f" it is {'Black' if game.to_move == BLACK else 'White'}'s turn")
        if int(move.action) not in game.legal_actions():
            raise RecordError(f"move {number} ({_COLOUR_LETTERS[move.colour]}[{name}]) is "
                              f"illegal: {_why_illegal(game, int(move.action))}")
        game.play(int(move.action))
    if upto is None and record.result is not None:
        if not game.is_over:
            raise RecordError(f"RE[{record.result}]: the game is not over after "
                              f"{len(record.moves)} moves")
        actual = game.result_string()
        if actual != record.result:
            raise RecordError(f"RE[{record.result}]: the moves give {actual}")
    return game


def _why_illegal(game: Game, action: int) -> str:
    board = game.board
    if action == board.button_action:
        if not game.rules.has_button:
            return "the double game type has no button"
        if int(game.state.button[0]) != EMPTY:
            return "the button is already taken"
        if game.rules.game_type == GameType.NOKOMI and not game.history:
            return "the first move of nokomi must place a stone"
        return "the button cannot be taken now"
    if int(game.state.stones[0, action]) != EMPTY:
        return "the cell is occupied"
    if bool(game.state.legal_cells[0, action]):
        return "no legal second stone of the turn would follow it"
    return "the stone would not leave a ribbon (a branch or a ring)"


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
    _check_fields(record)
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
    _check_analysis(analysis, rules, what)
    return analysis


def _integer(text: str, what: str, allow_point_zero: bool = False) -> int:
    value = text.strip()
    if allow_point_zero and value.endswith(".0"):
        value = value[:-2]
    if not _INTEGER.fullmatch(value):
        raise RecordError(f"{what} must be a whole number, got {shown_value(text, brackets=False)}")
    return int(value)


def same_position(first: Game, second: Game) -> bool:
    """Whether two games stand at the same position (stones, turn, button, komi, end)."""
    return (first.rules == second.rules and first.komi == second.komi
            and np.array_equal(first.state.stones, second.state.stones)
            and first.to_move == second.to_move and first.is_over == second.is_over
            and int(first.state.button[0]) == int(second.state.button[0])
            and first.stones_left == second.stones_left)


__all__ = ["FORMAT_VERSION", "MAX_RECORD_BYTES", "GameRecord", "MoveAnalysis", "RecordError",
           "RecordMove", "format_analysis", "load_record", "parse_record",
           "record_from_actions", "record_from_game", "replay", "same_position",
           "save_record", "write_record"]
