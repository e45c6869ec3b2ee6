"""GTP version 2 for Catena, as RULES.md's "Text protocol" section specifies.

Extension hook (for model-backed players and analysis commands in other modules):

    engine = GtpEngine(player=None, name="catena_zero", version="0.1.0")
    engine.player = my_player                    # any object with genmove(game) -> int action
    engine.register_command("my-cmd", handler)   # handler(engine, args: list[str]) -> str
    engine.run(sys.stdin, sys.stdout)            # until `quit` or end of input

- `player.genmove(game)` gets the current `catena_zero.rules.Game` (never to be mutated)
  and returns an action index (a cell index, or the board's `button_action`); the engine
  checks it is legal and plays it. Default: `RandomPlayer`, uniform over legal moves,
  drawn from a seeded numpy Generator.
- A handler returns the response text (may be multi-line, no blank lines) and raises
  `GtpError(message)` for a `? message` reply. `engine.game`, `engine.rules` and
  `engine.komi` are the current game, rules and komi; `engine.parse_colour(text)` reads
  a colour. If any handler raises, the engine restores the rules, komi and move history
  it had before the command, so a refused command changes nothing.
- `run_gtp(player=None, stdin=sys.stdin, stdout=sys.stdout)` is the convenience entry
  point (`python -m catena_zero.play.gtp` runs it with the random player).
- A player with `track_note(rules) -> str | None` (ModelPlayer: a board and variant outside
  the model's training) has that one line written to `note_stream` (default stderr, never
  stdout, which carries only the protocol) when `boardsize` or `catena-set-rules` changes
  the rules, or at the first `genmove` under rules not yet noted; once per rules.

Framing: each input line is cleaned as GTP 2 says (control characters dropped, tabs to
spaces, `#` comments cut, blank lines skipped); an optional numeric id (ASCII digits) is
echoed in the reply `=id text` / `?id message`, and every reply ends with a blank line.
Input is hostile until proven otherwise: a line longer than MAX_LINE_CHARS (characters, or
bytes on a binary stream) is refused with `?` and skipped (read in bounded pieces, never
held whole); every command reads its numbers with `parse_number`: ASCII digits only (no
`²`, `５`, `١`, `1_0`, `1e1`, `nan`), a sign only where negatives are allowed; what a
refusal echoes of the input is cut to ECHO_CHARS characters and escaped to ASCII;
undecodable input bytes become U+FFFD.
Choices left open by RULES.md: `komi` accepts `7` or `7.0` but not `6.5` and keeps the
stones on the board; `catena-set-rules` and `boardsize` clear the board and reset the komi
to 0 only if it is outside the new range; `all_legal` for the colour not to move answers
empty (that colour has no legal move now); `genmove` and `play` on a finished game are
refused; `final_score` before the end is refused.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from typing import Protocol, TextIO

import numpy as np

import catena_zero
from catena_zero.data import game_record
from catena_zero.play.time_control import GameClock, moves_left_estimate
from catena_zero.rules import BLACK, WHITE, Game, Rules

PROTOCOL_VERSION = "2"
COLOUR_WORDS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
COLOUR_LABELS = {BLACK: "Black", WHITE: "White"}
MAX_LINE_CHARS = 65536  # longer command lines are refused and skipped
ECHO_CHARS = 40  # at most this much of a client's text is echoed back in a refusal
MAX_MESSAGE_CHARS = 400  # a `?` message is cut here, whatever a handler put in it
ID_PATTERN = re.compile(r"[0-9]{1,18}")  # longer ids are not numbers a controller sends
# GTP numbers: ASCII digits, a '.' fraction where a command takes decimals (7, 7.5, 7., .5),
# a leading sign only where a command allows negatives. ([0-9] is ASCII in `re`; \d is not.)
NUMBER_PATTERNS = {  # (signed, decimal) -> pattern
    (False, False): re.compile(r"[0-9]+"),
    (True, False): re.compile(r"[+-]?[0-9]+"),
    (False, True): re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"),
    (True, True): re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"),
}
NUMBER_SHAPES = {  # what a refusal says a number must look like
    (False, False): "a whole number in ASCII digits (like 12)",
    (True, False): "a whole number in ASCII digits (like 12 or -3)",
    (False, True): "a number in ASCII digits (like 12 or 12.5)",
    (True, True): "a number in ASCII digits (like 7, 7.0 or -3)",
}
MAX_DIGITS = 9  # larger numbers are out of every range here; int() is never asked for more


class GtpError(Exception):
    """Raised by a command handler; the engine answers `? message` and changes nothing."""


class Player(Protocol):
    def genmove(self, game: Game) -> int:
        """Return a legal action of the player to move in `game`."""


class RandomPlayer:
    """Uniformly random legal move; reproducible from `seed`."""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def genmove(self, game: Game, seconds: float | None = None) -> int:
        return int(self.rng.choice(np.asarray(game.legal_actions())))


Handler = Callable[["GtpEngine", list[str]], str]


def shown(text: str) -> str:
    """A client's text as a refusal may echo it: at most ECHO_CHARS characters, ASCII."""
    text = str(text)
    cut = text[:ECHO_CHARS] + ("..." if len(text) > ECHO_CHARS else "")
    return cut.encode("ascii", "backslashreplace").decode("ascii")


