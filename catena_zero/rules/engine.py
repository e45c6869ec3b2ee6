"""The batched Catena engine: all B games of a batch advance in one call, no loop over games.

Legality is maintained incrementally. An empty cell is legal iff it has at most two stone
neighbours, each with at most one stone neighbour, and two such neighbours lie in different
ribbons. Legality is monotone, so after a placement at x only these cells can turn illegal:
x itself; the neighbours of x (their degree grew, and x may be interior); the neighbours of the
stones beside x that became interior; the common neighbours of the new ribbon's two ends.

A ribbon becomes limited when no legal cell touches it. Only two kinds can become limited by a
placement: the new stone's ribbon, and ribbons with an end beside a cell that just turned
illegal (found from the flipped cells' stone neighbours). Per-step work is therefore a few
fixed-size gathers laid out `[slots, P]` plus small sparse lists, never a scan of the board.
"""

from __future__ import annotations

import functools

import numpy as np

from catena_zero.rules.board import BLACK, EMPTY, NO_ACTION, WHITE, opponent
from catena_zero.rules.state import GameState
from catena_zero.rules.variants import GameType, Rules

# One placement makes at most 21 cells illegal (x, the 6 around x, the 6 around each of its
# two stone neighbours, 2 common neighbours of the new ribbon's ends), so with 22 or more
# legal cells every legal first stone of a double turn leaves a legal second stone.
_TWO_STONE_SAFE = 22
# Uniform proposals tried per game before the exact fallback in random_actions.
_PROPOSALS = 6


def _any_slot(mask: np.ndarray) -> np.ndarray:
    """OR over the 6 slots of a [6, K] mask (unrolled: numpy's short-axis reductions are
    several times slower)."""
    return mask[0] | mask[1] | mask[2] | mask[3] | mask[4] | mask[5]


def _count_slot(mask: np.ndarray) -> np.ndarray:
    """Number of True among the 6 slots of a bool [6, K] mask, as uint8 [K]."""
    m = mask.view(np.uint8)
    return m[0] + m[1] + m[2] + m[3] + m[4] + m[5]


def _slot_nonzero(mask: np.ndarray) -> np.ndarray:
    """Flat positions of the True entries of a [S, K] mask."""
    return mask.ravel().nonzero()[0]


def _nonzero_slot(mask: np.ndarray):
    """(slot, column) of the True entries of a [S, K] mask (flatnonzero is cheaper than a
    2-D nonzero)."""
    flat = np.flatnonzero(mask)
    slot = flat // mask.shape[1]
    return slot, flat - slot * mask.shape[1]


