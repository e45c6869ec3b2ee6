"""A competent one-game-at-a-time pure-Python Catena engine, the engine benchmark's point of
comparison (`benchmarks.bench_engine`); nothing in the package uses it, and a test checks
that it plays the batched engine's games.

Plain lists, incremental like the batched engine: degrees and ribbon ends are kept up to date,
legality is only re-examined around the new stone, ribbons are merged smaller-into-larger
(member lists, no flood fill), and a list of legal cells with positions gives O(1) removal and
uniform random moves. It plays every game type; results are left to the batched engine.
"""

from __future__ import annotations

import random

from catena_zero.rules.board import BLACK, EMPTY, WHITE, get_board
from catena_zero.rules.variants import GameType, Rules

_TWO_STONE_SAFE = 22


class PythonGame:
    """One game. `stones[i]` is the colour on cell i (claims applied)."""

    def __init__(self, rules: Rules, komi: int = 0):
        board = get_board(rules.side)
        self.rules = rules
        self.num_cells = board.num_cells
        self.button_action = board.button_action
        self.neighbours = [[int(n) for n in row if n < board.num_cells] for row in board.neighbours]
        self.komi = komi
        self.has_button = rules.has_button
        self.double = rules.game_type == GameType.DOUBLE
        self.nokomi = rules.game_type == GameType.NOKOMI
        cells = self.num_cells
        self.stones = [EMPTY] * cells
        self.degree = [0] * cells
        self.limited = [False] * cells
        self.root = list(range(cells))  # ribbon root of each stone
        self.members: dict[int, list[int]] = {}  # root -> stones of the ribbon
        self.ends: dict[int, list[int]] = {}  # root -> [end, end]
        self.black: dict[int, int] = {}  # root -> number of black stones
        self.legal_list = list(range(cells))
        self.legal_pos = list(range(cells))  # position in legal_list, -1 when illegal
        self.to_move = BLACK
        self.stones_left = 1
        self.button = EMPTY
        self.last_placer = EMPTY
        self.move_number = 0
        self.terminal = False

    # ---------------------------------------------------------------- legality
    def is_legal(self, cell: int) -> bool:
        return self.legal_pos[cell] >= 0

    def _kill(self, cell: int) -> bool:
        """Make a cell illegal; True if it was legal."""
        position = self.legal_pos[cell]
        if position < 0:
            return False
        last = self.legal_list.pop()
        if last != cell:
            self.legal_list[position] = last
            self.legal_pos[last] = position
        self.legal_pos[cell] = -1
        return True

    def button_legal(self) -> bool:
        return (
            self.has_button
            and self.button == EMPTY
            and not self.terminal
            and not (self.nokomi and self.move_number == 0)
        )

    def _first_stone_ok(self, cell: int) -> bool:
        if len(self.legal_list) >= _TWO_STONE_SAFE:
            return True
        trial = self.copy()
        trial._place(cell, BLACK)
        return bool(trial.legal_list)

    def legal_actions(self) -> list[int]:
        if self.terminal:
            return []
        cells = list(self.legal_list)
        if self.double and self.stones_left == 2:
            cells = [cell for cell in cells if self._first_stone_ok(cell)]
        if self.button_legal():
            cells.append(self.button_action)
        return cells

    def random_action(self, rng: random.Random) -> int:
        if self.double and self.stones_left == 2 and len(self.legal_list) < _TWO_STONE_SAFE:
            return rng.choice(self.legal_actions())
        count = len(self.legal_list)
        index = rng.randrange(count + 1 if self.button_legal() else count)
        return self.button_action if index == count else self.legal_list[index]

    def copy(self) -> PythonGame:
        other = PythonGame.__new__(PythonGame)
        other.__dict__.update(self.__dict__)
        for name in ("stones", "degree", "limited", "root", "legal_list", "legal_pos"):
            setattr(other, name, list(getattr(self, name)))
        other.members = {root: list(cells) for root, cells in self.members.items()}
        other.ends = {root: list(pair) for root, pair in self.ends.items()}
        other.black = dict(self.black)
        return other

    # ---------------------------------------------------------------- play
    def step(self, action: int) -> None:
        """Play a legal action (not re-checked: this engine is for playouts)."""
        self.move_number += 1
        if action == self.button_action:
            self.button = self.to_move
            self.to_move = 3 - self.to_move
            return
        colour = self.to_move
        self._place(action, colour)
        self.last_placer = colour
        if self.double:
            if self.stones_left == 2:
                self.stones_left = 1
                return
            self.to_move = 3 - colour
            self.stones_left = 2
            if not any(self._first_stone_ok(cell) for cell in self.legal_list):
                self.terminal = True
                for root in list(self.members):
                    if not self.limited[root]:
                        self._claim(root, 3 - colour, mark=False)
            return
        self.to_move = 3 - colour
        if not self.legal_list:
            self.terminal = True
            if self.button == EMPTY:
                self.button = 3 - colour

    def _place(self, x: int, colour: int) -> None:
        stones, degree, neighbours, root = self.stones, self.degree, self.neighbours, self.root
        beside = [n for n in neighbours[x] if stones[n] != EMPTY]
        stones[x] = colour
        degree[x] = len(beside)
        self._kill(x)
        flipped = []  # cells that just turned illegal, whose other ribbons may be limited
        for n in neighbours[x]:
            degree[n] += 1
            if (degree[n] > 2 or len(beside) == 2) and self._kill(n):
                flipped.append(n)
        is_black = 1 if colour == BLACK else 0
        if not beside:
            root[x] = x
            self.members[x] = [x]
            self.ends[x] = [x, x]
            self.black[x] = is_black
            end0 = end1 = x
        else:
            far = []
            for stone in beside:
                pair = self.ends[root[stone]]
                far.append(pair[1] if pair[0] == stone else pair[0])
            keep = root[beside[0]]
            if len(beside) == 2:
                drop = root[beside[1]]
                if len(self.members[drop]) > len(self.members[keep]):
                    keep, drop = drop, keep
                for stone in self.members[drop]:
                    root[stone] = keep
                self.members[keep].extend(self.members.pop(drop))
                self.black[keep] += self.black.pop(drop)
                del self.ends[drop]
                end0, end1 = far
            else:
                end0, end1 = far[0], x
            root[x] = keep
            self.members[keep].append(x)
            self.black[keep] += is_black
            self.ends[keep] = [end0, end1]
            for stone in beside:
                if degree[stone] >= 2:
                    for n in neighbours[stone]:
                        if self._kill(n):
                            flipped.append(n)
        if end0 != end1:
            near_end1 = neighbours[end1]
            for n in neighbours[end0]:
                if n in near_end1:
                    self._kill(n)
        self._claim_limited(x, end0, end1, flipped, colour)

    def _is_open(self, stone: int) -> bool:
        legal_pos = self.legal_pos
        return any(legal_pos[n] >= 0 for n in self.neighbours[stone])

    def _claim_limited(self, x, end0, end1, flipped, colour) -> None:
        tie = 3 - colour
        new_root = self.root[x]
        if not (self._is_open(end0) or self._is_open(end1)):
            self._claim(new_root, tie, mark=True)
        stones, root = self.stones, self.root
        for cell in flipped:
            for stone in self.neighbours[cell]:
                if stones[stone] == EMPTY or root[stone] == new_root or self.limited[stone]:
                    continue
                pair = self.ends[root[stone]]
                if not (self._is_open(pair[0]) or self._is_open(pair[1])):
                    self._claim(root[stone], tie, mark=True)

    def _claim(self, ribbon: int, tie: int, mark: bool) -> None:
        members = self.members[ribbon]
        black = self.black[ribbon]
        white = len(members) - black
        owner = BLACK if black > white else WHITE if white > black else tie
        stones, limited = self.stones, self.limited
        for stone in members:
            stones[stone] = owner
            if mark:
                limited[stone] = True
        self.black[ribbon] = len(members) if owner == BLACK else 0


def play_random_games(rules: Rules, num_games: int, seed: int = 0) -> tuple[int, int]:
    """Play num_games uniformly random games one after another; returns (moves, games)."""
    rng = random.Random(seed)
    moves = 0
    for _ in range(num_games):
        game = PythonGame(rules)
        while not game.terminal:
            game.step(game.random_action(rng))
            moves += 1
    return moves, num_games
