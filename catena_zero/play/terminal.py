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
from catena_zero.play.session import COLOUR_NAMES, PlaySession, SessionError
from catena_zero.play.time_control import think_level
from catena_zero.rules import BLACK, EMPTY, WHITE, Rules
from catena_zero.rules.explain import score_parts, score_units
from catena_zero.rules.result import result_string

HELP = """commands:
  <cell>      place a stone, e.g. f6 (case does not matter)
  button      take the button (alias: pass)
  swap        nokomi only: as second player, take the opening stone (play Black)
  undo        take back your last move and the model's reply
  hint        the model's analysis of the position (win rate, score lead, top moves)
  think LEVEL the model's think time a move: quick (0.5 s), normal (2 s), strong (10 s)
  save FILE   write the game so far as a record (docs/reference/records.md)
  load FILE   continue from a record's final position (its rules and komi)
  help        this text and the legend of the board
  quit        leave the game"""

LEGEND = """board: X black  O white  x o claimed (in a limited ribbon, final)
       . empty, playable   - empty, unplayable (no stone can ever go there)
       (X) stones of the last turn   letters: columns, at both ends of each column
       win rates and score leads are from Black's view"""


@dataclass
class TerminalConfig:
    side: int = 6  # board side (2..10)
    game_type: str = "komi"  # "komi" | "nokomi" | "double"
    scoring: str = "standard"  # "standard" | "longest" | "quadratic"
    komi: int | None = 0  # komi added to White; None = the model chooses the most balanced one
    colour: str = "black"  # your colour: "black", "white" or "auto" (the model chooses its own)
    think: str | None = None  # the model's think time a move: quick | normal | strong; None =
    # the player's own settings (player.simulations, player.seconds_per_move)

    def __post_init__(self) -> None:
        if self.think is not None:
            think_level(self.think)  # ValueError naming the levels
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
    say(f"catena-zero: {player.library.describe(rules)}")
    note_of = getattr(player, "track_note", None)  # a board or variant not trained on
    note = note_of(rules) if note_of is not None else None
    if note:
        say(note)
    progress = _progress_line(stdout) if _is_terminal(stdout) else None
    session = PlaySession(player, rules, komi=config.komi, human_colour=config.colour,
                          think=config.think, progress=progress)
    say(LEGEND)
    for note in session.notes:
        say(note)
    notes_shown = len(session.notes)
    if session.model_moves:
        say(f"model plays {', '.join(session.model_moves)}")
    changed = True
    while True:
        if changed:
            say(board_picture(session))
            say(_status(session))
            if not session.game.is_over:  # the final breakdown follows instead
                say(score_parts(session.game).line())
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
                say(LEGEND)
                continue
            words = command.split()
            if words[0] == "think":
                seconds, simulations = think_level(words[1] if len(words) == 2 else "")
                level = words[1]
                session.think = level
                say(f"the model now thinks up to {seconds:g} s or {simulations} simulations "
                    f"a move")
                continue
            if command == "hint":
                say(_hint(player, session))
                continue
            if command == "undo":
                session.undo()
                say("undone")
                changed = True
                continue
            start = session.turn_start()
            replies = session.human_swap() if command == "swap" else session.human_move(command)
            if progress is not None:  # clear the progress line
                stdout.write("\r\x1b[K")
        except SessionError as error:  # refused: the message names the rule broken
            say(f"error: {error}")
            continue
        except ValueError as error:  # a malformed move
            say(f"error: {error}")
            continue
        changed = True
        notes_shown = _say_notes(session, notes_shown, say)
        moves = [move for move in replies if move != "swap"]
        if moves:
            evaluation = player.evaluate(session.game)
            say(f"model plays {', '.join(moves)}   "
                f"(Black's view: win rate for black {100 * evaluation.winrate_black:.0f}%)")
        for line in claim_lines(session, start):
            say(line)


