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
- This module is the engine, its command table and dispatch; the board and game commands
  are play.gtp_commands, the record commands play.gtp_records, and the framing, numbers and
  GtpError they share play.gtp_protocol (exported from here too).
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

import sys
from collections.abc import Callable
from typing import Protocol, TextIO

import numpy as np

import catena_zero
from catena_zero.data import game_record
from catena_zero.play.gtp_commands import GAME_COMMANDS
from catena_zero.play.gtp_protocol import (
    ECHO_CHARS,
    ID_PATTERN,
    MAX_LINE_CHARS,
    MAX_MESSAGE_CHARS,
    GtpError,
    clean_line,
    expect_arguments,
    line_reader,
    no_blank_lines,
    parse_integer,
    parse_number,
    shown,
    too_long_reply,
)
from catena_zero.play.gtp_records import RECORD_COMMANDS
from catena_zero.play.time_control import GameClock, moves_left_estimate
from catena_zero.rules import BLACK, WHITE, Game, Rules

# The protocol's names stay importable from here, where controllers and tests look for them.
__all__ = [
    "ECHO_CHARS", "MAX_LINE_CHARS", "GtpEngine", "GtpError", "Handler", "Player",
    "RandomPlayer", "parse_integer", "parse_number", "run_gtp", "shown",
]

PROTOCOL_VERSION = "2"
COLOUR_WORDS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


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
            *GAME_COMMANDS.items(),
            *RECORD_COMMANDS.items(),
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
            return too_long_reply(line)
        line = clean_line(line)
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
            message = no_blank_lines(str(error))
            if len(message) > MAX_MESSAGE_CHARS:
                message = message[:MAX_MESSAGE_CHARS] + "..."
            message = message.encode("ascii", "backslashreplace").decode("ascii")
            return f"?{command_id} {message}\n\n"
        text = no_blank_lines(text)
        return f"={command_id} {text}\n\n" if text else f"={command_id}\n\n"

    def run(self, input_stream: TextIO, output_stream: TextIO) -> None:
        """Answer commands from `input_stream` until `quit` or end of input.

        A stream with a binary `buffer` (sys.stdin) is read as bytes and decoded with
        replacement, so bytes that are not UTF-8 get a `?` instead of ending the engine."""
        self.finished = False
        read_line = line_reader(input_stream)
        while True:
            line, cut = read_line()  # one line at a time: controllers wait for replies
            if not line:
                break
            if cut:
                while cut:  # skip the rest of the line piece by piece: no quadratic cost
                    _, cut = read_line()
                reply: str | None = too_long_reply(line)
            else:
                reply = self.handle_line(line)
            if reply is None:
                continue
            output_stream.write(reply)
            output_stream.flush()
            if self.finished:
                break


def _known_command(engine: GtpEngine, args: list[str]) -> str:
    expect_arguments(args, 1, "known_command NAME")
    return "true" if args[0] in engine.commands else "false"


def _quit(engine: GtpEngine, args: list[str]) -> str:
    engine.finished = True
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
