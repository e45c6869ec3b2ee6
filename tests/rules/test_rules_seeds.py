"""RULES.md's worked examples (side 6), on both the fast engine and the reference, plus
the "useful consequence" legality characterisation checked against the definition."""

import random

import pytest

from catena_zero.rules import BLACK, WHITE, Game, Rules, get_board
from tests.rules.reference_engine import EMPTY, RefGame, legal_by_characterisation

# Example 1: ribbons C5-D5-E5 and G5-H6-H7, colours alternate (any colours will do).
EXAMPLE_1_MOVES = ["C5", "G5", "D5", "H6", "E5", "H7"]
EXAMPLE_1_LEGAL = ["B5", "F5"]
EXAMPLE_1_ILLEGAL = ["D6", "G6", "I6"]
# Example 2, in an order where every stone is legal and nothing is limited early:
# Black plays C1 C7 D7 E7 A2 A5 and White C2 A1 A3 A4 A6; then White plays C8.
EXAMPLE_2_MOVES = ["C1", "C2", "C7", "A1", "D7", "A3", "E7", "A4", "A2", "A6", "A5"]
EXAMPLE_2_WHITE = ["A1", "A3", "A4", "A6"]
EXAMPLE_2_BLACK = ["A2", "A5"]
A_RIBBON = ["A1", "A2", "A3", "A4", "A5", "A6"]


def fast_legal_names(game: Game) -> set[str]:
    board = get_board(6)
    return {board.action_name(action) for action in game.legal_actions()}


def fast_game(moves: list[str]) -> Game:
    game = Game(Rules(side=6))
    for move in moves:
        game.play(move)
    return game


def ref_game(moves: list[str]) -> RefGame:
    game = RefGame(6)
    for move in moves:
        game.step(game.board.parse_cell(move))
    return game


def ref_legal_names(game: RefGame) -> set[str]:
    mask = game.legal_actions()
    return {game.board.action_name(action) for action, ok in enumerate(mask) if ok}


def test_example_1_fast_engine():
    legal = fast_legal_names(fast_game(EXAMPLE_1_MOVES))
    for cell in EXAMPLE_1_LEGAL:
        assert cell in legal, cell
    for cell in EXAMPLE_1_ILLEGAL:
        assert cell not in legal, cell


def test_example_1_reference():
    game = ref_game(EXAMPLE_1_MOVES)
    legal = ref_legal_names(game)
    assert set(EXAMPLE_1_LEGAL) <= legal
    assert not set(EXAMPLE_1_ILLEGAL) & legal
    # F5 joins the two ribbons into one ribbon of seven stones.
    game.step(game.board.parse_cell("F5"))
    assert len(game.groups()) == 1 and len(game.groups()[0]) == 7


def check_example_2_before(stones_of, legal: set[str]) -> None:
    assert sorted(stones_of(WHITE)) == sorted(["C2"] + EXAMPLE_2_WHITE)
    assert sorted(stones_of(BLACK)) == sorted(["C1", "C7", "D7", "E7"] + EXAMPLE_2_BLACK)
    for cell in ["B1", "B2", "B6"]:
        assert cell not in legal, cell
    assert "B7" in legal and "C8" in legal


def test_example_2_fast_engine():
    game = fast_game(EXAMPLE_2_MOVES)
    assert game.to_move == WHITE
    check_example_2_before(game.stones_of, fast_legal_names(game))
    game.play("c8")  # lower case on purpose: notation is case-insensitive
    white = set(game.stones_of(WHITE))
    assert set(A_RIBBON) <= white, "White should claim the whole A-ribbon"
    assert not set(A_RIBBON) & set(game.stones_of(BLACK))
    assert "B7" not in fast_legal_names(game)
    board = get_board(6)
    limited = game.state.limited[0]
    assert all(limited[board.parse_cell(cell)] for cell in A_RIBBON)
    assert not limited[board.parse_cell("C8")]


def test_example_2_reference():
    game = ref_game(EXAMPLE_2_MOVES)

    def stones_of(colour):
        return [game.board.cell_name(i) for i, c in enumerate(game.stones) if c == colour]

    check_example_2_before(stones_of, ref_legal_names(game))
    game.step(game.board.parse_cell("C8"))
    assert all(game.stones[game.board.parse_cell(cell)] == WHITE for cell in A_RIBBON)
    assert all(game.limited[game.board.parse_cell(cell)] for cell in A_RIBBON)


def test_reference_claim_tie_goes_to_opponent_of_limiting_mover():
    # Checks the reference's claiming rule on its own; the cross-check carries it over
    # to the fast engine.
    rng = random.Random(3)
    checked = 0
    for _ in range(300):
        ref = RefGame(3)
        while not ref.terminal:
            before = list(ref.limited)
            mask = ref.legal_actions()
            action = rng.choice([a for a, ok in enumerate(mask) if ok])
            mover = ref.to_move
            snapshot = list(ref.stones)
            ref.step(action, mask)
            for group in ref.groups():
                if before[group[0]] or not ref.limited[group[0]]:
                    continue
                colours = [snapshot[cell] if cell != action else mover for cell in group]
                if colours.count(BLACK) == colours.count(WHITE):
                    assert {ref.stones[cell] for cell in group} == {3 - mover}
                    checked += 1
    assert checked > 0


def random_positions(side: int, count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        game = RefGame(side)
        length = rng.randint(0, game.board.num_cells)
        while not game.terminal and game.move_number < length:
            mask = game.legal_actions()
            cells = [a for a, ok in enumerate(mask[:-1]) if ok]
            touching = [a for a in cells if any(
                game.stones[o] != EMPTY for o in game.board.neighbours[a])]
            pool = touching if touching and rng.random() < 0.6 else cells
            game.step(rng.choice(pool), mask)
        yield game


@pytest.mark.parametrize("side", [2, 3, 4, 6, 8])
def test_useful_consequence_matches_definition(side):
    compared = 0
    for game in random_positions(side, 40 if side <= 4 else 6, seed=side):
        for cell in range(game.board.num_cells):
            assert legal_by_characterisation(game, cell) == game.ribbon_legal(cell), (
                f"side {side} cell {game.board.cell_name(cell)} after "
                f"{[game.board.action_name(a) for a in game.history]}")
            compared += 1
    assert compared > 0