def parse_number(text: str, name: str, low: float, high: float, *, decimal: bool = False,
                 signed: bool | None = None) -> int | float:
    """A GTP number in low..high: an int, or with `decimal` a float (a '.' fraction
    allowed); GtpError naming `name` otherwise. Every command reads its numbers here.

    Only ASCII digits, and a leading sign only when `signed` (by default when low < 0; a
    command whose GTP argument may be negative, like komi, passes True). Python's int() and
    float() also read '\uff15', '\u0661', '1_0', '1e3', 'nan' and 'inf', none of which a
    GTP controller means."""
    signed = low < 0 if signed is None else signed
    if not NUMBER_PATTERNS[signed, decimal].fullmatch(text):
        raise GtpError(f"{name} must be {NUMBER_SHAPES[signed, decimal]}, got "
                       f"{shown(text)!r}")
    if len(text.lstrip("+-").split(".", 1)[0].lstrip("0")) > MAX_DIGITS:
        raise GtpError(f"{name} must be in {_bound(low)}..{_bound(high)}, got {shown(text)}")
    value = float(text) if decimal else int(text)
    if not low <= value <= high:
        raise GtpError(f"{name} must be in {_bound(low)}..{_bound(high)}, got {shown(text)}")
    return value


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def parse_integer(text: str, name: str, low: int, high: int) -> int:
    """A whole number in low..high (parse_number without a fraction)."""
    return int(parse_number(text, name, low, high))


def _clean_line(line: str) -> str:
    """GTP 2 preprocessing: drop control characters except tab, tab -> space, cut comments."""
    line = "".join(ch for ch in line if ch == "\t" or ch >= " " and ch != "\x7f")
    line = line.replace("\t", " ")
    return line.split("#", 1)[0].strip()