RECORD_COMMANDS = ("save", "load")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _progress_line(stdout: TextIO):
    """A progress callback that rewrites one line while the model thinks (terminals only)."""

    def show(partial) -> None:
        visits = int(partial.visit_counts[0].sum())
        stdout.write(f"\r  model thinking: {visits} visits   ")
        stdout.flush()

    return show


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
    except OSError as error:  # the file's own name, never a temporary one or an errno
        say(f"error: cannot {command.lower()} {name}: {error.strerror or error}")
        return False
    except ValueError as error:  # RecordError, SessionError, a failing model
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
    """The search's analysis, every number from Black's view: the search's mean over the
    lines it read (the position) beside each move's own value (after that move), so a good
    move reads above the mean for the player to move."""
    analysis = player.analyze(session.game)
    black = analysis.to_move == BLACK

    def for_black(winrate: float) -> float:
        return winrate if black else 1.0 - winrate

    lead = analysis.score_lead if black else -analysis.score_lead
    units = score_units(session.rules)
    lines = [f"Black's view: win rate for black {100 * for_black(analysis.winrate):.1f}% "
             f"(the search's mean), score lead {format_lead(lead)} {units}",
             f"top moves for {COLOUR_NAMES[analysis.to_move]} (win rate for black after each):"]
    for move in analysis.moves:
        rate = "unvisited" if move.winrate != move.winrate else \
            f"{100 * for_black(move.winrate):.1f}%"
        lines.append(f"  {move.name:>6}  visits {move.visits:4d}  prior {move.prior:.3f}  "
                     f"win rate for black {rate}")
    return "\n".join(lines)


def format_lead(lead_black: float) -> str:
    """A score lead from Black's view as 'B+1.2', 'W+0.3' or '0' (one decimal)."""
    rounded = round(float(lead_black), 1)
    if rounded == 0:
        return "0"
    return result_string(BLACK if rounded > 0 else WHITE, rounded)


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
    for line in score_parts(session.game).breakdown():
        say(line)
    return 0


def _say_notes(session: PlaySession, shown: int, say) -> int:
    """Say the session's notes after the first `shown` (the model's komi, colour and swap
    decisions, and the person's); returns how many are shown now."""
    for note in session.notes[shown:]:
        say(note)
    return len(session.notes)


def claim_lines(session: PlaySession, start) -> list[str]:
    """One line per ribbon claimed since `start` (session.turn_start())."""
    return [f"{turn.actor} played {turn.move}: {claim.text()}"
            for turn in session.claims_since(start) for claim in turn.claims]


def board_picture(session: PlaySession) -> str:
    """The board with its marks (LEGEND): rows numbered on the left; each column's letter
    at both of its ends, so a column can be followed from either edge.

    The cell (c, r) is drawn at x = 2c - r + side - 1 on the line of row r (row 1 at the
    bottom); a column runs up and to the left, so its letters sit one step past its end
    cells along it: below row 1 or right of the lower-right edge, above the top row or
    left of the upper-left edge."""
    game = session.game
    board = game.board
    side, size = board.side, board.grid_size
    stones = game.state.stones[0]
    limited = game.state.limited[0]
    playable = set(game.legal_actions()) if not game.is_over else set()
    last = set(session.last_turn_cells())
    marks: dict[tuple[int, int], str] = {}  # (row, x) -> character

    def x_of(col: int, row: int) -> int:
        return 2 * col - row + side - 1

    for index, (col, row) in enumerate(board.coords.tolist()):
        x = x_of(col, row)
        stone = int(stones[index])
        if stone == EMPTY:
            marks[row, x] = "." if index in playable else "-"
        else:
            char = "X" if stone == BLACK else "O"
            marks[row, x] = char.lower() if limited[index] else char
        if index in last:
            marks[row, x - 1], marks[row, x + 1] = "(", ")"
    for col in range(size):
        low, high = max(0, col - side + 1), min(size - 1, col + side - 1)
        letter = chr(ord("A") + col)
        marks[low - 1, x_of(col, low - 1)] = letter
        marks[high + 1, x_of(col, high + 1)] = letter
    left = min(x for _, x in marks)
    lines = []
    for row in range(size, -2, -1):
        width = max((x for r, x in marks if r == row), default=left) - left + 1
        line = [" "] * width
        for (r, x), char in marks.items():
            if r == row:
                line[x - left] = char
        label = f"{row + 1:>2}  " if 0 <= row < size else "    "
        lines.append((label + "".join(line)).rstrip())
    return "\n".join(lines)
