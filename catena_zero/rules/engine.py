"""The batched Catena engine: all B games of a batch advance in one call, no loop over games.

State is a struct of arrays (state.py) kept up to date incrementally by placement.py: degrees,
ribbon labels and per-ribbon data, the legal mask and count, per-stone legal-neighbour counts.
This module holds the API: new games, legal actions (with ruling 3 for double placement),
validated steps, claims, turn order and the end of the game, random playouts and results.
"""

from __future__ import annotations

import numpy as np

from catena_zero.rules.board import BLACK, EMPTY, NO_ACTION, WHITE, opponent
from catena_zero.rules.placement import (
    common_neighbour_tables,
    place_stones,
    stone_neighbour_tables,
)
from catena_zero.rules.result import compute_result
from catena_zero.rules.state import GameState
from catena_zero.rules.variants import GameType, Rules

# One placement makes at most 21 cells illegal (x, the 6 around x, the 6 around each of its
# two stone neighbours, 2 common neighbours of the new ribbon's ends), so with 22 or more
# legal cells every legal first stone of a double turn leaves a legal second stone.
_TWO_STONE_SAFE = 22
# Uniform proposals tried per game before the exact fallback in random_actions.
_PROPOSALS = 6
_PROPOSAL_BITS = (1 << np.arange(_PROPOSALS, dtype=np.uint8))[:, None]  # [K, 1]
# Index of the lowest set bit of each K-bit pattern (0 for the empty pattern).
_LOWEST_BIT = np.array(
    [(pattern & -pattern).bit_length() - 1 if pattern else 0 for pattern in range(64)],
    dtype=np.intp,
)


def _nonzero_slot(mask: np.ndarray):
    """(slot, column) of the True entries of a [S, K] mask (flatnonzero is cheaper than a
    2-D nonzero)."""
    flat = np.flatnonzero(mask)
    slot = flat // mask.shape[1]
    return slot, flat - slot * mask.shape[1]


class IllegalActionError(ValueError):
    """An illegal action, or an action on a finished game. Names the game index and action."""


