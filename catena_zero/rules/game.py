"""Game: one game for people and tests, a thin wrapper on a batch of one of the batched engine."""

from __future__ import annotations

import numpy as np

from catena_zero.rules.board import BLACK, EMPTY, WHITE
from catena_zero.rules.engine import Engine
from catena_zero.rules.result import result_string
from catena_zero.rules.variants import Rules

_COLOUR_NAMES = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
_STONE_CHARS = {EMPTY: ".", BLACK: "X", WHITE: "O"}


def parse_colour(colour) -> int:
    """BLACK/WHITE from an int or from 'b', 'w', 'black', 'white' (any case)."""
    if isinstance(colour, str):
        key = colour.strip().lower()
        if key in _COLOUR_NAMES:
            return _COLOUR_NAMES[key]
    elif not isinstance(colour, bool) and isinstance(colour, int | np.integer):
        if int(colour) in (BLACK, WHITE):
            return int(colour)
    raise ValueError(f"unknown colour {colour!r}; expected b, w, black or white")


class Game:
    """A single game: play / undo / result, with actions as ints or names ('F6', 'button')."""

    def __init__(self, rules: Rules | None = None, komi: int = 0):
        self.rules = rules if rules is not None else Rules()
        self.engine = Engine(self.rules)
        self.board = self.engine.board
        self.komi = int(self.rules.validate_komi(komi))
        self.state = self.engine.new_games(1, self.komi)
        self.history: list[int] = []

    @property
    def to_move(self) -> int:
        return int(self.state.to_move[0])

    @property
    def stones_left(self) -> int:
        return int(self.state.stones_left[0])

    @property
    def is_over(self) -> bool:
        return bool(self.state.terminal[0])

    def legal_actions(self) -> list[int]:
        return [int(a) for a in np.nonzero(self.engine.legal_actions(self.state)[0])[0]]

    def parse_action(self, action: int | str) -> int:
        if isinstance(action, str):
            return self.board.parse_action(action)
        if isinstance(action, bool) or not isinstance(action, int | np.integer):
            raise ValueError(f"action must be an int or a name, got {action!r}")
        if not 0 <= int(action) < self.board.num_actions:
            raise ValueError(f"action {action} is outside 0..{self.board.num_actions - 1}")
        return int(action)

    def play(self, action: int | str) -> None:
        """Play one action (IllegalActionError if illegal; nothing changes then)."""
        action = self.parse_action(action)
        self.engine.step(self.state, np.array([action], dtype=np.int64))
        self.history.append(action)

    def undo(self) -> int:
        """Take back the last action (by replaying the others); returns it."""
        if not self.history:
            raise ValueError("nothing to undo: no action has been played")
        history = self.history[:-1]
        state = self.engine.new_games(1, self.komi)
        for action in history:
            self.engine.step(state, np.array([action], dtype=np.int64))
        undone = self.history[-1]
        self.state = state
        self.history = history
        return undone

    def result(self) -> tuple[int, float]:
        """(winner, margin) of a finished game: winner BLACK/WHITE/EMPTY (draw), margin
        signed from Black's view."""
        if not self.is_over:
            raise ValueError("the game is not over yet")
        result = self.engine.result(self.state)
        return int(result.winner[0]), float(result.margin[0])

    def result_string(self) -> str:
        return result_string(*self.result())

    def stones_of(self, colour) -> list[str]:
        colour = parse_colour(colour)
        cells = np.nonzero(self.state.stones[0] == colour)[0]
        return [self.board.cell_name(int(cell)) for cell in cells]

    def board_text(self) -> str:
        """ASCII hex board: X black, O white, . empty; rows numbered, columns lettered."""
        board = self.board
        side = board.side
        size = board.grid_size
        width = 4 * side - 3
        stones = self.state.stones[0]

        def x_of(col, row):
            return 2 * col - row + side - 1

        def letters(row):
            line = [" "] * width
            for col in range(size):
                if board.index_of(col, row) >= 0:
                    line[x_of(col, row)] = chr(ord("A") + col)
            return "    " + "".join(line).rstrip()

        lines = [letters(size - 1)]
        for row in range(size - 1, -1, -1):
            line = [" "] * width
            for col in range(size):
                index = board.index_of(col, row)
                if index >= 0:
                    line[x_of(col, row)] = _STONE_CHARS[int(stones[index])]
            lines.append(f"{row + 1:>2}  " + "".join(line).rstrip())
        lines.append(letters(0))
        mover = "Black" if self.to_move == BLACK else "White"
        status = "over" if self.is_over else f"{mover} to move"
        button = {EMPTY: "untaken", BLACK: "Black", WHITE: "White"}[int(self.state.button[0])]
        lines.append(f"{self.rules}  komi {self.komi}  move {len(self.history)}  {status}")
        if self.rules.has_button:
            lines[-1] += f"  button: {button}"
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.board_text()
