"""The exact solver: its compact position against the engine, its values against a naive
reference minimax, and the komi algebra of the margin."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from catena_zero.mcts.solver import ExactSolver, SolverTables, iter_bits
from catena_zero.rules import Game, Rules, get_board
from tests.komi.komi_reference import ReferenceGame

VARIANTS = list(itertools.product(("komi", "nokomi", "double"),
                                  ("standard", "longest", "quadratic")))


def make_solver(side, game_type, scoring, komi=0):
    board = get_board(side)
    return ExactSolver(SolverTables(board.neighbours, board.symmetries), game_type, scoring, komi)


def mask_of(array) -> int:
    return sum(1 << int(i) for i in np.flatnonzero(array))


@pytest.mark.parametrize("side", [2, 3, 4])
@pytest.mark.parametrize("game_type,scoring", VARIANTS)
def test_solver_positions_follow_the_engine_on_random_games(side, game_type, scoring):
    rng = np.random.default_rng(side * 100 + len(game_type) * 10 + len(scoring))
    rules = Rules(side=side, game_type=game_type, scoring=scoring)
    cells = rules.board.num_cells
    for _ in range(4):
        komi = int(rng.integers(rules.komi_range[0], min(rules.komi_range[1], 20) + 1))
        solver = make_solver(side, game_type, scoring, komi)
        game = Game(rules, komi)
        state = solver.initial_state()
        while not game.is_over:
            moves = dict(solver.children(state))
            assert sorted(moves) == game.legal_actions()
            action = int(rng.choice(sorted(moves)))
            game.play(action)
            state = moves[action]
            engine_state = game.state
            assert state.occupied == mask_of(engine_state.stones[0])
            if game.is_over and game_type == "double":
                # the double game type's end-of-game claims are applied at scoring time
                assert solver.final_black(state) == mask_of(engine_state.stones[0] == 1)
                break
            assert state.black == mask_of(engine_state.stones[0] == 1)
            assert state.limited == mask_of(engine_state.limited[0])
            assert state.legal == mask_of(engine_state.legal_cells[0][:cells])
            assert state.to_move == int(engine_state.to_move[0])
            if not game.is_over:
                rebuilt = solver.state_from_arrays(
                    engine_state.stones[0], engine_state.limited[0], engine_state.button[0],
                    engine_state.to_move[0], engine_state.stones_left[0])
                assert rebuilt.legal == state.legal and rebuilt.ends == state.ends
                assert all(rebuilt.partner[e] == state.partner[e] for e in iter_bits(state.ends))
        assert solver.children(state) == [] or game_type == "double"
        assert solver.terminal_value(state) / 2 == pytest.approx(game.result()[1])


@pytest.mark.parametrize("game_type,scoring", VARIANTS)
def test_side2_values_match_a_naive_reference_minimax(game_type, scoring):
    board = get_board(2)
    komis = [0, 2, 3, 9] if game_type == "komi" else [0]
    for komi in komis:
        reference = ReferenceGame(board.neighbours, game_type, scoring, komi).minimax()
        assert make_solver(2, game_type, scoring, komi).value() == reference


def test_side3_endgames_match_the_reference():
    """Random side-3 positions a few moves from the end, solved both ways."""
    board = get_board(3)
    rng = np.random.default_rng(7)
    for game_type, scoring in VARIANTS:
        reference = ReferenceGame(board.neighbours, game_type, scoring, 0)
        solver = make_solver(3, game_type, scoring)
        ref_state, state = reference.initial(), solver.initial_state()
        for _ in range(8):
            actions = reference.actions(ref_state)
            if not actions:
                break
            action = int(rng.choice(actions))
            ref_state = reference.play(ref_state, action)
            state = dict(solver.children(state))[action]
        assert solver.value(state) == reference.minimax(ref_state)


@pytest.mark.parametrize("scoring", ["standard", "quadratic"])
def test_margin_moves_one_for_one_with_komi_on_side2(scoring):
    """Solving directly at several komi values: the margin is the komi-0 margin minus komi
    (the button's holder under optimal play does not depend on komi's effect on the
    margin), so Black wins at komi k exactly when the komi-0 margin exceeds k."""
    base = make_solver(2, "komi", scoring).value()
    for komi in range(0, 12):
        value = make_solver(2, "komi", scoring, komi).value()
        assert value == base - komi
        assert (value > 0) == (base > komi)


def test_symmetric_positions_share_a_key():
    solver = make_solver(3, "komi", "standard")
    board = get_board(3)
    start = solver.initial_state()
    keys = {solver.key(child) for _, child in solver.children(start)}
    # side 3 has four classes of cells under the 12 symmetries, plus the button
    assert len(keys) == 5
    first = solver.place(start, board.parse_cell("A1"))
    mirrored = solver.place(start, board.parse_cell("E5"))
    assert solver.key(first) == solver.key(mirrored)