class Engine:
    """Batched engine for one set of Rules (komi may differ per game)."""

    def __init__(self, rules: Rules):
        if not isinstance(rules, Rules):
            raise ValueError(f"Engine needs a Rules instance, got {rules!r}")
        self.rules = rules
        self.board = rules.board
        self.num_cells = self.board.num_cells
        self.num_actions = self.board.num_actions
        self.button_action = self.board.button_action
        self._width = self.num_cells + 1  # padded row length
        self._neighbours = self.board.neighbours_padded  # intp [C+1, 6]
        self._neighbours_t = np.ascontiguousarray(self._neighbours.T)  # intp [6, C+1]
        self._common_neighbours = common_neighbour_tables(self.board)
        self._stone_neighbour_tables = stone_neighbour_tables(self.board)
        self._row_base_cache: dict[int, np.ndarray] = {}
        self._fresh_row: dict[str, np.ndarray] | None = None
        self._is_double = rules.game_type == GameType.DOUBLE
        self._is_nokomi = rules.game_type == GameType.NOKOMI
        # Proposal sampling: 16-bit random numbers below the limit map exactly uniformly
        # onto the cells by a modulo.
        self._proposal_limit = (65536 // self.num_cells) * self.num_cells
        # Exact division of a 16-bit number by the cell count as a multiply and a shift
        # (cheaper than numpy's integer modulo): q = (d * M) >> 25 for every d < 2**16.
        self._proposal_multiplier = -(-(1 << 25) // self.num_cells)

    # ------------------------------------------------------------------ creation
    def new_games(self, batch_size: int, komi=0) -> GameState:
        """B fresh games; komi is an int or an int array [B] (validated)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
            raise ValueError(f"batch_size must be an integer, got {batch_size!r}")
        batch_size = int(batch_size)
        if batch_size < 0:
            raise ValueError(f"batch_size must be >= 0, got {batch_size}")
        komi_array = self.rules.validate_komi(komi)
        if komi_array.ndim == 0:
            komi_array = np.full(batch_size, int(komi_array), dtype=np.int32)
        elif komi_array.shape != (batch_size,):
            raise ValueError(f"komi has shape {komi_array.shape}, expected ({batch_size},)")
        cells = self.num_cells
        width = self._width
        legal = np.ones((batch_size, width), dtype=bool)
        legal[:, cells] = False

        def ribbon_array(fill=0):
            return np.full((batch_size, width), fill, dtype=np.int16)

        return GameState(
            stones_padded=np.zeros((batch_size, width), dtype=np.int8),
            legal_padded=legal,
            limited_padded=np.zeros((batch_size, width), dtype=bool),
            degree_padded=np.zeros((batch_size, width), dtype=np.int8),
            label=ribbon_array(cells),
            free=np.zeros((batch_size, width), dtype=np.int8),
            ribbon_length=ribbon_array(),
            ribbon_black=ribbon_array(),
            # The sentinel column reads as a ribbon whose ends are the sentinel, so a missing
            # neighbour needs no special case.
            ribbon_end0=ribbon_array(cells),
            ribbon_end1=ribbon_array(cells),
            to_move=np.full(batch_size, BLACK, dtype=np.int8),
            stones_left=np.ones(batch_size, dtype=np.int8),
            button=np.zeros(batch_size, dtype=np.int8),
            last_placer=np.zeros(batch_size, dtype=np.int8),
            move_number=np.zeros(batch_size, dtype=np.int32),
            terminal=np.zeros(batch_size, dtype=bool),
            komi=komi_array.copy(),
            legal_count=np.full(batch_size, cells, dtype=np.int16),
        )

    def reset_games(self, state: GameState, index) -> None:
        """Restart the games at `index` (int array) in place, keeping their komi."""
        index = state._check_index(index)
        if index.size == 0:
            return
        if self._fresh_row is None:
            fresh = self.new_games(1)
            self._fresh_row = {
                name: array[0] for name, array in fresh._arrays().items() if name != "komi"
            }
        for name, value in self._fresh_row.items():
            getattr(state, name)[index] = value

    # ------------------------------------------------------------------ legality
    def _button_legal(self, state: GameState) -> np.ndarray:  # bool [B]
        if not self.rules.has_button:
            return np.zeros(state.batch_size, dtype=bool)
        legal = (state.button == EMPTY) & ~state.terminal
        if self._is_nokomi:
            legal &= state.move_number > 0
        return legal

    def _needs_exact_first_stone(self, state: GameState) -> np.ndarray:  # bool [B]
        """Double games whose two-stone turn needs the exact ruling-3 filter."""
        return (
            (state.stones_left == 2) & (state.legal_count < _TWO_STONE_SAFE) & ~state.terminal
        )

    def legal_actions(self, state: GameState) -> np.ndarray:
        """bool [B, A]: legal actions; all False for terminal games."""
        cells = self.num_cells
        out = state.legal_padded.copy()  # the sentinel column becomes the button
        out[:, cells] = self._button_legal(state)
        if self._is_double:
            rows = np.flatnonzero(self._needs_exact_first_stone(state))
            if rows.size:
                out[rows, :cells] = self._good_first_stones(state, rows)[:, :cells]
        out[state.terminal] = False
        return out

    def _first_stone_leaves_second(self, state: GameState, rows, cells) -> np.ndarray:
        """bool [P]: placing cells[i] in game rows[i] leaves some legal cell (ruling 3)."""
        rows = np.asarray(rows, dtype=np.intp)
        cells = np.asarray(cells, dtype=np.intp)
        result = np.ones(rows.shape[0], dtype=bool)
        need = np.flatnonzero(state.legal_count[rows] < _TWO_STONE_SAFE)
        if need.size:
            trial = state.take(rows[need])
            colours = np.full(need.size, BLACK, dtype=np.int8)
            self._place(trial, np.arange(need.size), cells[need], colours)
            result[need] = trial.legal_count > 0
        return result

    def _good_first_stones(self, state: GameState, rows: np.ndarray) -> np.ndarray:
        """bool [R, C+1]: legal first stones of a two-stone turn for games `rows`."""
        legal = state.legal_padded[rows]
        need = np.flatnonzero(state.legal_count[rows] < _TWO_STONE_SAFE)
        if need.size:
            pair_row, pair_cell = np.nonzero(legal[need])
            ok = self._first_stone_leaves_second(state, rows[need][pair_row], pair_cell)
            legal[need[pair_row], pair_cell] = ok
        return legal

    # ------------------------------------------------------------------ stepping
    def _row_base(self, batch: int) -> np.ndarray:
        """intp [B]: flat offset of each game's row (cached per batch size)."""
        cached = self._row_base_cache.get(batch)
        if cached is None:
            cached = np.arange(batch, dtype=np.intp) * self._width
            cached.flags.writeable = False
            if len(self._row_base_cache) > 16:
                self._row_base_cache.clear()
            self._row_base_cache[batch] = cached
        return cached

    def _validate_actions(self, state: GameState, actions) -> np.ndarray:
        actions = np.asarray(actions)
        batch = state.batch_size
        if actions.shape != (batch,):
            raise ValueError(f"actions have shape {actions.shape}, expected ({batch},)")
        if actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {actions.dtype}")
        actions = actions.astype(np.intp)
        cells = self.num_cells
        # One unsigned comparison catches both ends of -1..C.
        bad = (actions + 1).view(np.uintp) > cells + 1
        if bad.any():
            game = int(np.argmax(bad))
            raise IllegalActionError(
                f"game {game}: action {int(actions[game])} is outside -1..{cells}"
            )
        active = actions >= 0
        finished = active & state.terminal
        if finished.any():
            game = int(np.argmax(finished))
            raise IllegalActionError(
                f"game {game}: action {self._name(actions[game])} on a finished game"
            )
        # The button reads the sentinel column, never legal: it is then judged apart.
        flat = self._row_base(batch) + np.where(active, actions, cells)
        bad = active & ~state.legal_padded.ravel()[flat]
        is_button = actions == cells
        if self.rules.has_button and is_button.any():
            bad &= ~(is_button & self._button_legal(state))
        if self._is_double:
            check = np.flatnonzero(~bad & active & self._needs_exact_first_stone(state))
            if check.size:
                ok = self._first_stone_leaves_second(state, check, actions[check])
                bad[check[~ok]] = True
        if bad.any():
            game = int(np.argmax(bad))
            raise IllegalActionError(
                f"game {game}: action {self._name(actions[game])} is illegal "
                f"(move {int(state.move_number[game])}, "
                f"{'black' if state.to_move[game] == BLACK else 'white'} to move)"
            )
        return actions

    def _name(self, action) -> str:
        action = int(action)
        return f"{action} ({self.board.action_name(action)})"

    def step(self, state: GameState, actions) -> None:
        """Apply actions [B] in place (NO_ACTION skips a game). IllegalActionError, state
        unchanged, if any action is illegal or targets a finished game."""
        actions = self._validate_actions(state, actions)
        cells = self.num_cells
        if self.rules.has_button:
            button_rows = np.flatnonzero(actions == cells)
            if button_rows.size:
                state.button[button_rows] = state.to_move[button_rows]
                state.to_move[button_rows] = opponent(state.to_move[button_rows])
                state.move_number[button_rows] += 1
        rows = np.flatnonzero((actions >= 0) & (actions < cells))
        if rows.size == 0:
            return
        # Writing through a slice is cheaper than a fancy index when every game moves.
        every = slice(None) if rows.size == state.batch_size else rows
        colours = state.to_move[rows]
        claims = self._place(state, rows, actions[every], colours)
        self._claim(state, *claims, limited=True)
        state.last_placer[every] = colours
        state.move_number[every] += 1
        if self._is_double:
            self._advance_double(state, rows, colours)
            return
        state.to_move[every] = opponent(colours)
        over = rows[state.legal_count[every] == 0]
        if over.size:
            state.terminal[over] = True
            untaken = over[state.button[over] == EMPTY]
            state.button[untaken] = opponent(state.last_placer[untaken])

    def _advance_double(self, state: GameState, rows, colours) -> None:
        first_of_two = state.stones_left[rows] == 2
        state.stones_left[rows[first_of_two]] = 1
        turn_over = rows[~first_of_two]
        if turn_over.size == 0:
            return
        state.to_move[turn_over] = opponent(colours[~first_of_two])
        state.stones_left[turn_over] = 2
        check = turn_over[state.legal_count[turn_over] < _TWO_STONE_SAFE]
        if check.size == 0:
            return
        over = check[~self._good_first_stones(state, check).any(1)]
        if over.size == 0:
            return
        state.terminal[over] = True
        # End rule of double: every ribbon not yet limited is claimed by majority, a tie
        # going to the opponent of the last placer. They stay "not limited".
        width = self._width
        unclaimed = (state.stones_padded[over] != EMPTY) & ~state.limited_padded[over]
        pair_game, pair_cell = np.nonzero(unclaimed)
        games = over[pair_game]
        roots = state.label.ravel()[games * width + pair_cell].astype(np.intp)
        # One entry per ribbon: its root.
        is_root = roots == pair_cell
        tie = opponent(state.last_placer[games[is_root]])
        self._claim(state, games[is_root], roots[is_root], tie, limited=False)

    # ------------------------------------------------------------------ placement
    def _place(self, state: GameState, rows, cells, colours):
        """See placement.place_stones; returns the ribbons that just became limited."""
        return place_stones(self, state, rows, cells, colours)

    def _claim(self, state: GameState, games, roots, tie_colour, limited: bool) -> None:
        """Give each ribbon (games [K], roots [K]) to its majority, ties to tie_colour [K].
        A ribbon may be listed twice; the writes are then identical."""
        if games.size == 0:
            return
        width = self._width
        root_flat = games * width + roots
        length = state.ribbon_length.ravel()[root_flat]
        black = state.ribbon_black.ravel()[root_flat]
        doubled = black * 2
        winner = np.where(doubled > length, np.int8(BLACK), np.int8(WHITE))
        tie = doubled == length
        winner[tie] = np.broadcast_to(tie_colour, tie.shape)[tie]
        # The ribbons' stones, found by scanning their games' rows (fewer numpy calls than
        # treating ribbons of one or two stones apart, which are just their ends).
        members = state.label[games] == roots[:, None].astype(np.int16)  # [K, C+1]
        which, cell = _nonzero_slot(members)
        cell_flat = games[which] * width + cell
        state.stones_padded.ravel()[cell_flat] = winner[which]
        if limited:
            state.limited_padded.ravel()[cell_flat] = True
        state.ribbon_black.ravel()[root_flat] = np.where(winner == BLACK, length, 0)

    # ------------------------------------------------------------------ playouts / results
    def random_actions(self, state: GameState, rng: np.random.Generator) -> np.ndarray:
        """int [B]: a uniformly random legal action per game, NO_ACTION for finished games.

        The button (when legal) is taken with probability 1 / (legal cells + 1); otherwise
        a few uniform cell proposals, the first legal one taken (rejection sampling, so
        exactly uniform); games where all fail use an exact draw."""
        batch = state.batch_size
        cells = self.num_cells
        row_base = self._row_base(batch)
        raw = rng.bit_generator.random_raw((_PROPOSALS * batch + 3) // 4)
        draws = raw.view(np.uint16)[: _PROPOSALS * batch].reshape(_PROPOSALS, batch)
        valid = draws < self._proposal_limit
        proposals = draws.astype(np.intp)  # [K, B]
        quotient = proposals * self._proposal_multiplier
        quotient >>= 25
        quotient *= cells
        proposals -= quotient  # draws % cells
        accepted = (valid & state.legal_padded.ravel()[proposals + row_base]).view(np.uint8)
        # Bit k set when proposal k is accepted; the first accepted one read off a table
        # (cheaper than argmax along the short axis).
        pattern = (accepted * _PROPOSAL_BITS).sum(0, dtype=np.uint8)  # [B]
        slot = _LOWEST_BIT[pattern]
        choice = proposals.ravel()[slot * batch + np.arange(batch)]
        fallback = pattern == 0
        if self.rules.has_button:
            button = self._button_legal(state)
            take = button & (rng.random(batch) * (state.legal_count + 1) < 1.0)
            choice[take] = cells
            fallback &= ~take
        if self._is_double:
            fallback |= self._needs_exact_first_stone(state)
        fallback &= ~state.terminal
        rows = fallback.nonzero()[0]
        if rows.size:
            mask = state.legal_padded[rows]  # [R, C+1]; the sentinel column is False
            if self._is_double:
                exact = self._needs_exact_first_stone(state)[rows].nonzero()[0]
                if exact.size:
                    mask[exact] = self._good_first_stones(state, rows[exact])
            # The target-th legal cell of each row, read off the row-major list of all of them.
            if self._is_double:
                counts = np.count_nonzero(mask, axis=1)
            else:
                counts = state.legal_count[rows].astype(np.intp)  # the same count, kept
            legal_flat = mask.ravel().nonzero()[0]
            starts = np.cumsum(counts) - counts
            target = np.floor(rng.random(rows.size) * counts).astype(np.intp)
            found = counts > 0
            picked = legal_flat[(starts + target)[found]] % self._width
            choice[rows] = NO_ACTION
            choice[rows[found]] = picked
        choice[state.terminal] = NO_ACTION
        return choice.astype(np.int64)

    def result(self, state: GameState):
        """GameResult (winner int8 [B], margin float32 [B] from Black's view)."""
        return compute_result(self.rules, state)
