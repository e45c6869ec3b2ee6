"""Explanations of a position for people: why a move is illegal, which ribbons a move
claimed, and the live score with its parts, in the words and units of RULES.md.

Legality is always the engine's own (`Engine.legal_actions`): the reason is looked up only
for a move the engine refuses, so a reason and the engine can never disagree.

Example::

    game = Game(Rules(side=6))
    illegal_reason(game, "F6")            # None: legal
    before = game.state.copy(); game.play("F6")
    claims_after(before, game.state)      # [] : nothing became limited
    score_parts(game).line()              # "standard score (stones): Black 1 ... "
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from catena_zero.rules.board import BLACK, EMPTY, WHITE, Board, get_board
from catena_zero.rules.engine import Engine
from catena_zero.rules.game import Game
from catena_zero.rules.result import compute_result, result_string
from catena_zero.rules.state import GameState
from catena_zero.rules.variants import GameType, Rules, Scoring

COLOUR_WORDS = {BLACK: "Black", WHITE: "White"}
# What one point of each scoring is (the score lead and the margin are in these units).
SCORE_UNITS = {
    Scoring.STANDARD: "stones",
    Scoring.QUADRATIC: "quadratic points (squared ribbon lengths)",
    Scoring.LONGEST: "ribbon length",
}
_SIDE_OF_CELLS = {3 * side * (side - 1) + 1: side for side in range(2, 11)}


def score_units(rules: Rules) -> str:
    """The unit of the scores, margins and score leads of `rules`' scoring."""
    return SCORE_UNITS[rules.scoring]


def _board_of(state: GameState) -> Board:
    return get_board(_SIDE_OF_CELLS[state.num_cells])


# ---------------------------------------------------------------------------- legality


def illegal_reason(game: Game, move: int | str, colour: int | None = None) -> str | None:
    """None when `move` (action index or name) is legal for the player to move of `game`,
    else the rule it breaks in one line. `colour`, if given, is who wants to move."""
    try:
        action = game.parse_action(move)
    except ValueError as error:  # not a cell of this board, or not a move at all
        return str(error)
    state = game.state
    if game.is_over:
        return "the game is over: no stone can be placed"
    if colour is not None and int(colour) != game.to_move:
        return f"it is {COLOUR_WORDS[game.to_move]}'s turn"
    if bool(game.engine.legal_actions(state)[0, action]):
        return None
    return refusal_reason(game.rules, state, action)


def refusal_reason(rules: Rules, state: GameState, action: int) -> str:
    """Why action index `action`, which the engine refuses in game 0 of `state` under
    `rules`, is illegal: the rule it breaks, in one line. The one wording for every caller
    (the terminal and page through `illegal_reason`, the analysis engine's errors)."""
    if bool(state.terminal[0]):
        return "the game is over: no stone can be placed"
    if action == rules.board.button_action:
        return _button_reason(rules, state)
    return _placement_reason(rules, state, action)


def _button_reason(rules: Rules, state: GameState) -> str:
    holder = int(state.button[0])
    if not rules.has_button:
        return "there is no button in the double game type"
    if holder != EMPTY:
        return f"the button has already been taken (by {COLOUR_WORDS[holder]})"
    if rules.game_type == GameType.NOKOMI and int(state.move_number[0]) == 0:
        return ("in nokomi the first move must be a stone: the swap decision is about "
                "that stone")
    return "the button cannot be taken now"


