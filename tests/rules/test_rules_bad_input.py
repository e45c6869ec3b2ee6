"""Bad input raises a clear error naming the bad value, and changes nothing."""

import dataclasses

import numpy as np
import pytest

from catena_zero.rules import (
    NO_ACTION,
    Engine,
    Game,
    IllegalActionError,
    Rules,
    get_board,
)


def snapshot(state) -> dict:
    return {field.name: np.array(getattr(state, field.name), copy=True)
            for field in dataclasses.fields(state)}


def assert_unchanged(state, before: dict) -> None:
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(state, name), value, err_msg=name)


def played_state(engine: Engine, moves: list[int]):
    state = engine.new_games(3)
    for move in moves:
        engine.step(state, np.array([move, move, move]))
    return state


def test_illegal_actions_raise_and_change_nothing():
    rules = Rules(side=6)
    engine = Engine(rules)
    board = rules.board
    f6, f7, f5 = (board.parse_cell(name) for name in ("F6", "F7", "F5"))
    state = played_state(engine, [f6, f7, f5])  # F5-F6-F7: E6/G6... are illegal now
    before = snapshot(state)
    bad_actions = [
        f6,  # occupied
        board.parse_cell("E6"),  # touches F6 (middle of the ribbon) and F7, F5
        board.num_actions,  # past the button
        -2,
        10**6,
    ]
    for bad in bad_actions:
        actions = np.array([board.parse_cell("A1"), bad, NO_ACTION])
        with pytest.raises(IllegalActionError) as info:
            engine.step(state, actions)
        assert "1" in str(info.value) and str(bad) in str(info.value), str(info.value)
        assert_unchanged(state, before)
    assert issubclass(IllegalActionError, ValueError)


def test_button_twice_and_button_in_double_and_on_nokomi_move_zero():
    rules = Rules(side=4)
    engine = Engine(rules)
    state = engine.new_games(1)
    engine.step(state, np.array([rules.board.button_action]))
    before = snapshot(state)
    with pytest.raises(IllegalActionError):
        engine.step(state, np.array([rules.board.button_action]))
    assert_unchanged(state, before)
    for game_type in ("double", "nokomi"):
        other = Rules(side=4, game_type=game_type)
        other_engine = Engine(other)
        fresh = other_engine.new_games(2)
        before = snapshot(fresh)
        with pytest.raises(IllegalActionError):
            other_engine.step(fresh, np.array([0, other.board.button_action]))
        assert_unchanged(fresh, before)


def test_step_on_finished_game_raises():
    engine = Engine(Rules(side=2))
    state = engine.new_games(2)
    rng = np.random.default_rng(0)
    while not state.terminal[0]:
        actions = engine.random_actions(state, rng)
        actions[1] = NO_ACTION
        engine.step(state, actions)
    before = snapshot(state)
    free = int(np.flatnonzero(state.stones[1] == 0)[0])
    with pytest.raises(IllegalActionError) as info:
        engine.step(state, np.array([free, free]))
    assert "0" in str(info.value)
    assert_unchanged(state, before)


@pytest.mark.parametrize("name", ["", "A", "1", "A0", "Z1", "A-1", "AA1", "A7", "G1",
                                  "L6", "F12", "F 6", "button1", "6F"])
def test_malformed_or_off_board_cell_names(name):
    board = get_board(6)
    with pytest.raises(ValueError):
        board.parse_cell(name)


def test_game_play_bad_input_changes_nothing():
    game = Game(Rules(side=6))
    game.play("F6")
    before = snapshot(game.state)
    history = list(game.history)
    for bad in ["A7", "zz", "F6", "", 10**6]:
        with pytest.raises(ValueError):
            game.play(bad)
        assert_unchanged(game.state, before)
        assert game.history == history


@pytest.mark.parametrize("side", [0, 1, 11, -3, 100])
def test_side_outside_range(side):
    with pytest.raises(ValueError, match=str(side)):
        get_board(side)
    with pytest.raises(ValueError, match=str(side)):
        Rules(side=side)


@pytest.mark.parametrize("game_type,scoring,bad_komi", [
    ("komi", "standard", 16), ("komi", "standard", -1), ("komi", "longest", 16),
    ("komi", "quadratic", 1001), ("komi", "quadratic", -1), ("nokomi", "standard", 1),
    ("double", "standard", 1), ("double", "quadratic", 5),
])
def test_komi_outside_range(game_type, scoring, bad_komi):
    rules = Rules(side=5, game_type=game_type, scoring=scoring)
    engine = Engine(rules)
    with pytest.raises(ValueError, match=str(bad_komi)):
        rules.validate_komi(bad_komi)
    with pytest.raises(ValueError, match=str(bad_komi)):
        engine.new_games(2, komi=bad_komi)
    with pytest.raises(ValueError, match=str(bad_komi)):
        engine.new_games(2, komi=np.array([0, bad_komi]))
    with pytest.raises(ValueError):
        Game(rules, komi=bad_komi)


def test_komi_ranges():
    assert Rules(game_type="komi", scoring="standard").komi_range == (0, 15)
    assert Rules(game_type="komi", scoring="longest").komi_range == (0, 15)
    assert Rules(game_type="komi", scoring="quadratic").komi_range == (0, 1000)
    for game_type in ("nokomi", "double"):
        for scoring in ("standard", "longest", "quadratic"):
            assert Rules(game_type=game_type, scoring=scoring).komi_range == (0, 0)
    Rules(scoring="quadratic").validate_komi(1000)
    Rules().validate_komi(15)


@pytest.mark.parametrize("kwargs,bad", [({"game_type": "swap"}, "swap"),
                                        ({"scoring": "longer"}, "longer"),
                                        ({"game_type": ""}, "''")])
def test_unknown_game_type_or_scoring(kwargs, bad):
    with pytest.raises(ValueError) as info:
        Rules(side=6, **kwargs)
    assert bad.strip("'") in str(info.value)


def test_game_undo_restores_state():
    game = Game(Rules(side=4, game_type="double"))
    before = snapshot(game.state)
    game.play("D4")
    game.play("A1")
    game.undo()
    game.undo()
    assert_unchanged(game.state, before)
    assert game.history == []
