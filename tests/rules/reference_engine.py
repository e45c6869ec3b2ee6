"""A slow, one-game Catena engine written straight from the definitions in RULES.md.

It exists only to check the fast batched engine (`catena_zero.rules`) and must never
import it. Everything is recomputed from scratch with plain Python: groups by flood
fill, a ribbon is a group whose stones' adjacency graph is a simple path, a placement
is legal iff the group containing the new stone is a ribbon afterwards, a ribbon is
limited iff no empty cell adjacent to it is a legal placement. Ruling 3 (double
placement) is decided by brute force: try every legal first stone and look for a
legal second one. Speed is irrelevant here; clarity against RULES.md is the point.

Geometry and notation are also rebuilt from RULES.md: cells (c, r) with
0 <= c, r <= 2n-2 and |c - r| <= n-1, ordered by (col, row); names `A`+c then r+1.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

EMPTY, BLACK, WHITE = 0, 1, 2
GAME_TYPES = ("komi", "nokomi", "double")
SCORINGS = ("standard", "longest", "quadratic")
# RULES.md: the neighbours of (c, r), in the order ARCHITECTURE.md fixes.
DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1))
_CELL_PATTERN = re.compile(r"^([A-Za-z])([0-9]+)$")


def opponent(colour: int) -> int:
    return 3 - colour


class RefBoard:
    """Cells, neighbours, names and the 12 symmetries of a side-n board."""

    def __init__(self, side: int):
        if not isinstance(side, int) or isinstance(side, bool) or not 2 <= side <= 10:
            raise ValueError(f"board side {side!r} is outside 2..10")
        self.side = side
        span = 2 * side - 1
        self.coords = [
            (c, r) for c in range(span) for r in range(span) if abs(c - r) <= side - 1
        ]
        self.index = {coord: i for i, coord in enumerate(self.coords)}
        self.num_cells = len(self.coords)
        self.button_action = self.num_cells
        self.num_actions = self.num_cells + 1
        self.neighbours = [
            [self.index[(c + dc, r + dr)]
             for dc, dr in DIRECTIONS if (c + dc, r + dr) in self.index]
            for c, r in self.coords
        ]
        self.symmetries = self._build_symmetries()

    def cell_name(self, cell: int) -> str:
        c, r = self.coords[cell]
        return f"{chr(ord('A') + c)}{r + 1}"

    def parse_cell(self, text: str) -> int:
        match = _CELL_PATTERN.match(text.strip()) if isinstance(text, str) else None
        if match is None:
            raise ValueError(f"malformed cell {text!r}")
        c = ord(match.group(1).upper()) - ord("A")
        r = int(match.group(2)) - 1
        if (c, r) not in self.index:
            raise ValueError(f"cell {text!r} is not on the side-{self.side} board")
        return self.index[(c, r)]

    def action_name(self, action: int) -> str:
        return "button" if action == self.button_action else self.cell_name(action)

    def _build_symmetries(self) -> list[list[int]]:
        """12 permutations: rotations by 60 degrees about the centre, each with and
        without the reflection swapping c and r (both keep the neighbour set)."""
        centre = self.side - 1

        def rotate(x: int, y: int) -> tuple[int, int]:
            # Maps direction (1,0)->(1,1)->(0,1)->(-1,0)->(-1,-1)->(0,-1)->(1,0).
            return x - y, x

        tables = []
        for reflect in (False, True):
            for turns in range(6):
                table = []
                for c, r in self.coords:
                    x, y = c - centre, r - centre
                    if reflect:
                        x, y = y, x
                    for _ in range(turns):
                        x, y = rotate(x, y)
                    table.append(self.index[(x + centre, y + centre)])
                tables.append(table)
        return tables


@dataclass
class RefGame:
    """One game. `stones[i]` is the colour on cell i (claims applied)."""

    side: int
    game_type: str = "komi"
    scoring: str = "standard"
    komi: int = 0
    board: RefBoard = field(init=False)
    stones: list[int] = field(init=False)
    limited: list[bool] = field(init=False)
    to_move: int = field(init=False, default=BLACK)
    stones_left: int = field(init=False, default=1)
    button: int = field(init=False, default=EMPTY)
    last_placer: int = field(init=False, default=EMPTY)
    move_number: int = field(init=False, default=0)
    terminal: bool = field(init=False, default=False)
    history: list[int] = field(init=False, default_factory=list)
    _legal_cache: tuple | None = field(init=False, default=None, repr=False, compare=False)
    # Counts of rule situations met (claims, ties, ...), so tests can show their coverage.
    events: Counter = field(init=False, default_factory=Counter, repr=False, compare=False)

    def __post_init__(self):
        if self.game_type not in GAME_TYPES:
            raise ValueError(f"unknown game type {self.game_type!r}")
        if self.scoring not in SCORINGS:
            raise ValueError(f"unknown scoring {self.scoring!r}")
        self.board = RefBoard(self.side)
        low, high = komi_range(self.game_type, self.scoring)
        if not isinstance(self.komi, int) or not low <= self.komi <= high:
            raise ValueError(f"komi {self.komi!r} is outside {low}..{high}")
        self.stones = [EMPTY] * self.board.num_cells
        self.limited = [False] * self.board.num_cells

    @property
    def has_button(self) -> bool:
        return self.game_type != "double"

    def copy(self) -> RefGame:
        other = RefGame(self.side, self.game_type, self.scoring, self.komi)
        other.stones = list(self.stones)
        other.limited = list(self.limited)
        for name in ("to_move", "stones_left", "button", "last_placer", "move_number",
                     "terminal"):
            setattr(other, name, getattr(self, name))
        other.history = list(self.history)
        return other

    # ----- definitions -----------------------------------------------------------------

    def group_of(self, cell: int, stones: list[int] | None = None) -> list[int]:
        """Flood fill over stones (any colour) from `cell`, which must hold a stone."""
        stones = self.stones if stones is None else stones
        seen = {cell}
        frontier = [cell]
        while frontier:
            current = frontier.pop()
            for other in self.board.neighbours[current]:
                if stones[other] != EMPTY and other not in seen:
                    seen.add(other)
                    frontier.append(other)
        return sorted(seen)

    def groups(self) -> list[list[int]]:
        seen: set[int] = set()
        result = []
        for cell in range(self.board.num_cells):
            if self.stones[cell] != EMPTY and cell not in seen:
                group = self.group_of(cell)
                seen.update(group)
                result.append(group)
        return result

    def is_ribbon(self, group: list[int]) -> bool:
        """The induced adjacency graph of `group` (connected) is a simple path."""
        members = set(group)
        degrees = [sum(1 for other in self.board.neighbours[cell] if other in members)
                   for cell in group]
        edges = sum(degrees) // 2
        return max(degrees) <= 2 and edges == len(group) - 1

    def ribbon_legal(self, cell: int) -> bool:
        """Placement legality by the ribbon rule (colours do not matter)."""
        if self.stones[cell] != EMPTY:
            return False
        self.stones[cell] = BLACK
        try:
            return self.is_ribbon(self.group_of(cell))
        finally:
            self.stones[cell] = EMPTY

    def ribbon_legal_cells(self) -> list[bool]:
        """Cached per occupancy, since claims never change legality."""
        occupancy = tuple(colour != EMPTY for colour in self.stones)
        if self._legal_cache is None or self._legal_cache[0] != occupancy:
            self._legal_cache = (
                occupancy, [self.ribbon_legal(cell) for cell in range(self.board.num_cells)])
        return list(self._legal_cache[1])

    def is_limited(self, group: list[int], legal: list[bool]) -> bool:
        return not any(legal[other] for cell in group for other in self.board.neighbours[cell])

    def two_stone_turn_possible(self) -> bool:
        return any(self._first_stone_ok(cell) for cell in range(self.board.num_cells))

    def _first_stone_ok(self, cell: int) -> bool:
        """Ruling 3: a legal first stone that leaves at least one legal second stone."""
        if not self.ribbon_legal(cell):
            return False
        saved = self.stones[cell]
        self.stones[cell] = self.to_move
        try:
            return any(self.ribbon_legal(other) for other in range(self.board.num_cells))
        finally:
            self.stones[cell] = saved

    def legal_actions(self) -> list[bool]:
        """Mask over cells then the button, length C + 1."""
        mask = [False] * self.board.num_actions
        if self.terminal:
            return mask
        legal = self.ribbon_legal_cells()
        for cell in range(self.board.num_cells):
            if self.game_type == "double" and self.stones_left == 2:
                mask[cell] = legal[cell] and self._first_stone_ok(cell)
            else:
                mask[cell] = legal[cell]
        mask[self.board.button_action] = (
            self.has_button
            and self.button == EMPTY
            and not (self.game_type == "nokomi" and self.move_number == 0)
        )
        return mask

    # ----- play ------------------------------------------------------------------------

    def step(self, action: int, legal: list[bool] | None = None) -> None:
        """Play `action`; `legal` may pass this position's `legal_actions()` to save time."""
        if self.terminal:
            raise ValueError("the game is over")
        legal = self.legal_actions() if legal is None else legal
        if not 0 <= action < self.board.num_actions or not legal[action]:
            raise ValueError(f"illegal action {action}")
        self.history.append(action)
        self.move_number += 1
        if action == self.board.button_action:
            self.button = self.to_move
            self.to_move = opponent(self.to_move)
            return
        placer = self.to_move
        self.stones[action] = placer
        self.last_placer = placer
        self._claim_newly_limited(placer)
        if self.game_type == "double":
            self.stones_left -= 1
            if self.stones_left == 0:
                self.to_move = opponent(placer)
                self.stones_left = 2
                if not self.two_stone_turn_possible():
                    self._end_double()
            return
        if not any(self.ribbon_legal_cells()):
            self.terminal = True
            if self.button == EMPTY:
                self.button = opponent(placer)
        else:
            self.to_move = opponent(placer)

    def _claim(self, group: list[int], tie_goes_to: int) -> int:
        black = sum(1 for cell in group if self.stones[cell] == BLACK)
        white = len(group) - black
        owner = BLACK if black > white else WHITE if white > black else tie_goes_to
        self.events["claim"] += 1
        self.events["tie claim"] += black == white
        self.events["claim changing colours"] += 0 < black < len(group)
        for cell in group:
            self.stones[cell] = owner
        return owner

    def _claim_newly_limited(self, placer: int) -> None:
        legal = self.ribbon_legal_cells()
        for group in self.groups():
            if self.limited[group[0]]:
                continue
            if self.is_limited(group, legal):
                had_placer_stones = any(self.stones[cell] == placer for cell in group)
                owner = self._claim(group, opponent(placer))
                self.events["claim of a ribbon the stone does not touch"] += (
                    self.history[-1] not in group)
                self.events["mover's own stones claimed by the opponent"] += (
                    had_placer_stones and owner != placer)
                for cell in group:
                    self.limited[cell] = True

    def _end_double(self) -> None:
        self.terminal = True
        self.events["double ends with a legal cell left"] += any(self.ribbon_legal_cells())
        for group in self.groups():
            if not self.limited[group[0]]:
                self.events["double end claim"] += 1
                self._claim(group, opponent(self.last_placer))

    # ----- result ----------------------------------------------------------------------

    def ribbons_by_owner(self) -> list[tuple[int, int]]:
        """(owner, length) per ribbon; at the end each ribbon is one colour."""
        result = []
        for group in self.groups():
            colours = {self.stones[cell] for cell in group}
            if len(colours) != 1:
                raise AssertionError(f"ribbon {group} has mixed colours at the end")
            result.append((colours.pop(), len(group)))
        return result

    def result(self) -> tuple[int, float]:
        """(winner, margin signed from Black's view); winner EMPTY = draw."""
        if not self.terminal:
            raise ValueError("the game is not over")
        ribbons = self.ribbons_by_owner()
        button_bonus = {BLACK: 0.0, WHITE: 0.0}
        if self.button != EMPTY:
            button_bonus[self.button] = 0.5
        if self.scoring == "longest":
            return self._longest_result(ribbons)
        if self.scoring == "standard":
            points = {colour: float(sum(n for owner, n in ribbons if owner == colour))
                      for colour in (BLACK, WHITE)}
        else:
            points = {colour: float(sum(n * n for owner, n in ribbons if owner == colour))
                      for colour in (BLACK, WHITE)}
        black = points[BLACK] + button_bonus[BLACK]
        white = points[WHITE] + button_bonus[WHITE] + self.komi
        margin = black - white
        winner = BLACK if margin > 0 else WHITE if margin < 0 else EMPTY
        self.events[f"{self.scoring} draw"] += winner == EMPTY
        return winner, margin

    def _longest_result(self, ribbons: list[tuple[int, int]]) -> tuple[int, float]:
        lengths = [[owner, n] for owner, n in ribbons]
        white_lengths = [entry for entry in lengths if entry[0] == WHITE]
        if white_lengths:  # Ruling 5: without a White ribbon the komi goes nowhere.
            max(white_lengths, key=lambda entry: entry[1])[1] += self.komi
        elif self.komi:
            self.events["longest: komi with no White ribbon"] += 1
        remaining = list(lengths)
        # Remove pairs of equal length and opposite colours until none remains.
        while True:
            pair = next(
                ((i, j) for i in range(len(remaining)) for j in range(len(remaining))
                 if remaining[i][0] == BLACK and remaining[j][0] == WHITE
                 and remaining[i][1] == remaining[j][1]),
                None,
            )
            if pair is None:
                break
            remaining = [entry for k, entry in enumerate(remaining) if k not in pair]
            self.events["longest: pair removed"] += 1
        if remaining:
            owner, length = max(remaining, key=lambda entry: entry[1])
            return owner, float(length) if owner == BLACK else -float(length)
        self.events["longest: no ribbon remains"] += 1
        if self.button != EMPTY:
            return self.button, 0.5 if self.button == BLACK else -0.5
        return EMPTY, 0.0

    def result_string(self) -> str:
        winner, margin = self.result()
        return result_string(winner, margin)


def komi_range(game_type: str, scoring: str) -> tuple[int, int]:
    if game_type != "komi":
        return 0, 0
    return (0, 1000) if scoring == "quadratic" else (0, 15)


def result_string(winner: int, margin: float) -> str:
    if winner == EMPTY:
        return "0"
    size = abs(margin)
    text = str(int(size)) if size == int(size) else str(size)
    return ("B+" if winner == BLACK else "W+") + text


def legal_by_characterisation(game: RefGame, cell: int) -> bool:
    """RULES.md's "useful consequence": at most two stone neighbours, each with at most
    one stone neighbour, and two of them in different groups."""
    if game.stones[cell] != EMPTY:
        return False
    stone_neighbours = [other for other in game.board.neighbours[cell]
                        if game.stones[other] != EMPTY]
    if len(stone_neighbours) > 2:
        return False
    for other in stone_neighbours:
        if sum(1 for far in game.board.neighbours[other] if game.stones[far] != EMPTY) > 1:
            return False
    if len(stone_neighbours) == 2:
        return stone_neighbours[1] not in game.group_of(stone_neighbours[0])
    return True