def _placement_reason(rules: Rules, state: GameState, cell: int) -> str:
    board = rules.board
    name = board.cell_name(cell)
    stones = state.stones[0]
    if stones[cell] != EMPTY:
        return f"{name} is occupied (a {COLOUR_WORDS[int(stones[cell])].lower()} stone)"
    around = [int(n) for n in board.neighbours[cell] if n < board.num_cells and stones[n] != EMPTY]
    if len(around) > 2:
        names = ", ".join(board.cell_name(n) for n in around)
        return (f"{name} would have {len(around)} stone neighbours ({names}); "
                f"a stone may touch at most two")
    if len(around) == 2 and state.label[0, around[0]] == state.label[0, around[1]]:
        return (f"{name} would close a ring: {board.cell_name(around[0])} and "
                f"{board.cell_name(around[1])} are in the same ribbon")
    degree = state.degree[0]
    for neighbour in around:
        if degree[neighbour] >= 2:
            return (f"{name} would form a branch at {board.cell_name(neighbour)}, which "
                    f"already touches two stones")
    if rules.is_double and int(state.stones_left[0]) == 2:
        return (f"{name} would leave no legal second stone, and a two-stone turn must "
                f"start with a stone that leaves one (double, ruling 3)")
    return f"{name} is not a legal placement"  # unreachable by the placement rule


