"""Exact minimax solver for small Catena boards.

The batched engine in `catena_zero.rules` is built for throughput over many games; a
depth-first solver needs the opposite: one position, cheap children, hashable keys.
So this module keeps its own compact single-position representation on Python ints
used as bit masks (cell i is bit i) and is cross-checked against `rules.Game` in the
tests.

Facts the representation relies on (RULES.md, "Useful consequence"):
- an empty cell is legal iff it has at most two stone neighbours, each of them is a
  ribbon end (at most one stone neighbour), and two such neighbours are not the two
  ends of one ribbon;
- legality is monotone, so after a placement only cells that were legal and lie near
  the new stone (or next to both ends of the new ribbon) need to be re-examined;
- empty cells next to a ribbon's interior are illegal, so a ribbon is limited iff no
  cell next to one of its two ends is legal.

Values are Black-view result margins in *half points* (ints), so the button's half
point stays exact; `ExactSolver.value` returns them divided by two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from catena_zero.rules import BLACK, GameType, Scoring

INFINITY = 1 << 40
CHUNK_BITS = 12  # symmetry lookup tables map 12-bit pieces of a position code
CHUNK_MASK = (1 << CHUNK_BITS) - 1

GAME_TYPES = tuple(member.value for member in GameType)  # the rules' names, as strings
SCORINGS = tuple(member.value for member in Scoring)
PROGRESS_NODES = 1 << 16  # nodes searched between calls of an ExactSolver's progress
# progress(nodes searched, positions stored): told every `progress_every` nodes of a solve.
ProgressFn = Callable[[int, int], None]


class SolverBudgetExceeded(RuntimeError):
    """Raised when a solve visits more positions than its budget allows."""


def enum_value(value) -> str:
    """Plain lower-case string of a GameType/Scoring enum or string."""
    return str(getattr(value, "value", value)).lower()


def iter_bits(mask: int) -> Iterator[int]:
    """Indices of the set bits of `mask`, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class SolverTables:
    """Bit-mask tables of one board: neighbour masks and symmetry permutations.

    neighbours: int [C, 6] padded with C (the Board convention);
    symmetries: int [12, C], symmetries[k, i] = image of cell i.
    """

    def __init__(self, neighbours: np.ndarray, symmetries: np.ndarray):
        neighbours = np.asarray(neighbours)
        symmetries = np.asarray(symmetries)
        self.num_cells = int(neighbours.shape[0])
        cells = self.num_cells
        self.neighbour_mask = tuple(
            sum(1 << int(j) for j in row if int(j) < cells) for row in neighbours
        )
        # Cells whose legality can change when a stone lands on i: i's neighbours
        # (their degree grows) and the neighbours of those (their neighbour may stop
        # being a ribbon end).
        self.near_mask = tuple(
            self.neighbour_mask[i]
            | _or_all(self.neighbour_mask[j] for j in iter_bits(self.neighbour_mask[i]))
            for i in range(cells)
        )
        self.full_mask = (1 << cells) - 1
        self.symmetries = symmetries.astype(np.int64)
        # The position code packs occupied cells in bits [0, C) and black stones in
        # bits [C, 2C); each symmetry permutes it chunk by chunk through lookup tables.
        code_bits = 2 * cells
        self.num_chunks = (code_bits + CHUNK_BITS - 1) // CHUNK_BITS
        destination = [
            [int(perm[i % cells]) + (cells if i >= cells else 0) for i in range(code_bits)]
            for perm in self.symmetries
        ]
        self.symmetry_tables = []
        for dest in destination:
            chunks = []
            for chunk in range(self.num_chunks):
                bits = [(1 << dest[source]) if source < code_bits else 0
                        for source in range(CHUNK_BITS * chunk, CHUNK_BITS * (chunk + 1))]
                table = [0] * (1 << CHUNK_BITS)
                for value in range(1, 1 << CHUNK_BITS):
                    low = value & -value  # table[value] = table[value without low bit] | image
                    table[value] = table[value ^ low] | bits[low.bit_length() - 1]
                chunks.append(table)
            self.symmetry_tables.append(tuple(chunks))

    def canonical_code(self, occupied: int, black: int) -> int:
        """Smallest packed position code over the 12 symmetries."""
        code = occupied | black << self.num_cells
        pieces = []
        while code:
            pieces.append(code & CHUNK_MASK)
            code >>= CHUNK_BITS
        best = None
        for chunks in self.symmetry_tables:
            image = 0
            for table, piece in zip(chunks, pieces, strict=False):  # no high zero pieces
                image |= table[piece]
            if best is None or image < best:
                best = image
        return best


def _or_all(masks) -> int:
    total = 0
    for mask in masks:
        total |= mask
    return total


