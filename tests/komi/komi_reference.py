"""A deliberately naive Catena implementation straight from the RULES.md definitions.

It checks legality by building the group and testing that its adjacency graph is a
simple path, and limitedness by trying every adjacent empty cell; no shortcuts from
the "useful consequence". Slow, used only as an oracle for the solver on tiny boards.
"""

from __future__ import annotations

from functools import cache

BLACK, WHITE = 1, 2


class ReferenceGame:
    def __init__(self, neighbours, game_type="komi", scoring="standard", komi=0):
        cells = len(neighbours)
        self.cells = cells
        self.adjacent = [tuple(int(j) for j in row if int(j) < cells) for row in neighbours]
        self.game_type = game_type
        self.scoring = scoring
        self.komi = komi

    def group(self, stones, start):
        seen, stack = {start}, [start]
        while stack:
            cell = stack.pop()
            for other in self.adjacent[cell]:
                if stones[other] and other not in seen:
                    seen.add(other)
                    stack.append(other)
        return frozenset(seen)

    def is_ribbon(self, stones, group):
        degrees = [sum(1 for o in self.adjacent[c] if o in group) for c in group]
        edges = sum(degrees) // 2
        return max(degrees) <= 2 and edges == len(group) - 1

    def is_legal(self, stones, cell):
        if stones[cell]:
            return False
        trial = list(stones)
        trial[cell] = 3  # any colour: legality ignores colours
        return self.is_ribbon(trial, self.group(trial, cell))

    def legal_cells(self, stones):
        return [c for c in range(self.cells) if self.is_legal(stones, c)]

    def groups(self, stones):
        seen, result = set(), []
        for cell in range(self.cells):
            if stones[cell] and cell not in seen:
                group = self.group(stones, cell)
                seen |= group
                result.append(group)
        return result

    def is_limited(self, stones, group):
        around = {o for c in group for o in self.adjacent[c] if not stones[o]}
        return not any(self.is_legal(stones, o) for o in around)

    def claim(self, stones, group, tie_to):
        black = sum(1 for c in group if stones[c] == BLACK)
        white = len(group) - black
        owner = BLACK if black > white else WHITE if white > black else tie_to
        for c in group:
            stones[c] = owner

    def place(self, state, cell):
        stones, limited, button, to_move, left, moves = state
        stones = list(stones)
        stones[cell] = to_move
        limited = set(limited)
        for group in self.groups(stones):
            if not group & limited and self.is_limited(stones, group):
                self.claim(stones, group, 3 - to_move)
                limited |= group
        if self.game_type == "double":
            nxt, left2 = (to_move, 1) if left == 2 else (3 - to_move, 2)
        else:
            nxt, left2 = 3 - to_move, 1
        return (tuple(stones), frozenset(limited), button, nxt, left2, moves + 1)

    def actions(self, state):
        stones, limited, button, to_move, left, moves = state
        cells = self.legal_cells(stones)
        if self.game_type == "double":
            if left == 2:
                cells = [c for c in cells if self.legal_cells(self.place(state, c)[0])]
            return cells
        if not cells:
            return []
        if button == 0 and not (self.game_type == "nokomi" and moves == 0):
            cells = cells + [self.cells]
        return cells

    def play(self, state, action):
        if action == self.cells:
            stones, limited, button, to_move, left, moves = state
            return (stones, limited, to_move, 3 - to_move, 1, moves + 1)
        return self.place(state, action)

    def initial(self):
        return ((0,) * self.cells, frozenset(), 0, BLACK, 1, 0)

    def final_stones_and_button(self, state):
        stones, limited, button, to_move, left, moves = state
        stones = list(stones)
        if self.game_type == "double":
            for group in self.groups(stones):
                if not group & limited:
                    self.claim(stones, group, to_move)
            return stones, 0
        if button == 0:
            button = to_move  # the last placer is the opponent of the player to move
        return stones, button

    def margin(self, state):
        """Black-view margin in points (ruling 6)."""
        stones, button = self.final_stones_and_button(state)
        half = 0 if self.game_type == "double" else (0.5 if button == BLACK else -0.5)
        ribbons = self.groups(stones)
        if self.scoring == "standard":
            return stones.count(BLACK) - stones.count(WHITE) - self.komi + half
        if self.scoring == "quadratic":
            total = sum(len(g) ** 2 * (1 if stones[min(g)] == BLACK else -1) for g in ribbons)
            return total - self.komi + half
        black = [len(g) for g in ribbons if stones[min(g)] == BLACK]
        white = sorted(len(g) for g in ribbons if stones[min(g)] == WHITE)
        if white:
            white[-1] += self.komi
        for length in sorted(set(black) | set(white), reverse=True):
            difference = black.count(length) - white.count(length)
            if difference:
                return length if difference > 0 else -length
        return half

    def minimax(self, state=None):
        @cache
        def value(state):
            actions = self.actions(state)
            if not actions:
                return self.margin(state)
            values = [value(self.play(state, a)) for a in actions]
            return max(values) if state[3] == BLACK else min(values)

        return value(self.initial() if state is None else state)