class GtpEngine:
    """One GTP session over one `Game`; see the module docstring for the extension hook."""

    def __init__(self, player: Player | None = None, name: str = "catena_zero",
                 version: str = catena_zero.__version__, rules: Rules | None = None,
                 komi: int = 0, seed: int | None = None, note_stream: TextIO | None = None):
        self.player = player if player is not None else RandomPlayer(seed)
        self.note_stream = note_stream  # where track notes go; None = sys.stderr
        self.noted_rules: Rules | None = None  # the rules the last track note was about
        self.name = name
        self.version = version
        self.rules = rules if rules is not None else Rules()
        self.rules.validate_komi(komi)
        self.komi = int(komi)
        self.game = Game(self.rules, komi=self.komi)
        # the record `loadsgf` read: its comments and analyses are kept by a later save
        self.loaded_record: game_record.GameRecord | None = None
        self.finished = False  # set by `quit`
        self.clock = GameClock("none")  # both players' clocks (play.gtp_time sets them)
        self.commands: dict[str, Handler] = {}
        for command, handler in [
            ("protocol_version", lambda engine, args: PROTOCOL_VERSION),
            ("name", lambda engine, args: engine.name),
            ("version", lambda engine, args: engine.version),
            ("known_command", _known_command),
            ("list_commands", lambda engine, args: "\n".join(engine.commands)),
            ("quit", _quit),
            ("boardsize", _boardsize),
            ("clear_board", _clear_board),
            ("komi", _komi),
            ("play", _play),
            ("genmove", _genmove),
            ("undo", _undo),
            ("showboard", _showboard),
            ("final_score", _final_score),
            ("catena-set-rules", _set_rules),
            ("all_legal", _all_legal),
            ("list_stones", _list_stones),
            ("loadsgf", _loadsgf),
            ("printsgf", _printsgf),
            ("catena-savesgf", _savesgf),
        ]:
            self.register_command(command, handler)

    # ----- extension API ---------------------------------------------------------------

    def register_command(self, name: str, handler: Handler) -> None:
        """Add or replace command `name`; `handler(engine, args) -> str` (GtpError -> `?`)."""
        if not name or any(ch.isspace() or ch == "#" for ch in name):
            raise ValueError(f"bad GTP command name {name!r}")
        self.commands[name] = handler

    def parse_colour(self, text: str) -> int:
        colour = COLOUR_WORDS.get(text.lower())
        if colour is None:
            raise GtpError(f"invalid color {shown(text)!r} (expected b, w, black or white)")
        return colour

    def new_game(self, rules: Rules | None = None, komi: int | None = None) -> None:
        """Start an empty board (rules/komi default to the current ones)."""
        rules = self.rules if rules is None else rules
        komi = self.komi if komi is None else komi
        low, high = rules.komi_range
        if not low <= komi <= high:
            komi = 0
        self.game = Game(rules, komi=komi)
        self.rules, self.komi = rules, komi
        self.loaded_record = None
        self.clock.reset()

    def move_seconds(self) -> float | None:
        """The seconds the side to move may think under the clock (None: no limit)."""
        state = self.game.state
        moves_left = moves_left_estimate(int(state.legal_cells[0].sum()),
                                         2 if self.rules.is_double else 1)
        return self.clock.move_seconds(int(state.to_move[0]), moves_left)

    def note_track(self) -> None:
        """Write the player's note about the current rules (once per rules), on stderr."""
        if self.rules == self.noted_rules:
            return
        self.noted_rules = self.rules
        stream = self.note_stream if self.note_stream is not None else sys.stderr
        model_line = getattr(self.player, "model_line", None)
        line = model_line(self.rules) if model_line is not None else None
        if line:  # which bundled model plays these rules, when several are bundled
            stream.write(f"catena-zero: {line}\n")
            stream.flush()
        note_of = getattr(self.player, "track_note", None)
        try:
            note = note_of(self.rules) if note_of is not None else None
        except ValueError:  # no model for the side: genmove will say so, on stdout
            note = None
        if note:
            stream.write(f"catena-zero: {note}\n")
            stream.flush()

    # ----- protocol loop ---------------------------------------------------------------

    def execute(self, command: str, args: list[str]) -> str:
        """Run one command; raises GtpError for a `?` reply, leaving everything unchanged."""
        handler = self.commands.get(command)
        if handler is None:
            raise GtpError(f"unknown command: {shown(command)}")
        saved = (self.rules, self.komi, self.game, list(self.game.history))
        try:
            return handler(self, args)
        except GtpError:
            self._restore(saved)
            raise
        except ValueError as error:  # includes IllegalActionError
            self._restore(saved)
            raise GtpError(str(error)) from error
        except Exception as error:  # the engine must never die on one command
            self._restore(saved)
            raise GtpError(f"internal error: {type(error).__name__}: {error}") from error

    def _restore(self, saved) -> None:
        rules, komi, game, history = saved
        if (self.rules == rules and self.komi == komi and self.game is game
                and list(game.history) == history):
            return
        self.rules, self.komi = rules, komi
        self.game = Game(rules, komi=komi)
        for action in history:
            self.game.play(action)

    def handle_line(self, line: str) -> str | None:
        """The full reply (ending in a blank line) to one input line; None if it is empty."""
        if len(line.rstrip("\r\n")) > MAX_LINE_CHARS:
            return _too_long(line)
        line = _clean_line(line)
        if not line:
            return None
        tokens = line.split()
        command_id = ""
        if ID_PATTERN.fullmatch(tokens[0]):
            command_id = tokens.pop(0)
        if not tokens:
            return f"?{command_id} missing command\n\n"
        try:
            text = self.execute(tokens[0], tokens[1:])
        except GtpError as error:
            message = _no_blank_lines(str(error))
            if len(message) > MAX_MESSAGE_CHARS:
                message = message[:MAX_MESSAGE_CHARS] + "..."
            message = message.encode("ascii", "backslashreplace").decode("ascii")
            return f"?{command_id} {message}\n\n"
        text = _no_blank_lines(text)
        return f"={command_id} {text}\n\n" if text else f"={command_id}\n\n"

    def run(self, input_stream: TextIO, output_stream: TextIO) -> None:
        """Answer commands from `input_stream` until `quit` or end of input.

        A stream with a binary `buffer` (sys.stdin) is read as bytes and decoded with
        replacement, so bytes that are not UTF-8 get a `?` instead of ending the engine."""
        self.finished = False
        read_line = _line_reader(input_stream)
        while True:
            line, cut = read_line()  # one line at a time: controllers wait for replies
            if not line:
                break
            if cut:
                while cut:  # skip the rest of the line piece by piece: no quadratic cost
                    _, cut = read_line()
                reply: str | None = _too_long(line)
            else:
                reply = self.handle_line(line)
            if reply is None:
                continue
            output_stream.write(reply)
            output_stream.flush()
            if self.finished:
                break