@dataclass(slots=True)
class SolverState:
    """One position. Masks are ints over cells; partner/ribbon are indexed by cell.

    For every ribbon end e (including limited ribbons), partner[e] is the ribbon's
    other end (e itself for a single stone) and ribbon[e] its stone mask; entries of
    cells that are not ends are stale and never read.
    """

    occupied: int
    black: int
    limited: int  # stones of limited (claimed) ribbons
    ends: int  # stones with at most one stone neighbour
    legal: int  # empty cells where a placement is legal
    partner: tuple
    ribbon: tuple
    button: int  # 0 = not taken, else holder (BLACK/WHITE); assigned at the end
    to_move: int
    stones_left: int  # stones still to place in this turn (double: 1 or 2)
    terminal: bool = False


class ExactSolver:
    """Alpha-beta minimax of the result margin with a symmetric transposition table.

    komi is the whole-number komi added to White's score (or, in longest scoring, to
    White's longest ribbon). Black maximises the margin, White minimises it. `progress`
    (ProgressFn) is told the nodes and positions every `progress_every` nodes, so a solve
    of minutes can show that it moves.
    """

    def __init__(self, tables: SolverTables, game_type="komi", scoring="standard",
                 komi: int = 0, max_positions: int | None = None, symmetric_keys: bool = True,
                 progress: ProgressFn | None = None, progress_every: int = PROGRESS_NODES):
        self.tables = tables
        self.game_type = enum_value(game_type)
        self.scoring = enum_value(scoring)
        if self.game_type not in GAME_TYPES:
            raise ValueError(f"unknown game type {game_type!r}; expected one of {GAME_TYPES}")
        if self.scoring not in SCORINGS:
            raise ValueError(f"unknown scoring {scoring!r}; expected one of {SCORINGS}")
        if self.game_type != "komi" and komi != 0:
            raise ValueError(f"komi {komi} given for game type {self.game_type}; only 0 allowed")
        self.komi = int(komi)
        self.double = self.game_type == "double"
        self.has_button = not self.double
        self.max_positions = max_positions
        # Symmetric keys merge the 12 images of a position, which pays from the empty board;
        # a late position's images rarely meet, and the canonical code is most of a node's cost.
        self.symmetric_keys = bool(symmetric_keys)
        self.table: dict[int, tuple[int, int]] = {}
        self.nodes = 0
        if progress_every < 1:
            raise ValueError(f"progress_every must be >= 1, got {progress_every}")
        self.progress = progress
        self.progress_every = int(progress_every)

    # ----------------------------------------------------------------- positions
    def initial_state(self) -> SolverState:
        cells = self.tables.num_cells
        return SolverState(0, 0, 0, 0, self.tables.full_mask, (0,) * cells, (0,) * cells,
                           0, BLACK, 1, False)

    def take_button(self, state: SolverState) -> SolverState:
        return SolverState(state.occupied, state.black, state.limited, state.ends, state.legal,
                           state.partner, state.ribbon, state.to_move, 3 - state.to_move, 1,
                           False)

    def place(self, state: SolverState, cell: int) -> SolverState:
        """The position after the player to move places a stone on `cell` (assumed legal)."""
        tables = self.tables
        neighbour_mask = tables.neighbour_mask
        mover = state.to_move
        bit = 1 << cell
        touching = neighbour_mask[cell] & state.occupied
        occupied = state.occupied | bit
        black = state.black | bit if mover == BLACK else state.black
        partner = list(state.partner)
        ribbon = list(state.ribbon)
        ends = state.ends
        if not touching:
            first_end = second_end = cell
            partner[cell] = cell
            ribbon[cell] = bit
            ends |= bit
        elif not touching & (touching - 1):
            joined = touching.bit_length() - 1
            far_end = partner[joined]
            if far_end != joined:
                ends &= ~(1 << joined)
            ends |= bit
            first_end, second_end = cell, far_end
            mask = ribbon[joined] | bit
            partner[cell], partner[far_end] = far_end, cell
            ribbon[cell] = ribbon[far_end] = mask
        else:
            low = touching & -touching
            a, b = low.bit_length() - 1, (touching ^ low).bit_length() - 1
            first_end, second_end = partner[a], partner[b]
            for joined in (a, b):
                if partner[joined] != joined:
                    ends &= ~(1 << joined)
            mask = ribbon[a] | ribbon[b] | bit
            partner[first_end], partner[second_end] = second_end, first_end
            ribbon[first_end] = ribbon[second_end] = mask

        old_legal = state.legal
        legal = old_legal & ~bit
        recheck = legal & (tables.near_mask[cell]
                           | neighbour_mask[first_end] & neighbour_mask[second_end])
        for other in iter_bits(recheck):
            if not self._cell_is_legal(other, occupied, ends, partner):
                legal &= ~(1 << other)

        # Claims: the new ribbon, and every live ribbon with an end next to a cell that
        # just became illegal, is limited once no cell next to its ends is legal.
        lost = old_legal & ~legal
        limited = state.limited
        live_ends = ends & ~limited
        touched = 0
        for gone in iter_bits(lost):
            touched |= neighbour_mask[gone]
        candidates = (touched & live_ends) | (1 << first_end)
        checked = 0
        for end in iter_bits(candidates):
            other_end = partner[end]
            if checked >> end & 1:
                continue
            checked |= 1 << end | 1 << other_end
            if not (neighbour_mask[end] | neighbour_mask[other_end]) & legal:
                mask = ribbon[end]
                limited |= mask
                black = self._claim(mask, black, tie_to=3 - mover)

        button = state.button
        terminal = False
        if self.double:
            if state.stones_left == 2:
                to_move, stones_left = mover, 1
            else:
                to_move, stones_left = 3 - mover, 2
        else:
            to_move, stones_left = 3 - mover, 1
            if not legal:
                terminal = True
                if button == 0:
                    button = 3 - mover
        return SolverState(occupied, black, limited, ends, legal, tuple(partner), tuple(ribbon),
                           button, to_move, stones_left, terminal)

    def _cell_is_legal(self, cell: int, occupied: int, ends: int, partner) -> bool:
        touching = self.tables.neighbour_mask[cell] & occupied
        if not touching:
            return True
        if touching & ~ends:
            return False
        rest = touching & (touching - 1)
        if not rest:
            return True
        if rest & (rest - 1):
            return False
        return partner[(touching ^ rest).bit_length() - 1] != rest.bit_length() - 1

    @staticmethod
    def _claim(mask: int, black: int, tie_to: int) -> int:
        """Recolour a newly limited ribbon to its majority owner (tie to `tie_to`)."""
        black_count = (mask & black).bit_count()
        white_count = mask.bit_count() - black_count
        if black_count > white_count or (black_count == white_count and tie_to == BLACK):
            return black | mask
        return black & ~mask

    def iter_children(self, state: SolverState) -> Iterator[tuple[int, SolverState]]:
        """(action, child) pairs, generated lazily (a cutoff skips the rest); the button is
        action C and comes last. Nothing for a finished game."""
        if state.terminal:
            return
        first_of_two = self.double and state.stones_left == 2
        for cell in iter_bits(state.legal):
            child = self.place(state, cell)
            # Ruling 3: the first stone of a two-stone turn must leave a legal second.
            if not first_of_two or child.legal:
                yield cell, child
        if (self.has_button and state.button == 0 and state.legal
                and not (self.game_type == "nokomi" and state.occupied == 0)):
            yield self.tables.num_cells, self.take_button(state)

    def children(self, state: SolverState) -> list[tuple[int, SolverState]]:
        """Every (action, child) pair; empty for a finished game."""
        return list(self.iter_children(state))

    # ------------------------------------------------------------------- scoring
    def ribbons(self, state: SolverState) -> list[int]:
        """Stone masks of every ribbon on the board."""
        return [state.ribbon[end] for end in iter_bits(state.ends) if state.partner[end] >= end]

    def final_black(self, state: SolverState) -> int:
        """Black mask after the double game type's end-of-game claims (tie to to_move)."""
        black = state.black
        live = state.ends & ~state.limited
        for end in iter_bits(live):
            if state.partner[end] >= end:
                black = self._claim(state.ribbon[end], black, tie_to=state.to_move)
        return black

    def terminal_value(self, state: SolverState) -> int:
        """Black-view result margin in half points (ruling 6), komi included."""
        black = self.final_black(state) if self.double else state.black
        button_half = 0
        if self.has_button:
            button_half = 1 if state.button == BLACK else -1
        if self.scoring == "standard":
            black_count = black.bit_count()
            white_count = state.occupied.bit_count() - black_count
            return 2 * (black_count - white_count - self.komi) + button_half
        ribbons = self.ribbons(state)
        if self.scoring == "quadratic":
            total = 0
            for mask in ribbons:
                length = mask.bit_count()
                total += length * length if mask & black else -length * length
            return 2 * (total - self.komi) + button_half
        return self._longest_half_margin(ribbons, black, button_half)

    def _longest_half_margin(self, ribbons: list[int], black: int, button_half: int) -> int:
        counts: dict[int, int] = {}
        white_lengths = [mask.bit_count() for mask in ribbons if not mask & black]
        for mask in ribbons:
            if mask & black:
                length = mask.bit_count()
                counts[length] = counts.get(length, 0) + 1
        if white_lengths:
            white_lengths.sort()
            white_lengths[-1] += self.komi  # ruling 5: only when White has a ribbon
            for length in white_lengths:
                counts[length] = counts.get(length, 0) - 1
        for length in sorted(counts, reverse=True):
            if counts[length] > 0:
                return 2 * length
            if counts[length] < 0:
                return -2 * length
        return button_half  # no ribbon remains: the button decides (double: draw)

    # -------------------------------------------------------------------- search
    def key(self, state: SolverState) -> int:
        """Transposition key: the stones (canonical under the 12 symmetries when
        `symmetric_keys`) plus the turn state."""
        if self.symmetric_keys:
            code = self.tables.canonical_code(state.occupied, state.black)
        else:
            code = state.occupied | state.black << self.tables.num_cells
        return ((code * 3 + state.button) * 2 + state.to_move - 1) * 2 + state.stones_left - 1

    def search(self, state: SolverState, alpha: int, beta: int) -> int:
        """Fail-soft alpha-beta; exact when the result lies strictly inside (alpha, beta)."""
        key = self.key(state)
        entry = self.table.get(key)
        if entry is not None:
            lower, upper = entry
            if lower >= beta or lower == upper:
                return lower
            if upper <= alpha:
                return upper
            alpha, beta = max(alpha, lower), min(beta, upper)
        else:
            lower, upper = -INFINITY, INFINITY
        self.nodes += 1
        if self.progress is not None and not self.nodes % self.progress_every:
            self.progress(self.nodes, len(self.table))
        if self.max_positions is not None and len(self.table) > self.max_positions:
            raise SolverBudgetExceeded(
                f"transposition table passed {self.max_positions} positions")
        window_low, window_high = alpha, beta
        maximise = state.to_move == BLACK
        best = -INFINITY if maximise else INFINITY
        any_move = False
        for _, child in self.iter_children(state):
            any_move = True
            value = self.search(child, alpha, beta)
            if maximise:
                if value > best:
                    best = value
                    alpha = max(alpha, value)
            elif value < best:
                best = value
                beta = min(beta, value)
            if alpha >= beta:
                break
        if not any_move:
            value = self.terminal_value(state)
            self.table[key] = (value, value)
            return value
        if best <= window_low:
            upper = min(upper, best)
        elif best >= window_high:
            lower = max(lower, best)
        else:
            lower = upper = best
        self.table[key] = (lower, upper)
        return best

    def half_value(self, state: SolverState | None = None) -> int:
        """Exact Black-view margin in half points."""
        state = self.initial_state() if state is None else state
        return self.search(state, -INFINITY, INFINITY)

    def value(self, state: SolverState | None = None) -> float:
        """Exact Black-view result margin (points) under perfect play."""
        return self.half_value(state) / 2

    def action_values(self, state: SolverState | None = None) -> dict[int, float]:
        """Exact margin after each legal action (cells, and C for the button)."""
        state = self.initial_state() if state is None else state
        values: dict[int, float] = {}
        by_key: dict[int, float] = {}
        for action, child in self.children(state):
            key = self.key(child)
            if key not in by_key:
                by_key[key] = self.half_value(child) / 2
            values[action] = by_key[key]
        return values

    # ------------------------------------------------------------- conversions
    def state_from_arrays(self, stones, limited, button: int, to_move: int,
                          stones_left: int = 1, terminal: bool = False) -> SolverState:
        """Solver position from one game's engine fields (stones/limited: [C])."""
        stones = np.asarray(stones)
        cells = self.tables.num_cells
        if stones.shape != (cells,):
            raise ValueError(f"stones has shape {stones.shape}, expected ({cells},)")
        neighbour_mask = self.tables.neighbour_mask
        occupied = sum(1 << int(i) for i in np.flatnonzero(stones))
        black = sum(1 << int(i) for i in np.flatnonzero(stones == BLACK))
        limited_mask = sum(1 << int(i) for i in np.flatnonzero(np.asarray(limited)))
        ends = 0
        for cell in iter_bits(occupied):
            if (neighbour_mask[cell] & occupied).bit_count() <= 1:
                ends |= 1 << cell
        partner, ribbon = [0] * cells, [0] * cells
        for end in iter_bits(ends):
            mask, current = 1 << end, end
            while True:
                following = neighbour_mask[current] & occupied & ~mask
                if not following:
                    break
                current = following.bit_length() - 1
                mask |= 1 << current
            partner[end], ribbon[end] = current, mask
        legal = 0
        for cell in iter_bits(self.tables.full_mask & ~occupied):
            if self._cell_is_legal(cell, occupied, ends, partner):
                legal |= 1 << cell
        return SolverState(occupied, black, limited_mask, ends, legal, tuple(partner),
                           tuple(ribbon), int(button), int(to_move), int(stones_left),
                           bool(terminal))