@functools.cache
def _common_neighbour_tables(board) -> tuple[np.ndarray, np.ndarray]:
    """Two flat tables over pairs (p, q) -> p * (C+1) + q: the common neighbours of two
    distinct cells (at most two on a hex grid), the sentinel C where fewer (or p == q)."""
    width = board.num_cells + 1
    neighbours = board.neighbours_padded  # [C+1, 6]
    shared = board.adjacency[neighbours]  # [C+1 (p), 6, C+1 (q)]: neighbour k of p touches q
    shared &= neighbours[:, :, None] < board.num_cells
    count = shared.sum(1)  # [C+1, C+1]
    np.fill_diagonal(count, 0)
    first = neighbours[np.arange(width)[:, None], shared.argmax(1)]
    second = neighbours[np.arange(width)[:, None], 5 - shared[:, ::-1].argmax(1)]
    first = np.where(count >= 1, first, board.num_cells)
    second = np.where(count == 2, second, board.num_cells)
    np.fill_diagonal(first, board.num_cells)
    np.fill_diagonal(second, board.num_cells)
    assert count.max() <= 2
    # int16 keeps the tables small enough to stay in cache.
    return first.ravel().astype(np.int16), second.ravel().astype(np.int16)


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
        self._adjacency = self.board.adjacency  # bool [C+1, C+1]
        self._common_neighbours = _common_neighbour_tables(self.board)
        self._row_base_cache: dict[int, np.ndarray] = {}
        self._fresh_row: dict[str, np.ndarray] | None = None
        self._is_double = rules.game_type == GameType.DOUBLE
        self._is_nokomi = rules.game_type == GameType.NOKOMI
        # Proposal sampling: 16-bit random numbers below the limit map exactly uniformly
        # onto the cells by a modulo.
        self._proposal_limit = (65536 // self.num_cells) * self.num_cells

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

    def _legal_actions_rows(self, state: GameState, rows: np.ndarray) -> np.ndarray:
        """bool [R, A]: legal actions of the non-terminal games rows [R]."""
        out = state.legal_padded[rows]
        out[:, self.num_cells] = self._button_legal(state)[rows]
        if self._is_double:
            exact = np.flatnonzero(self._needs_exact_first_stone(state)[rows])
            if exact.size:
                good = self._good_first_stones(state, rows[exact])
                out[exact, : self.num_cells] = good[:, : self.num_cells]
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
        """Put stones (colours [P]) on cells [P] of the increasing games rows [P]: stones,
        degrees, ribbons, legality, legal_count and free counts; no claims. Returns the
        ribbons that just became limited as (games [K], roots [K], tie colours [K]); a ribbon
        may be listed more than once."""
        width = self._width
        sentinel = self.num_cells
        count_p = rows.shape[0]
        base = rows * width  # [P] flat offset of each game's row
        stones = state.stones_padded.ravel()
        degree = state.degree_padded.ravel()
        legal = state.legal_padded.ravel()
        label = state.label.ravel()
        free = state.free.ravel()
        length = state.ribbon_length.ravel()
        black = state.ribbon_black.ravel()
        end0 = state.ribbon_end0.ravel()
        end1 = state.ribbon_end1.ravel()
        neighbours_t = self._neighbours_t

        around = np.take(neighbours_t, cells, axis=1)  # [6, P] cells around x
        around_flat = around + base  # [6, P]
        has_stone = stones[around_flat] != EMPTY  # [6, P]
        count = has_stone.view(np.uint8).sum(0, dtype=np.uint8)  # [P] 0..2 by legality
        x_flat = base + cells
        stones[x_flat] = colours
        around_degree = degree[around_flat] + 1  # [6, P]
        degree[around_flat] = around_degree
        degree[base + sentinel] = 0
        degree[x_flat] = count

        # The (up to two) stone neighbours a < c of x; the sentinel where missing.
        a = np.where(has_stone, around, sentinel).min(0)
        c = np.where(has_stone, around, -1).max(0)
        c = np.where(c > a, c, sentinel)
        a_flat = base + a
        c_flat = base + c
        root_a_flat = base + label[a_flat]
        root_c_flat = base + label[c_flat]
        length_a = length[root_a_flat]
        length_c = length[root_c_flat]
        # The far end of a's ribbon seen from a (a itself for a single stone); for the
        # sentinel ribbon this is the sentinel.
        end0_a = end0[root_a_flat]
        far_a = np.where(end0_a == a, end1[root_a_flat], end0_a)
        end0_c = end0[root_c_flat]
        far_c = np.where(end0_c == c, end1[root_c_flat], end0_c)
        has_a = count >= 1
        has_c = count == 2
        new_end0 = np.where(has_a, far_a, cells)
        new_end1 = np.where(has_c, far_c, cells)
        keep_a = length_a >= length_c
        keep_flat = np.where(has_a, np.where(keep_a, root_a_flat, root_c_flat), x_flat)
        keep = keep_flat - base
        length[keep_flat] = length_a + length_c + 1
        black[keep_flat] = black[root_a_flat] + black[root_c_flat] + (colours == BLACK)
        end0[keep_flat] = new_end0
        end1[keep_flat] = new_end1
        label[x_flat] = keep
        join = has_c.nonzero()[0]
        if join.size:
            drop = np.where(keep_a[join], root_c_flat[join], root_a_flat[join]) - base[join]
            # Relabel the shorter ribbon: scan the joined games' rows, write only its stones.
            hits = (state.label[rows[join]] == drop[:, None]).ravel().nonzero()[0]
            which = hits // width
            label[base[join][which] + (hits - which * width)] = keep[join][which]

        # Legality. Cells around x: a third stone neighbour, or x interior.
        old = legal[around_flat]
        new = old & (around_degree <= 2) & (count < 2)
        legal[around_flat] = new
        flipped_around = old & ~new  # [6, P]
        legal[x_flat] = False
        lost = 1 + flipped_around.view(np.uint8).sum(0, dtype=np.int16)
        # x starts with the cells around it that were legal; then every cell that turns
        # illegal costs each of its stone neighbours one (x itself costs a and c one).
        free[x_flat] = old.view(np.uint8).sum(0, dtype=np.uint8)
        flat = flipped_around.ravel().nonzero()[0]
        flipped_cells = [around.ravel()[flat]]
        flipped_owner = [flat % count_p]
        decrements = [a_flat[has_a], c_flat[has_c]]
        # Stone neighbours of x that became interior block every cell around them (one
        # stone at a time: a cell beside both must be counted once).
        for stone_flat, stone, present in ((a_flat, a, has_a), (c_flat, c, has_c)):
            interior = (present & (degree[stone_flat] >= 2)).nonzero()[0]
            if interior.size:
                blocked = np.take(neighbours_t, stone[interior], axis=1)  # [6, I]
                blocked_flat = blocked + base[interior]
                old = legal[blocked_flat]
                legal[blocked_flat] = False
                lost[interior] += old.view(np.uint8).sum(0, dtype=np.uint8)
                flat = old.ravel().nonzero()[0]
                flipped_cells.append(blocked.ravel()[flat])
                flipped_owner.append(interior[flat % interior.size])
        # A cell beside both ends of the new ribbon would close a ring (at most two such
        # cells, from a table); its only stone neighbours are those two ends.
        pair = new_end0 * width + new_end1
        for table in self._common_neighbours:
            closing = base + table[pair]
            shut = legal[closing]
            legal[closing] = False
            lost += shut
            hit = shut.nonzero()[0]
            if hit.size:
                decrements += [base[hit] + new_end0[hit], base[hit] + new_end1[hit]]
        if count_p == state.batch_size:
            state.legal_count -= lost
        else:
            state.legal_count[rows] -= lost

        # Stone neighbours of the other flipped cells.
        owner = np.concatenate(flipped_owner)  # [F] index into rows
        near = np.take(self._neighbours, np.concatenate(flipped_cells), axis=0)  # [F, 6]
        near += base[owner, None]
        hits = (stones[near] != EMPTY).ravel().nonzero()[0]
        touched = near.ravel()[hits]  # [T] flat stones that lost a legal neighbour
        toucher = owner[hits // 6]  # [T]
        decrements.append(touched)
        decrement = np.concatenate(decrements)
        np.add.at(free, decrement, np.full(decrement.size, -1, dtype=np.int8))

        # The new ribbon is limited when both ends are shut; another ribbon when the stone
        # that just lost a neighbour has none left and neither has its other end.
        shut_new = (free[base + new_end0] == 0) & (free[base + new_end1] == 0)
        new_ribbon = shut_new.nonzero()[0]
        games = [rows[new_ribbon]]
        roots = [keep[new_ribbon]]
        ties = [opponent(colours[new_ribbon])]
        root_flat = base[toucher] + label[touched]
        candidate = ((free[touched] == 0) & (root_flat != keep_flat[toucher])).nonzero()[0]
        if candidate.size:
            touched, toucher = touched[candidate], toucher[candidate]
            root_flat = root_flat[candidate]
            game_base = base[toucher]
            end = touched - game_base
            first_end = end0[root_flat]
            far = np.where(first_end == end, end1[root_flat], first_end)
            limited = (free[game_base + far] == 0).nonzero()[0]
            games.append(rows[toucher[limited]])
            roots.append(root_flat[limited] - game_base[limited])
            ties.append(opponent(colours[toucher[limited]]))
        return np.concatenate(games), np.concatenate(roots), np.concatenate(ties)

    def _claim(self, state: GameState, games, roots, tie_colour, limited: bool) -> None:
        """Give each ribbon (games [K], roots [K]) to its majority, ties to tie_colour [K].
        A ribbon may be listed twice; the writes are then identical."""
        if games.size == 0:
            return
        width = self._width
        root_flat = games * width + roots
        length = state.ribbon_length.ravel()[root_flat].astype(np.int32)
        black = state.ribbon_black.ravel()[root_flat].astype(np.int32)
        winner = np.where(
            2 * black > length, BLACK, np.where(2 * black < length, WHITE, tie_colour)
        ).astype(np.int8)
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
        proposals = (draws % cells).astype(np.intp)  # [K, B]
        accepted = (valid & state.legal_padded.ravel()[proposals + row_base]).view(np.uint8)
        slot = accepted.argmax(0)
        choice = proposals.ravel()[slot * batch + np.arange(batch)]
        fallback = accepted.max(0) == 0
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
            counts = mask.sum(1)
            target = np.floor(rng.random(rows.size) * counts).astype(np.intp)
            picked = (mask.cumsum(1) > target[:, None]).argmax(1)
            choice[rows] = np.where(counts > 0, picked, NO_ACTION)
        choice[state.terminal] = NO_ACTION
        return choice.astype(np.int64)

    def result(self, state: GameState):
        """GameResult (winner int8 [B], margin float32 [B] from Black's view)."""
        from catena_zero.rules.result import compute_result

        return compute_result(self.rules, state)