def mover_of(rules: Rules, index: int) -> int:
    """The colour that made action `index` (0-based) of a game: turns alternate one action
    each (the button is an action), or B, W W, B B, ... in double."""
    if not rules.is_double:
        return BLACK if index % 2 == 0 else WHITE
    return WHITE if ((index + 1) // 2) % 2 == 1 else BLACK


# ---------------------------------------------------------------------------- claims


@dataclass
class Claim:
    """One ribbon claimed by a move: its cells end to end, its new owner, how many stones
    changed colour, and whether a tie gave it away or the end rule of double claimed it."""

    cells: list[str]  # cell names, from one end to the other
    owner: int  # BLACK or WHITE
    taken: int  # the opponent's stones that became the owner's
    black: int  # black stones just before the claim
    white: int  # white stones just before the claim
    tie: bool  # equal stones: the opponent of the player who made the limiting move got it
    at_end: bool  # claimed by the end rule of double (the ribbon was never limited)

    @property
    def span(self) -> str:
        return self.cells[0] if len(self.cells) == 1 else f"{self.cells[0]}-{self.cells[-1]}"

    def text(self) -> str:
        """e.g. 'ribbon A1-A6 limited (4 white, 2 black): White claims it, 2 stones taken'."""
        how = "claimed at the end" if self.at_end else "limited"
        owner = COLOUR_WORDS[self.owner]
        counts = f"{self.black} black, {self.white} white"
        tie = " (a tie goes to the opponent of the last mover)" if self.tie else ""
        taken = {0: "no stones taken", 1: "1 stone taken"}.get(self.taken,
                                                               f"{self.taken} stones taken")
        return f"ribbon {self.span} {how} ({counts}): {owner} claims it{tie}, {taken}"


def _chain_order(board: Board, cells: list[int]) -> list[int]:
    """The stones of a ribbon from one end to the other (ends have one neighbour in it)."""
    members = set(cells)
    links = {c: [int(n) for n in board.neighbours[c] if int(n) in members] for c in cells}
    start = min((c for c in cells if len(links[c]) <= 1), default=cells[0])
    order, seen = [start], {start}
    while len(order) < len(cells):
        step = next(n for n in links[order[-1]] if n not in seen)
        seen.add(step)
        order.append(step)
    return order


def claims_after(before: GameState, after: GameState) -> list[Claim]:
    """The ribbons claimed by the action that took game 0 of `before` to `after` (one
    placement, or a button or nothing: no claims). Ordered by their first cell."""
    board = _board_of(after)
    old_stones = before.stones[0].astype(int)
    new_stones = after.stones[0].astype(int)
    placed = np.flatnonzero((old_stones == EMPTY) & (new_stones != EMPTY))
    mover = int(before.to_move[0])
    # The colours just before the claim: the new stone has its mover's colour.
    colours = old_stones.copy()
    colours[placed] = mover
    newly = after.limited[0] & ~before.limited[0]
    at_end = bool(after.terminal[0] and not before.terminal[0])
    if at_end:  # double's end rule claims the open ribbons too, leaving them not limited
        newly = newly | ((new_stones != EMPTY) & ~after.limited[0])
    labels = after.label[0, : board.num_cells]
    claims = []
    for root in sorted({int(labels[c]) for c in np.flatnonzero(newly)}):
        cells = [int(c) for c in np.flatnonzero((labels == root) & (new_stones != EMPTY))]
        owner = int(new_stones[cells[0]])
        black = int(sum(colours[c] == BLACK for c in cells))
        white = len(cells) - black
        claims.append(Claim(
            cells=[board.cell_name(c) for c in _chain_order(board, cells)], owner=owner,
            taken=int(sum(colours[c] != owner for c in cells)), black=black, white=white,
            tie=black == white, at_end=at_end and not bool(after.limited[0, cells[0]])))
    return sorted(claims, key=lambda claim: board.parse_cell(claim.cells[0]))


def claims_of_actions(rules: Rules, start: GameState, actions: list[int]) -> list[list[Claim]]:
    """The claims of each of `actions` played from `start` (not changed), one list each."""
    engine = Engine(rules)
    state = start.copy()
    out = []
    for action in actions:
        before = state.copy()
        engine.step(state, np.array([action], dtype=np.int64))
        out.append(claims_after(before, state))
    return out


# ---------------------------------------------------------------------------- score


@dataclass
class ColourScore:
    """One colour's score and its parts, in the scoring's units."""

    colour: str  # "black" or "white"
    stones: int  # stones of this colour on the board
    claimed: int  # of them, stones in limited (claimed, final) ribbons
    ribbons: float  # quadratic: sum of squared lengths of its ribbons; longest: its longest
    button: float  # 0.5 for the button holder in standard and quadratic; else 0
    komi: int  # White's komi (0 for Black)
    total: float  # standard/quadratic: the score; longest: longest ribbon (+ komi, White)


@dataclass
class ScoreParts:
    """The live score of a position (its final score once the game is over). A ribbon
    still open counts for the colour with more stones in it (not at all when tied)."""

    scoring: str  # "standard", "quadratic" or "longest"
    units: str  # what one point is (SCORE_UNITS)
    final: bool  # the game is over: these are the final scores
    black: ColourScore
    white: ColourScore
    lead: str  # "B+3.5", "W+2" or "0": who is ahead by how much (the result when final)
    remaining: list[int] = field(default_factory=list)  # longest: lengths left after
    #                                                     cancelling equal pairs (signed +B/-W)

    def _parts(self, score: ColourScore) -> str:
        words = []
        if self.scoring == Scoring.STANDARD:
            words.append(f"{score.stones} stone{'' if score.stones == 1 else 's'}")
        elif self.scoring == Scoring.QUADRATIC:
            words.append(f"{score.ribbons:g} ribbons")
        else:
            words.append(f"longest ribbon {score.ribbons:g}")
        if score.button:
            words.append(f"{score.button:g} button")
        if score.komi and self.scoring == Scoring.LONGEST and not score.ribbons:
            words.append(f"{score.komi} komi (added once White has a ribbon)")
        elif score.komi:
            words.append(f"{score.komi} komi")
        return " + ".join(words)

    def line(self) -> str:
        """One line: 'score (stones): Black 5 = 5 stones + 0.5 button | White ... | B+1.5'."""
        label = "final score" if self.final else "score now"
        sides = [f"{score.colour.capitalize()} {score.total:g} = {self._parts(score)}"
                 for score in (self.black, self.white)]
        return f"{label} ({self.units}): {sides[0]} | {sides[1]} | {self.lead}"

    def breakdown(self) -> list[str]:
        """The final breakdown, a few lines."""
        lines = [self.line()]
        for score in (self.black, self.white):
            lines.append(f"  {score.colour.capitalize()}: {score.stones} on the board, "
                         f"{score.claimed} in claimed ribbons; {self._parts(score)} "
                         f"= {score.total:g}")
        if self.scoring == Scoring.LONGEST:
            if self.remaining:
                left = ", ".join(f"{'B' if n > 0 else 'W'}{abs(n)}" for n in self.remaining)
                lines.append(f"  after cancelling equal pairs: {left}")
            else:
                lines.append("  after cancelling equal pairs no ribbon remains: the button "
                             "decides")
        return lines


def _owned_ribbons(state: GameState, board: Board) -> list[tuple[int, int]]:
    """(owner, length) of every ribbon of game 0 whose owner is known: its colour once
    limited (or the game is over), else the colour with more stones (ties: none yet)."""
    stones = state.stones[0]
    labels = state.label[0, : board.num_cells]
    out = []
    for root in np.unique(labels[stones != EMPTY]):
        cells = np.flatnonzero((labels == root) & (stones != EMPTY))
        black = int((stones[cells] == BLACK).sum())
        white = len(cells) - black
        if black != white:
            out.append((BLACK if black > white else WHITE, len(cells)))
    return out


def _longest_remaining(ribbons: list[tuple[int, int]], komi: int) -> list[int]:
    """RULES.md longest scoring: komi onto one of White's longest ribbons, then cancel
    equal lengths of opposite colours. Signed lengths left (+Black, -White), longest first."""
    black = [length for owner, length in ribbons if owner == BLACK]
    white = sorted(length for owner, length in ribbons if owner == WHITE)
    if white and komi:
        white[-1] += komi
    left = []
    for length in sorted(set(black) | set(white), reverse=True):
        difference = black.count(length) - white.count(length)
        left += [length if difference > 0 else -length] * abs(difference)
    return left


def score_parts(game: Game) -> ScoreParts:
    """The live score of `game` with its parts, or its final score once it is over (then
    the totals and the lead agree with `Engine.result`)."""
    rules, state, board = game.rules, game.state, game.board
    stones = state.stones[0]
    limited = state.limited[0]
    komi = int(state.komi[0])
    holder = int(state.button[0])
    ribbons = _owned_ribbons(state, board)
    scores = {}
    for colour in (BLACK, WHITE):
        own = [length for owner, length in ribbons if owner == colour]
        button = 0.5 if holder == colour and rules.scoring != Scoring.LONGEST else 0.0
        colour_komi = komi if colour == WHITE else 0
        count = int((stones == colour).sum())
        if rules.scoring == Scoring.STANDARD:
            value = float(count)
        elif rules.scoring == Scoring.QUADRATIC:
            value = float(sum(length * length for length in own))
        else:
            value = float(max(own, default=0))
        total = value + button + (colour_komi if own or rules.scoring != Scoring.LONGEST
                                  else 0)
        scores[colour] = ColourScore(COLOUR_WORDS[colour].lower(), count,
                                     int(((stones == colour) & limited).sum()), value, button,
                                     colour_komi, total)
    remaining = _longest_remaining(ribbons, komi) if rules.scoring == Scoring.LONGEST else []
    if game.is_over:
        result = compute_result(rules, state)
        lead = result_string(result.winner[0], result.margin[0])
    elif rules.scoring == Scoring.LONGEST:
        lead = _longest_lead(remaining, holder, rules)
    else:
        margin = scores[BLACK].total - scores[WHITE].total
        lead = result_string(BLACK if margin > 0 else WHITE if margin < 0 else EMPTY, margin)
    return ScoreParts(rules.scoring.value, score_units(rules), game.is_over, scores[BLACK],
                      scores[WHITE], lead, remaining)


def _longest_lead(remaining: list[int], holder: int, rules: Rules) -> str:
    if remaining:
        return result_string(BLACK if remaining[0] > 0 else WHITE, abs(remaining[0]))
    if rules.has_button and holder != EMPTY:
        return result_string(holder, 0.5)
    return "0"
