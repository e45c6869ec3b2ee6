"""Fast unit tests of the batched engine's API: geometry, notation, seeds' examples, bad input,
double placement, results of the three scorings, GameState plumbing, observe, Game."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.rules import (
    BLACK,
    EMPTY,
    NO_ACTION,
    NUM_GLOBALS,
    NUM_PLANES,
    WHITE,
    Engine,
    Game,
    GameState,
    IllegalActionError,
    Rules,
    get_board,
    observe,
    result_string,
)


def names(board, mask) -> set[str]:
    return {board.action_name(int(a)) for a in np.nonzero(mask)[0]}


# ---------------------------------------------------------------- board and notation
def test_cell_counts_and_sides():
    counts = [get_board(side).num_cells for side in range(2, 11)]
    assert counts == [7, 19, 37, 61, 91, 127, 169, 217, 271]
    for side in (1, 11, 0, "6", 6.0):
        with pytest.raises(ValueError, match="side"):
            get_board(side)


def test_side6_names_corners_and_neighbours():
    board = get_board(6)
    assert board.num_actions == 92 and board.button_action == 91
    assert board.cell_name(0) == "A1" and board.cell_name(1) == "A2"
    for corner in ("A1", "F1", "K6", "K11", "F11", "A6"):
        assert board.cell_name(board.parse_cell(corner.lower())) == corner
    assert tuple(board.coords[board.parse_cell("F6")]) == (5, 5)
    d6 = board.parse_cell("D6")
    around = [board.cell_name(int(n)) for n in board.neighbours[d6]]
    assert around == ["E6", "C6", "D7", "D5", "E7", "C5"]
    a1 = board.neighbours[board.parse_cell("A1")]
    assert (a1 == board.num_cells).sum() == 3  # a corner has three neighbours
    assert board.parse_action("button") == board.parse_action("PASS") == 91
    assert board.action_name(91) == "button"
    grid = np.zeros(board.grid_size**2, dtype=int)
    grid[board.cell_grid_index] += 1
    assert grid.sum() == 91 and grid.max() == 1


@pytest.mark.parametrize("name", ["A7", "G1", "L1", "A0", "", "F", "6F", "F 6", "AA1", "F6x"])
def test_bad_cell_names(name):
    with pytest.raises(ValueError):
        get_board(6).parse_cell(name)


@pytest.mark.parametrize("side", [2, 3, 6, 10])
def test_symmetries_are_adjacency_preserving_permutations(side):
    board = get_board(side)
    cells = board.num_cells
    assert board.symmetries.shape == (12, cells)
    assert (board.symmetries[0] == np.arange(cells)).all()
    adjacency = board.adjacency[:cells, :cells]
    images = set()
    for table in board.symmetries:
        assert sorted(table) == list(range(cells))
        assert (adjacency[np.ix_(table, table)] == adjacency).all()
        images.add(tuple(table))
    assert len(images) == (12 if side > 1 else 1)
    assert (board.action_symmetries[:, cells] == cells).all()


# ---------------------------------------------------------------- seeds' examples
def test_seed_example_one():
    game = Game(Rules(6))
    for move in ["C5", "G5", "D5", "H6", "E5", "H7"]:
        game.play(move)
    legal = names(game.board, game.state.legal_cells[0])
    assert {"B5", "F5"} <= legal
    assert not {"D6", "G6", "I6"} & legal


def test_seed_example_two():
    game = Game(Rules(6))
    # Black A2, A5, C1, C2, C7, E7; White A1, A3, A4, A6, D7, then C8.
    for move in ["A2", "A1", "C1", "A3", "C2", "A4", "A5", "A6", "C7", "D7", "E7"]:
        game.play(move)
    assert game.stones_of("w") == ["A1", "A3", "A4", "A6", "D7"]
    legal = names(game.board, game.state.legal_cells[0])
    assert not {"B1", "B2", "B6"} & legal
    assert {"B7"} <= legal
    assert not game.state.limited[0].any()
    game.play("C8")
    assert "B7" not in names(game.board, game.state.legal_cells[0])
    a_ribbon = [game.board.parse_cell(f"A{row}") for row in range(1, 7)]
    assert (game.state.stones[0, a_ribbon] == WHITE).all()
    assert game.state.limited[0, a_ribbon].all()
    assert game.state.limited[0].sum() == 6


# ---------------------------------------------------------------- bad input
def test_nearest_komi_rounds_an_estimate_into_the_range():
    standard, quadratic, nokomi = Rules(4), Rules(4, "komi", "quadratic"), Rules(4, "nokomi")
    assert standard.nearest_komi(9.72) == 10 and standard.nearest_komi(9.4) == 9
    assert standard.nearest_komi(17.2) == 15 and standard.nearest_komi(-2.0) == 0
    assert quadratic.nearest_komi(120.6) == 121
    assert nokomi.nearest_komi(7.3) == 0
    for missing in (None, float("nan"), float("inf")):
        assert standard.nearest_komi(missing) == 0


def test_bad_rules_and_komi():
    with pytest.raises(ValueError, match="game type"):
        Rules(6, "triple")
    with pytest.raises(ValueError, match="scoring"):
        Rules(6, "komi", "cubic")
    with pytest.raises(ValueError, match="side"):
        Rules(11)
    assert Rules(6, "komi", "quadratic").komi_range == (0, 1000)
    assert Rules(6, "nokomi").komi_range == (0, 0)
    assert Rules(6, "double", "longest").komi_range == (0, 0)
    with pytest.raises(ValueError, match="16"):
        Engine(Rules(6)).new_games(3, komi=16)
    with pytest.raises(ValueError, match="-1"):
        Engine(Rules(6)).new_games(3, komi=np.array([0, -1, 2]))
    with pytest.raises(ValueError, match="1"):
        Engine(Rules(6, "nokomi")).new_games(2, komi=1)
    Engine(Rules(6, "komi", "quadratic")).new_games(2, komi=1000)


def test_illegal_actions_leave_state_unchanged():
    engine = Engine(Rules(6))
    state = engine.new_games(3)
    d6 = engine.board.parse_cell("D6")
    engine.step(state, np.array([d6, d6, NO_ACTION]))
    before = state.copy()
    with pytest.raises(IllegalActionError, match="game 1"):
        engine.step(state, np.array([0, d6, 5]))  # game 1 replays an occupied cell
    with pytest.raises(IllegalActionError, match="game 2"):
        engine.step(state, np.array([0, 1, 92]))  # out of range
    with pytest.raises(ValueError, match="shape"):
        engine.step(state, np.array([0, 1]))
    for name, array in before._arrays().items():
        assert (getattr(state, name) == array).all(), name


def test_step_on_finished_game_raises():
    engine = Engine(Rules(2))
    state = engine.new_games(2)
    for move in ["B2", "A1", "B3"]:
        engine.step(state, np.array([engine.board.parse_cell(move), NO_ACTION]))
    assert state.terminal.tolist() == [True, False]
    assert not engine.legal_actions(state)[0].any()
    with pytest.raises(IllegalActionError, match="game 0.*finished"):
        engine.step(state, np.array([0, 0]))
    assert (engine.random_actions(state, np.random.default_rng(0))[0]) == NO_ACTION


def test_nokomi_button_not_on_first_move():
    engine = Engine(Rules(6, "nokomi"))
    state = engine.new_games(1)
    assert not engine.legal_actions(state)[0, 91]
    with pytest.raises(IllegalActionError, match="button"):
        engine.step(state, np.array([91]))
    engine.step(state, np.array([0]))
    assert engine.legal_actions(state)[0, 91]
    engine.step(state, np.array([91]))
    assert state.button[0] == WHITE and state.to_move[0] == BLACK
    assert not engine.legal_actions(state)[0, 91]


def test_double_has_no_button():
    engine = Engine(Rules(6, "double"))
    state = engine.new_games(1)
    assert not engine.legal_actions(state)[0, 91]


# ---------------------------------------------------------------- double placement
def test_double_turn_order():
    engine = Engine(Rules(6, "double"))
    state = engine.new_games(4)
    rng = np.random.default_rng(5)
    expected = [(BLACK, 1), (WHITE, 2), (WHITE, 1), (BLACK, 2), (BLACK, 1), (WHITE, 2)]
    for colour, left in expected:
        assert (state.to_move == colour).all() and (state.stones_left == left).all()
        engine.step(state, engine.random_actions(state, rng))
    assert (state.last_placer == WHITE).all() and (state.stones != EMPTY).sum() == 4 * 6


def test_double_ends_with_majority_claim():
    game = Game(Rules(3, "double", "standard"))
    for move in ["D4", "B4", "A1", "B2", "C2", "D3", "C4"]:
        game.play(move)
    # One legal cell (A3) remains, but Black cannot place two stones: the game ends and the
    # unlimited 7-stone ribbon (White 4, Black 3) goes to White.
    assert game.is_over
    assert names(game.board, game.state.legal_cells[0]) == {"A3"}
    assert game.legal_actions() == []
    assert game.stones_of("b") == [] and len(game.stones_of("w")) == 7
    assert game.result_string() == "W+7"


def test_double_end_tie_goes_to_opponent_of_last_placer():
    game = Game(Rules(3, "double", "standard"))
    for move in ["C4", "E3", "E5", "B2", "D3", "B3"]:
        game.play(move)
    # White's second stone: C5 and D5 stay legal, but each kills the other.
    assert game.to_move == WHITE and game.stones_left == 1
    game.play("C2")
    assert game.is_over and names(game.board, game.state.legal_cells[0]) == {"C5", "D5"}
    # The 6-stone ribbon C4-B3-B2-C2-D3-E3 is tied 3-3; White placed last, so Black gets it.
    assert game.stones_of("b") == ["B2", "B3", "C2", "C4", "D3", "E3"]
    assert game.stones_of("w") == ["E5"]
    assert not game.state.limited[0].any()
    assert game.result() == (BLACK, 5.0)


def test_double_first_stone_must_leave_a_second():
    game = Game(Rules(3, "double", "standard"))
    for move in ["C4", "E3", "E5", "B2", "D3"]:
        game.play(move)
    # White to place two stones; every first stone offered must leave a second.
    assert game.to_move == WHITE and game.stones_left == 2
    for first in game.legal_actions():
        trial = Game(Rules(3, "double", "standard"))
        for action in game.history + [first]:
            trial.play(action)
        assert trial.legal_actions(), game.board.action_name(first)


# ---------------------------------------------------------------- results
@pytest.mark.parametrize(
    ("scoring", "komi", "expected"),
    [
        ("standard", 0, "B+2.5"),
        ("standard", 5, "W+2.5"),
        ("quadratic", 0, "B+8.5"),
        ("quadratic", 5, "B+3.5"),
        ("quadratic", 1000, "W+991.5"),
        ("longest", 0, "B+3"),
        ("longest", 15, "B+3"),  # White has no ribbon: the komi goes nowhere (ruling 5)
    ],
)
def test_result_side2_single_ribbon(scoring, komi, expected):
    game = Game(Rules(2, "komi", scoring), komi=komi)
    for move in ["B2", "A1", "B3"]:
        game.play(move)
    assert game.is_over
    assert game.stones_of("black") == ["A1", "B2", "B3"]
    assert game.state.button[0] == WHITE  # Black placed last
    assert game.result_string() == expected


@pytest.mark.parametrize(
    ("scoring", "komi", "expected"),
    [
        ("standard", 0, "B+0.5"),
        ("standard", 3, "W+2.5"),
        ("quadratic", 0, "B+0.5"),
        ("longest", 0, "B+0.5"),  # 1-1 and 4-4 cancel: the button decides
        ("longest", 2, "W+6"),  # White's 4 becomes 6
    ],
)
def test_result_side3_cancelling_pairs(scoring, komi, expected):
    game = Game(Rules(3, "komi", scoring), komi=komi)
    for move in ["E3", "D4", "C1", "C4", "C2", "E5", "A1", "B2", "C5", "A3"]:
        game.play(move)
    assert game.is_over and game.state.button[0] == BLACK
    assert len(game.stones_of("b")) == 5 and len(game.stones_of("w")) == 5
    assert game.result_string() == expected


def test_result_string_format():
    assert result_string(BLACK, 3.5) == "B+3.5"
    assert result_string(WHITE, -2.0) == "W+2"
    assert result_string(EMPTY, 0.0) == "0"
    assert result_string(WHITE, -100000.5) == "W+100000.5"


def test_button_goes_to_non_placer_and_taken_button_stays():
    engine = Engine(Rules(2))
    state = engine.new_games(2)
    cell = engine.board.parse_cell
    engine.step(state, np.array([cell("B2"), 7]))  # game 1: Black takes the button
    engine.step(state, np.array([cell("A1"), cell("B2")]))
    engine.step(state, np.array([cell("B3"), cell("A1")]))
    engine.step(state, np.array([NO_ACTION, cell("B3")]))
    assert state.terminal.all()
    assert state.button.tolist() == [WHITE, BLACK]
    result = engine.result(state)
    strings = [result_string(w, m) for w, m in zip(result.winner, result.margin, strict=True)]
    assert strings == ["B+2.5", "W+2.5"]


# ---------------------------------------------------------------- plumbing
def test_state_take_put_concatenate_copy():
    engine = Engine(Rules(4, "komi", "standard"))
    rng = np.random.default_rng(1)
    state = engine.new_games(6, komi=np.arange(6))
    for _ in range(5):
        engine.step(state, engine.random_actions(state, rng))
    part = state.take(np.array([4, 1]))
    assert part.batch_size == 2 and part.komi.tolist() == [4, 1]
    assert (part.stones == state.stones[[4, 1]]).all()
    joined = GameState.concatenate([state.take(np.arange(3)), state.take(np.arange(3, 6))])
    assert (joined.stones == state.stones).all() and (joined.label == state.label).all()
    copy = state.copy()
    engine.step(copy, engine.random_actions(copy, rng))
    assert (copy.move_number == state.move_number + 1).all()
    fresh = engine.new_games(6)
    fresh.put(np.array([0, 5]), part)
    assert (fresh.stones[0] == state.stones[4]).all() and fresh.komi[5] == 1
    with pytest.raises(ValueError, match="outside"):
        state.take(np.array([6]))


def test_observe_shapes_and_perspective():
    engine = Engine(Rules(6, "komi", "standard"))
    state = engine.new_games(2, komi=np.array([6, 6]))
    engine.step(state, np.array([0, NO_ACTION]))
    planes, features = observe(engine, state)
    assert planes.shape == (2, NUM_PLANES, 11, 11) and planes.dtype == np.float32
    assert features.shape == (2, NUM_GLOBALS) and features.dtype == np.float32
    grid = engine.board.cell_grid_index[0]
    # Game 0: White to move, the stone on A1 is the opponent's.
    assert planes[0, 1].ravel()[grid] == 1 and planes[0, 0].sum() == 0
    assert planes[:, 5].sum() == 2 * 91
    assert features[0, 0] > 0 > features[1, 0]  # komi helps White, who moves in game 0


def test_game_wrapper_undo_and_text():
    game = Game(Rules(6))
    game.play("f6")
    game.play("button")
    game.play("G7")
    assert game.history == [45, 91, game.board.parse_cell("G7")]
    assert game.undo() == game.board.parse_cell("G7")
    assert game.stones_of("b") == ["F6"] and game.state.button[0] == WHITE
    text = game.board_text()
    assert "X" in text and " 6  X" not in text and "A" in text
    with pytest.raises(IllegalActionError):
        game.play("F6")
    with pytest.raises(ValueError):
        game.play("Z9")
    assert game.history == [45, 91]


def test_long_random_runs_stay_exact_on_every_side():
    rng = np.random.default_rng(7)
    for side in range(2, 11):
        for game_type in ("komi", "double"):
            engine = Engine(Rules(side, game_type, "standard"))
            state = engine.new_games(8)
            while not state.terminal.all():
                engine.step(state, engine.random_actions(state, rng))
            stones = state.stones
            around = state.stones_padded[:, engine.board.neighbours_padded[:-1]]  # [B, C, 6]
            assert (state.degree == (around != EMPTY).sum(-1)).all()
            # Every ribbon ends one colour: each stone has its root's colour.
            roots = state.label[:, :-1].astype(np.int64)
            root_colour = np.take_along_axis(state.stones_padded, roots, axis=1)
            assert (root_colour[stones != EMPTY] == stones[stones != EMPTY]).all()
            if game_type == "komi":
                assert state.limited[stones != EMPTY].all()
                assert not state.legal_cells.any()


@pytest.mark.parametrize("game_type", ["komi", "nokomi", "double"])
def test_fast_engine_matches_first_batched_engine(game_type):
    """The optimised engine against the first, simpler batched engine (kept private)."""
    from tests.rules.slow_engine import SlowEngine

    rng = np.random.default_rng(11)
    fields = ("stones", "legal_cells", "limited", "degree", "to_move", "stones_left", "button",
              "last_placer", "move_number", "terminal")
    for side, scoring in ((2, "standard"), (3, "longest"), (4, "quadratic"), (6, "standard")):
        rules = Rules(side, game_type, scoring)
        fast, slow = Engine(rules), SlowEngine(rules)
        high = rules.komi_range[1]
        komi = rng.integers(0, high + 1, size=24)
        fast_state, slow_state = fast.new_games(24, komi), slow.new_games(24, komi)
        while not fast_state.terminal.all():
            legal = fast.legal_actions(fast_state)
            assert (legal == slow.legal_actions(slow_state)).all()
            actions = fast.random_actions(fast_state, rng)
            assert legal[actions >= 0, actions[actions >= 0]].all()
            fast.step(fast_state, actions)
            slow.step(slow_state, actions)
            for name in fields:
                assert (getattr(fast_state, name) == getattr(slow_state, name)).all(), name
            assert (fast_state.legal_count == fast_state.legal_cells.sum(1)).all()
            around = fast_state.legal_padded[:, fast.board.neighbours_padded[:-1]].sum(-1)
            has_stone = fast_state.stones != EMPTY
            assert (fast_state.free[:, :-1][has_stone] == around[has_stone]).all()
        fast_result, slow_result = fast.result(fast_state), slow.result(slow_state)
        assert (fast_result.winner == slow_result.winner).all()
        assert (fast_result.margin == slow_result.margin).all()


def test_long_run_with_restarts_keeps_counters_exact():
    """Thousands of moves with games restarted in place: no counter drifts or overflows."""
    engine = Engine(Rules(3, "komi", "quadratic"))
    rng = np.random.default_rng(5)
    state = engine.new_games(64, komi=rng.integers(0, 1001, size=64))
    komi = state.komi.copy()
    finished = 0
    for _ in range(800):
        engine.step(state, engine.random_actions(state, rng))
        done = np.flatnonzero(state.terminal)
        finished += done.size
        engine.reset_games(state, done)
    assert finished > 2000
    assert (state.komi == komi).all()
    assert (state.legal_count == state.legal_cells.sum(1)).all()
    around = state.stones_padded[:, engine.board.neighbours_padded[:-1]]
    assert (state.degree == (around != EMPTY).sum(-1)).all()
    legal_around = state.legal_padded[:, engine.board.neighbours_padded[:-1]].sum(-1)
    has_stone = state.stones != EMPTY
    assert (state.free[:, :-1][has_stone] == legal_around[has_stone]).all()
    assert (state.degree_padded[:, -1] == 0).all() and not state.legal_padded[:, -1].any()
    assert (state.move_number < 40).all()


@pytest.mark.parametrize("moves", [4, 40])
def test_random_actions_are_uniform_over_legal_actions(moves):
    """Early (proposals accepted) and late (exact fallback) positions, button included."""
    engine = Engine(Rules(6))
    rng = np.random.default_rng(moves)
    state = engine.new_games(1)
    while state.move_number[0] < moves and not state.terminal[0]:
        legal = np.flatnonzero(engine.legal_actions(state)[0, :-1])
        engine.step(state, rng.choice(legal, size=1))  # cells only: keep the button open
    legal = engine.legal_actions(state)[0]
    assert legal[-1] and legal.sum() >= 3
    copies = state.take(np.zeros(30000, dtype=np.int64))
    counts = np.bincount(engine.random_actions(copies, rng), minlength=legal.size)
    assert counts[~legal].sum() == 0
    expected = copies.batch_size / legal.sum()
    # 5 standard deviations of a binomial count: a loose bound that still catches bias.
    assert np.abs(counts[legal] - expected).max() < 5 * np.sqrt(expected)
