r"""`catena-zero play`: a game against the model in the terminal.

The board is drawn in the notation of RULES.md (columns A.., rows 1..); the person types a
cell (`f6`), `button` (or `pass`), `swap` (nokomi, second player, after the opening stone),
`undo`, `hint`, `save FILE`, `load FILE` (game records), `help` or `quit`. Input is read
line by line, so a game can be piped in::

    printf 'c3\nb2\nquit\n' | catena-zero play side=3 --model tiny.pt
"""

from __future__ import annotations

import datetime
import sys
from dataclasses import dataclass
from typing import TextIO

from catena_zero.data.game_record import load_record, save_record
from catena_zero.play.session import COLOUR_NAMES, PlaySession
from catena_zero.rules import Rules

HELP = """commands:
  <cell>      place a stone, e.g. f6 (case does not matter)
  button      take the button (alias: pass)
  swap        nokomi only: as second player, take the opening stone (play Black)
  undo        take back your last move and the model's reply
  hint        the model's analysis of the position (win rate, score lead, top moves)
  save FILE   write the game so far as a record (docs/reference/records.md)
  load FILE   continue from a record's final position (its rules and komi)
  help        this text
  quit        leave the game"""


@dataclass
class TerminalConfig:
    side: int = 6  # board side (2..10)
    game_type: str = "komi"  # "komi" | "nokomi" | "double"
    scoring: str = "standard"  # "standard" | "longest" | "quadratic"
    komi: int | None = 0  # komi added to White; None = the model chooses the most balanced one
    colour: str = "black"  # your colour: "black", "white" or "auto" (the model chooses its own)

    def __post_init__(self) -> None:
        rules = self.rules()
        if self.komi is not None:
            rules.validate_komi(self.komi)
        if str(self.colour).lower() not in ("black", "white", "auto", "b", "w"):
            raise ValueError(f"colour must be black, white or auto, got {self.colour!r}")

    def rules(self) -> Rules:
        return Rules(side=self.side, game_type=self.game_type, scoring=self.scoring)


def _status(session: PlaySession) -> str:
    game = session.game
    komi = int(game.state.komi[0])
    button = int(game.state.button[0])
    holder = COLOUR_NAMES.get(button, "nobody")
    return (f"you: {COLOUR_NAMES[session.human]}   to move: {COLOUR_NAMES[int(game.to_move)]}"
            f"   komi: {komi}   button: {holder if session.rules.has_button else 'not used'}")


def play_terminal(player, config: TerminalConfig, stdin: TextIO | None = None,
                  stdout: TextIO | None = None) -> int:
    """Play one game on stdin/stdout (default: the process's). Returns 0 when the game
    ended, the person quit or the input ended."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout

    def say(text: str = "") -> None:
        stdout.write(text + "\n")
        stdout.flush()

    rules = config.rules()
    say(f"catena-zero: {player.library.describe(rules.side)}")
    note_of = getattr(player, "track_note", None)  # a board or variant not trained on
    note = note_of(rules) if note_of is not None else None
    if note:
        say(note)
    session = PlaySession(player, rules, komi=config.komi, human_colour=config.colour)
    for note in session.notes:
        say(note)
    if session.model_moves:
        say(f"model plays {', '.join(session.model_moves)}")
    changed = True
    while True:
        if changed:
            say(session.game.board_text().rstrip("\n"))
            say(_status(session))
        changed = False
        if session.game.is_over:
            _finish(session, say)
            return _save_after_the_end(session, stdin, stdout, say)
        if session.swap_available():
            say("you may swap (type swap) to take the opening stone, or play on as White")
        stdout.write(f"your move ({COLOUR_NAMES[session.human]}) > ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            say("\nend of input; leaving the game")
            return 0
        command = line.strip().lower()
        if not command:
            continue
        if command.split()[0] in RECORD_COMMANDS:
            changed = _record_command(session, line.strip(), say)
            continue
        try:
            if command in ("quit", "exit", "q"):
                say("bye")
                return 0
            if command in ("help", "?"):
                say(HELP)
                continue
            if command == "hint":
                say(_hint(player, session))
                continue
            if command == "undo":
                session.undo()
                say("undone")
                changed = True
                continue
            replies = session.human_swap() if command == "swap" else session.human_move(command)
        except ValueError as error:  # SessionError (refused) or a malformed move
            say(f"error: {error}")
            continue
        changed = True
        if "swap" in replies:
            say("the model swaps: it takes the opening stone and you play White")
        moves = [move for move in replies if move != "swap"]
        if moves:
            evaluation = player.evaluate(session.game)
            winrate = evaluation.winrate_black
            if session.model_colour != 1:
                winrate = 1.0 - winrate
            say(f"model plays {', '.join(moves)}   (model's win rate {100 * winrate:.0f}%)")


RECORD_COMMANDS = ("save", "load")


def _record_command(session: PlaySession, line: str, say) -> bool:
    """`save FILE` / `load FILE` (the file name keeps its case and spaces); returns whether
    the position changed. A refused command says why in one line and changes nothing."""
    command, _, name = line.partition(" ")
    name = name.strip()
    if not name:
        say(f"error: usage is {command.lower()} FILE")
        return False
    try:
        if command.lower() == "save":
            path = save_record(name, session.to_record(date=datetime.date.today().isoformat()))
            say(f"saved {len(session.game.history)} moves to {path}")
            return False
        replies = session.load_record(load_record(name))
    except (ValueError, OSError) as error:  # RecordError, SessionError, a failing model
        say(f"error: {error}")
        return False
    say(f"loaded {name}: {session.rules}, komi {session.komi}, "
        f"{len(session.game.history)} moves; you play {COLOUR_NAMES[session.human]}")
    moves = [move for move in replies if move != "swap"]
    if moves:
        say(f"model plays {', '.join(moves)}")
    return True


def _save_after_the_end(session: PlaySession, stdin: TextIO, stdout: TextIO, say) -> int:
    """After the game: `save FILE` lines write its record; any other line (or the end of
    input) leaves. Returns 0."""
    while True:
        stdout.write("save FILE keeps the record; anything else leaves > ")
        stdout.flush()
        line = stdin.readline().strip()
        if line.split(" ", 1)[0].lower() != "save":
            say("bye" if line else "")
            return 0
        _record_command(session, line, say)


def _hint(player, session: PlaySession) -> str:
    analysis = player.analyze(session.game)
    lines = [f"win rate for {COLOUR_NAMES[analysis.to_move]} {100 * analysis.winrate:.1f}%, "
             f"score lead {analysis.score_lead:+.1f}"]
    for move in analysis.moves:
        lines.append(f"  {move.name:>6}  visits {move.visits:4d}  prior {move.prior:.3f}  "
                     f"win rate {100 * move.winrate:.1f}%")
    return "\n".join(lines)


def _finish(session: PlaySession, say) -> int:
    result = session.game.result_string()
    winner, _ = session.game.result()
    if int(winner) == session.human:
        verdict = "you win"
    elif int(winner) == session.model_colour:
        verdict = "the model wins"
    else:
        verdict = "a draw"
    say(f"game over: {result} ({verdict})")
    return 0
