"""First (simple, slower) batched engine, kept as a private cross-check of the fast Engine.

Claims are found by recomputing every ribbon's open ends after each move.

Legality is maintained incrementally. An empty cell is legal iff it has at most two stone
neighbours, each with at most one stone neighbour, and two such neighbours lie in different
ribbons. Legality is monotone, so after a placement at x only these cells can turn illegal:
x itself; the neighbours of x (their degree grew; x may be interior); the neighbours of the
stones beside x that became interior; the common neighbours of the new ribbon's two ends.
"""

from __future__ import annotations

import numpy as np

from catena_zero.rules.board import BLACK, EMPTY, NO_ACTION, WHITE, opponent
from catena_zero.rules.state import GameState
from catena_zero.rules.variants import GameType, Rules

# One placement makes at most 21 cells illegal (x, the 6 around x, the 6 around each of its
# two stone neighbours, 2 common neighbours of the new ribbon's ends), so with 22 or more
# legal cells every legal first stone of a double turn leaves a legal second stone.
_TWO_STONE_SAFE = 22


class IllegalActionError(ValueError):
    """An illegal action, or an action on a finished game. Names the game index and action."""


class SlowEngine:
    """Batched engine for one set of Rules (komi may differ per game)."""

    def __init__(self, rules: Rules):
        if not isinstance(rules, Rules):
            raise ValueError(f"Engine needs a Rules instance, got {rules!r}")
        self.rules = rules
        self.board = rules.board
        self.num_cells = self.board.num_cells
        self.num_actions = self.board.num_actions
        self.button_action = self.board.button_action
        self._neighbours = self.board.neighbours_padded  # int64 [C+1, 6]
        self._adjacency = self.board.adjacency  # bool [C+1, C+1]
        self._is_double = rules.game_type == GameType.DOUBLE
        self._is_nokomi = rules.game_type == GameType.NOKOMI

    # ------------------------------------------------------------------ creation
    def new_games(self, batch_size: int, komi=0) -> GameState:
        """B fresh games; komi is an int or an int array [B] (validated)."""
        from catena_zero.rules.engine import Engine

        return Engine(self.rules).new_games(batch_size, komi)

    # ------------------------------------------------------------------ legality
    def _button_legal(self, state: GameState) -> np.ndarray:  # bool [B]
        if not self.rules.has_button:
            return np.zeros(state.batch_size, dtype=bool)
        legal = (state.button == EMPTY) & ~state.terminal
        if self._is_nokomi:
            legal &= state.move_number > 0
        return legal

    def legal_actions(self, state: GameState) -> np.ndarray:
        """bool [B, A]: legal actions; all False for terminal games."""
        cells = self.num_cells
        out = np.zeros((state.batch_size, cells + 1), dtype=bool)
        out[:, :cells] = state.legal_padded[:, :cells]
        if self._is_double:
            rows = np.nonzero((state.stones_left == 2) & ~state.terminal)[0]
            if rows.size:
                out[rows, :cells] = self._good_first_stones(state, rows)[:, :cells]
        out[:, cells] = self._button_legal(state)
        out[state.terminal] = False
        return out

    def _first_stone_leaves_second(self, state: GameState, rows, cells) -> np.ndarray:
        """bool [P]: placing cells[i] in game rows[i] leaves some legal cell (ruling 3)."""
        rows = np.asarray(rows, dtype=np.int64)
        cells = np.asarray(cells, dtype=np.int64)
        result = np.ones(rows.shape[0], dtype=bool)
        counts = state.legal_padded[rows].sum(1)
        need = np.nonzero(counts < _TWO_STONE_SAFE)[0]
        if need.size:
            trial = state.take(rows[need])
            colours = np.full(need.size, BLACK, dtype=np.int8)
            self._place_structure(trial, np.arange(need.size), cells[need], colours)
            result[need] = trial.legal_padded.any(1)
        return result

    def _good_first_stones(self, state: GameState, rows: np.ndarray) -> np.ndarray:
        """bool [R, C+1]: legal first stones of a two-stone turn for games `rows`."""
        legal = state.legal_padded[rows].copy()
        counts = legal.sum(1)
        need = np.nonzero(counts < _TWO_STONE_SAFE)[0]
        if need.size:
            pair_row, pair_cell = np.nonzero(legal[need])
            ok = self._first_stone_leaves_second(state, rows[need][pair_row], pair_cell)
            legal[need[pair_row], pair_cell] = ok
        return legal

    # ------------------------------------------------------------------ stepping
    def _validate_actions(self, state: GameState, actions) -> np.ndarray:
        actions = np.asarray(actions)
        batch = state.batch_size
        if actions.shape != (batch,):
            raise ValueError(f"actions have shape {actions.shape}, expected ({batch},)")
        if actions.dtype == bool or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions must be integers, got dtype {actions.dtype}")
        actions = actions.astype(np.int64)
        cells = self.num_cells
        bad = (actions < NO_ACTION) | (actions > cells)
        if bad.any():
            game = int(np.argmax(bad))
            raise IllegalActionError(
                f"game {game}: action {int(actions[game])} is outside -1..{cells}"
            )
        active = actions != NO_ACTION
        finished = active & state.terminal
        if finished.any():
            game = int(np.argmax(finished))
            raise IllegalActionError(
                f"game {game}: action {self._name(actions[game])} on a finished game"
            )
        is_button = actions == cells
        bad = is_button & ~self._button_legal(state)
        is_cell = active & ~is_button
        bad |= is_cell & ~state.legal_padded[np.arange(batch), np.where(is_cell, actions, cells)]
        if self._is_double:
            check = np.nonzero(is_cell & ~bad & (state.stones_left == 2))[0]
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
        button_rows = np.nonzero(actions == cells)[0]
        if button_rows.size:
            state.button[button_rows] = state.to_move[button_rows]
            state.to_move[button_rows] = opponent(state.to_move[button_rows])
            state.move_number[button_rows] += 1
        rows = np.nonzero((actions >= 0) & (actions < cells))[0]
        if rows.size == 0:
            return
        placed = actions[rows]
        colours = state.to_move[rows].copy()
        self._place_structure(state, rows, placed, colours)
        self._claim_limited(state, rows, colours)
        state.last_placer[rows] = colours
        state.move_number[rows] += 1
        if self._is_double:
            self._advance_double(state, rows, colours)
        else:
            state.to_move[rows] = opponent(colours)
            over = rows[~state.legal_padded[rows].any(1)]
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
        possible = self._good_first_stones(state, turn_over).any(1)
        over = turn_over[~possible]
        if over.size == 0:
            return
        state.terminal[over] = True
        # End rule of double: every ribbon not yet limited is claimed by majority, a tie
        # going to the opponent of the last placer. They stay "not limited".
        cells = self.num_cells
        stones = state.stones_padded[over, :cells] != EMPTY
        unclaimed = stones & ~state.limited_padded[over, :cells]
        self._claim(state, over, unclaimed, opponent(state.last_placer[over]), mark=False)

    def _place_structure(self, state: GameState, rows, cells, colours) -> None:
        """Put stones (colours [P]) on cells [P] of games rows [P] (distinct): degrees,
        ribbons and legality, no claims."""
        sentinel = self.num_cells
        neighbours = self._neighbours[cells]  # [P, 6]
        rows_2d = rows[:, None]
        stones = state.stones_padded
        degree = state.degree_padded
        legal = state.legal_padded
        label = state.label
        has_stone = stones[rows_2d, neighbours] != EMPTY  # [P, 6]
        count = has_stone.sum(1)
        stones[rows, cells] = colours
        degree[rows_2d, neighbours] += 1
        degree[rows, sentinel] = 0
        degree[rows, cells] = count
        legal[rows, cells] = False
        index = np.arange(rows.shape[0])
        first = neighbours[index, has_stone.argmax(1)]
        second = neighbours[index, 5 - has_stone[:, ::-1].argmax(1)]
        is_black = (colours == BLACK).astype(np.int16)
        end0 = cells.copy()
        end1 = cells.copy()

        alone = np.nonzero(count == 0)[0]
        if alone.size:
            r, x = rows[alone], cells[alone]
            label[r, x] = x
            state.ribbon_length[r, x] = 1
            state.ribbon_black[r, x] = is_black[alone]
            state.ribbon_end0[r, x] = x
            state.ribbon_end1[r, x] = x

        extend = np.nonzero(count == 1)[0]
        if extend.size:
            r, x, a = rows[extend], cells[extend], first[extend]
            root = label[r, a].astype(np.int64)
            label[r, x] = root
            state.ribbon_length[r, root] += 1
            state.ribbon_black[r, root] += is_black[extend]
            e0, e1 = state.ribbon_end0[r, root], state.ribbon_end1[r, root]
            other = np.where(e0 == a, e1, e0)
            state.ribbon_end0[r, root] = x
            state.ribbon_end1[r, root] = other
            end1[extend] = other

        join = np.nonzero(count == 2)[0]
        if join.size:
            r, x, a, c = rows[join], cells[join], first[join], second[join]
            root_a = label[r, a].astype(np.int64)
            root_c = label[r, c].astype(np.int64)
            length_a = state.ribbon_length[r, root_a]
            length_c = state.ribbon_length[r, root_c]
            e0a, e1a = state.ribbon_end0[r, root_a], state.ribbon_end1[r, root_a]
            e0c, e1c = state.ribbon_end0[r, root_c], state.ribbon_end1[r, root_c]
            other_a = np.where(e0a == a, e1a, e0a)
            other_c = np.where(e0c == c, e1c, e0c)
            keep_a = length_a >= length_c
            keep = np.where(keep_a, root_a, root_c)
            drop = np.where(keep_a, root_c, root_a)
            black = state.ribbon_black[r, root_a] + state.ribbon_black[r, root_c]
            state.ribbon_length[r, keep] = length_a + length_c + 1
            state.ribbon_black[r, keep] = black + is_black[join]
            state.ribbon_end0[r, keep] = other_a
            state.ribbon_end1[r, keep] = other_c
            sub = label[r]
            label[r] = np.where(sub == drop[:, None], keep[:, None], sub)
            label[r, x] = keep
            end0[join] = other_a
            end1[join] = other_c
            # x has two stone neighbours: it is interior, nothing beside it is legal.
            legal[r[:, None], neighbours[join]] = False

        # Neighbours of x with three stone neighbours now.
        legal[rows_2d, neighbours] &= degree[rows_2d, neighbours] <= 2
        # Stone neighbours of x that became interior block all their empty neighbours.
        for stone, valid in ((first, count >= 1), (second, count == 2)):
            interior = np.nonzero(valid & (degree[rows, stone] >= 2))[0]
            if interior.size:
                legal[rows[interior][:, None], self._neighbours[stone[interior]]] = False
        # A cell beside both ends of the new ribbon would close a ring.
        two_ends = np.nonzero(end0 != end1)[0]
        if two_ends.size:
            around = self._neighbours[end0[two_ends]]  # [S, 6]
            closes = self._adjacency[around, end1[two_ends][:, None]]
            legal[rows[two_ends][:, None], around] &= ~closes

    def _claim_limited(self, state: GameState, rows, movers) -> None:
        """Claim every ribbon of games rows that has just become limited; ties go to the
        opponent of movers [P] (the player who made the limiting move)."""
        cells = self.num_cells
        legal = state.legal_padded[rows]  # [P, C+1]
        near_legal = legal[:, self._neighbours[:cells]].any(2)  # [P, C]
        stone = state.stones_padded[rows, :cells] != EMPTY
        labels = state.label[rows, :cells].astype(np.int64)
        open_ribbon = np.zeros((rows.shape[0], cells + 1), dtype=bool)
        pr, pc = np.nonzero(stone & near_legal)
        open_ribbon[pr, labels[pr, pc]] = True
        index = np.arange(rows.shape[0])[:, None]
        newly = stone & ~state.limited_padded[rows, :cells] & ~open_ribbon[index, labels]
        if newly.any():
            self._claim(state, rows, newly, opponent(movers), mark=True)

    def _claim(self, state: GameState, rows, mask, tie_colour, mark: bool) -> None:
        """Recolour the stones mask [P, C] of games rows by the majority of their ribbon."""
        pr, pc = np.nonzero(mask)
        games = rows[pr]
        roots = state.label[games, pc].astype(np.int64)
        length = state.ribbon_length[games, roots].astype(np.int32)
        black = state.ribbon_black[games, roots].astype(np.int32)
        winner = np.where(
            2 * black > length, BLACK, np.where(2 * black < length, WHITE, tie_colour[pr])
        ).astype(np.int8)
        state.stones_padded[games, pc] = winner
        state.ribbon_black[games, roots] = np.where(winner == BLACK, length, 0)
        if mark:
            state.limited_padded[games, pc] = True

    # ------------------------------------------------------------------ playouts / results
    def random_actions(self, state: GameState, rng: np.random.Generator) -> np.ndarray:
        """int [B]: a uniformly random legal action per game, NO_ACTION for finished games."""
        mask = self.legal_actions(state)
        counts = mask.sum(1)
        target = np.floor(rng.random(state.batch_size) * counts).astype(np.int64)
        choice = (mask.cumsum(1) > target[:, None]).argmax(1)
        return np.where(counts > 0, choice, NO_ACTION).astype(np.int64)

    def result(self, state: GameState):
        """GameResult (winner int8 [B], margin float32 [B] from Black's view)."""
        from catena_zero.rules.result import compute_result

        return compute_result(self.rules, state)