def _line_reader(stream) -> Callable[[], tuple[str, bool]]:
    """A function returning the next piece of `stream` ("" at the end): a whole line, or
    the next MAX_LINE_CHARS + 1 characters (bytes, on a binary stream) of a longer one,
    with True for `the line goes on`."""
    binary = getattr(stream, "buffer", None)
    if binary is not None and hasattr(binary, "readline"):
        def read_bytes() -> tuple[str, bool]:
            piece = binary.readline(MAX_LINE_CHARS + 1)
            cut = len(piece) > MAX_LINE_CHARS and not piece.endswith(b"\n")
            return piece.decode("utf-8", "replace"), cut
        return read_bytes

    def read_text() -> tuple[str, bool]:
        piece = stream.readline(MAX_LINE_CHARS + 1)
        return piece, len(piece) > MAX_LINE_CHARS and not piece.endswith("\n")
    return read_text


def _too_long(line: str) -> str:
    first = line[:32].split()
    command_id = first[0] if first and ID_PATTERN.fullmatch(first[0]) else ""
    return f"?{command_id} line too long (over {MAX_LINE_CHARS // 1024} KiB): skipped\n\n"


def _no_blank_lines(text: str) -> str:
    """A blank line ends a GTP reply, so keep the first line and drop later empty ones."""
    lines = text.rstrip().split("\n")
    return "\n".join(lines[:1] + [line.rstrip() for line in lines[1:] if line.strip()])


def _expect(args: list[str], count: int, usage: str) -> None:
    if len(args) != count:
        raise GtpError(f"syntax error: usage is {usage}")


def _known_command(engine: GtpEngine, args: list[str]) -> str:
    _expect(args, 1, "known_command NAME")
    return "true" if args[0] in engine.commands else "false"


def _quit(engine: GtpEngine, args: list[str]) -> str:
    engine.finished = True
    return ""


def _boardsize(engine: GtpEngine, args: list[str]) -> str:
    _expect(args, 1, "boardsize N")
    try:
        side = parse_integer(args[0], "board side", 2, 10)
    except GtpError as error:  # GTP 2's own words for a refused size come first
        raise GtpError(f"unacceptable size: {error}") from None
    rules = Rules(side=side, game_type=engine.rules.game_type,
                  scoring=engine.rules.scoring)
    engine.new_game(rules)
    engine.note_track()
    return ""


def _clear_board(engine: GtpEngine, args: list[str]) -> str:
    _expect(args, 0, "clear_board")
    engine.new_game()
    return ""


def _komi(engine: GtpEngine, args: list[str]) -> str:
    _expect(args, 1, "komi K")
    # A GTP komi is a float and may be negative; this game's komi is whole and in the
    # rules' range.
    low, high = engine.rules.komi_range
    value = parse_number(args[0], "komi", low, high, decimal=True, signed=True)
    if not float(value).is_integer():
        raise GtpError(f"komi must be a whole number, got {shown(args[0])}")
    komi = int(value)
    engine.rules.validate_komi(komi)
    history = list(engine.game.history)
    game = Game(engine.rules, komi=komi)
    for action in history:  # legality does not depend on the komi: keep the position
        game.play(action)
    engine.game, engine.komi = game, komi
    return ""


def _set_rules(engine: GtpEngine, args: list[str]) -> str:
    _expect(args, 2, "catena-set-rules komi|nokomi|double standard|longest|quadratic")
    try:
        rules = Rules(side=engine.rules.side, game_type=args[0].lower(),
                      scoring=args[1].lower())
    except ValueError as error:
        if max(len(args[0]), len(args[1])) <= ECHO_CHARS:
            raise
        # The rules' own message would repeat the names in full.
        raise GtpError(f"unknown rules {shown(args[0])} {shown(args[1])}: game type is "
                       f"komi, nokomi or double, scoring standard, longest or quadratic") \
            from error
    engine.new_game(rules)
    engine.note_track()
    return ""


def _colour_to_move(engine: GtpEngine, args: list[str], count: int, usage: str) -> int:
    """Parse COLOR and refuse it unless the game is running and it is that colour's turn."""
    _expect(args, count, usage)
    colour = engine.parse_colour(args[0])
    if engine.game.is_over:
        raise GtpError("the game is over")
    if colour != engine.game.to_move:
        raise GtpError(f"move out of turn: it is {COLOUR_LABELS[engine.game.to_move]}'s turn")
    return colour


def _play(engine: GtpEngine, args: list[str]) -> str:
    _colour_to_move(engine, args, 2, "play COLOR MOVE")
    move = args[1].lower() if args[1].lower() in ("button", "pass") else args[1]
    try:
        action = engine.game.parse_action(move)
    except ValueError as error:
        detail = f": {error}" if len(args[1]) <= ECHO_CHARS else ""
        raise GtpError(f"invalid vertex {shown(args[1])!r}{detail}") from error
    if action not in engine.game.legal_actions():
        raise GtpError(f"illegal move {shown(args[1])}")
    engine.game.play(action)
    return ""


def _genmove(engine: GtpEngine, args: list[str]) -> str:
    _colour_to_move(engine, args, 1, "genmove COLOR")
    engine.note_track()
    colour = int(engine.game.state.to_move[0])
    seconds = engine.move_seconds()
    start = time.monotonic()
    if seconds is None:
        action = int(engine.player.genmove(engine.game))
    else:
        action = int(engine.player.genmove(engine.game, seconds=seconds))
    engine.clock.charge(colour, time.monotonic() - start)
    if action not in engine.game.legal_actions():
        raise GtpError(f"the player chose an illegal action {action}")
    engine.game.play(action)
    return engine.rules.board.action_name(action)


def _undo(engine: GtpEngine, args: list[str]) -> str:
    _expect(args, 0, "undo")
    if not engine.game.history:
        raise GtpError("cannot undo: no moves have been played")
    engine.game.undo()
    return ""


def _showboard(engine: GtpEngine, args: list[str]) -> str:
    _expect(args, 0, "showboard")
    return "\n" + engine.game.board_text()


def _final_score(engine: GtpEngine, args: list[str]) -> str:
    _expect(args, 0, "final_score")
    if not engine.game.is_over:
        raise GtpError("the game is not over")
    return engine.game.result_string()


def _all_legal(engine: GtpEngine, args: list[str]) -> str:
    _expect(args, 1, "all_legal COLOR")
    colour = engine.parse_colour(args[0])
    if engine.game.is_over or colour != engine.game.to_move:
        return ""
    board = engine.rules.board
    return " ".join(board.action_name(action) for action in engine.game.legal_actions())


def _list_stones(engine: GtpEngine, args: list[str]) -> str:
    _expect(args, 1, "list_stones COLOR")
    return " ".join(engine.game.stones_of(engine.parse_colour(args[0])))


def _loadsgf(engine: GtpEngine, args: list[str]) -> str:
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


def _game_record(engine: GtpEngine):
    record = game_record.record_from_game(engine.game)
    record.application = f"{engine.name}:{engine.version}"
    return game_record.carry_annotations(record, engine.loaded_record)


def _printsgf(engine: GtpEngine, args: list[str]) -> str:
    """The current game as a record (docs/reference/records.md), on the reply's lines."""
    _expect(args, 0, "printsgf")
    return game_record.write_record(_game_record(engine))


def _savesgf(engine: GtpEngine, args: list[str]) -> str:
    """`catena-savesgf FILE`: write the current game's record to FILE (atomically)."""
    _expect(args, 1, "catena-savesgf FILE")
    try:
        game_record.save_record(args[0], _game_record(engine))
    except OSError as error:
        raise GtpError(f"cannot write {shown(args[0])}: {error.strerror or error}") from error
    return ""


def run_gtp(player: Player | None = None, stdin: TextIO = sys.stdin,
            stdout: TextIO = sys.stdout, **engine_options) -> GtpEngine:
    """Speak GTP on `stdin`/`stdout` until `quit` or end of input; returns the engine.
    `engine_options` go to GtpEngine (name, version, rules, komi, seed)."""
    engine = GtpEngine(player=player, **engine_options)
    engine.run(stdin, stdout)
    return engine


if __name__ == "__main__":
    run_gtp()
