"""Time controls: the game clock and its manager (play.time_control), the GTP commands that set
it (play.gtp_time), genmove under a clock, and a whole timed game with a model."""

from __future__ import annotations

import time

import numpy as np
import pytest

from catena_zero.play.gtp import GtpEngine, RandomPlayer
from catena_zero.play.gtp_time import install_time_commands
from catena_zero.play.time_control import (
    THINK_LEVELS,
    GameClock,
    moves_left_estimate,
    think_level,
)
from catena_zero.rules import BLACK, WHITE, Rules
from tests.play.test_play_gtp import ok, refused


class TimedPlayer(RandomPlayer):
    """Random moves that take `delay` seconds and record the time bound each was given."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(seed=1)
        self.delay = delay
        self.bounds: list[float | None] = []

    def genmove(self, game, seconds=None) -> int:
        self.bounds.append(seconds)
        time.sleep(self.delay)
        return super().genmove(game)


def timed_engine(player=None, side: int = 4) -> GtpEngine:
    engine = GtpEngine(player or TimedPlayer(), rules=Rules(side=side))
    install_time_commands(engine)
    return engine


# ------------------------------------------------------------------------ the clock
def test_gtp_settings_map_to_the_kinds():
    assert GameClock.gtp(0, 0, 0).kind == "none"
    assert GameClock.gtp(300, 10, 0).kind == "none"  # byo-yomi time, no stones: no limit
    assert GameClock.gtp(300, 0, 0).kind == "absolute"
    canadian = GameClock.gtp(300, 60, 25)
    assert (canadian.kind, canadian.main, canadian.period, canadian.stones) == (
        "canadian", 300, 60, 25)


def test_sudden_death_spreads_the_time_and_never_plans_past_the_end():
    clock = GameClock.absolute(10.0)
    first = clock.move_seconds(BLACK, moves_left=40)
    assert first == pytest.approx((10.0 * 0.9 - 0.05 * 40) / 40)
    clock.set_left(BLACK, 0.3, 0)
    late = clock.move_seconds(BLACK, moves_left=40)
    assert 0 <= late < 0.3 - 0.05 + 1e-9
    clock.set_left(BLACK, 0.0, 0)
    assert clock.move_seconds(BLACK, moves_left=5) == 0.0
    assert clock.move_seconds(WHITE, moves_left=40) == pytest.approx(first)


def test_canadian_overtime_spreads_the_period_over_its_stones():
    clock = GameClock.gtp(0, 30, 10)  # no main time: straight into overtime
    assert clock.clocks[BLACK].in_overtime and clock.clocks[BLACK].stones == 10
    assert clock.move_seconds(BLACK, 50) == pytest.approx(0.7 * 30 / 10)
    clock.set_left(BLACK, 4.0, 2)
    assert clock.move_seconds(BLACK, 50) == pytest.approx(0.7 * 2.0)
    for _ in range(2):
        clock.charge(BLACK, 1.0)
    assert clock.clocks[BLACK].left == 30 and clock.clocks[BLACK].stones == 10  # a new period


def test_byoyomi_keeps_a_period_used_in_time_and_loses_one_overrun():
    clock = GameClock("byoyomi", main=10.0, period=5.0, periods=3)
    in_main = clock.move_seconds(BLACK, 20)
    assert in_main == pytest.approx((9.0 - 0.05 * 20) / 20 + 0.7 * 5.0)  # share + a period
    clock.set_left(BLACK, 1.0, 0)
    clock.charge(BLACK, 2.0)  # 1 s of main time, then 1 s into the first period
    assert clock.clocks[BLACK].in_overtime and clock.clocks[BLACK].periods == 3
    assert clock.move_seconds(BLACK, 20) == pytest.approx(0.7 * 5.0)
    clock.charge(BLACK, 6.0)  # overran one period
    assert clock.clocks[BLACK].periods == 2 and clock.clocks[BLACK].left == 5.0


def test_no_limit_and_bad_settings():
    clock = GameClock("none")
    assert clock.move_seconds(BLACK, 10) is None
    clock.charge(BLACK, 100.0)
    with pytest.raises(ValueError, match="kind"):
        GameClock("hourglass")
    with pytest.raises(ValueError, match="main time"):
        GameClock("absolute", main=float("nan"))
    with pytest.raises(ValueError, match="stone"):
        GameClock("canadian", main=0, period=10, stones=0)
    with pytest.raises(ValueError, match="time_left"):
        GameClock.absolute(5).set_left(BLACK, -1.0, 0)


def test_moves_left_and_think_levels():
    assert moves_left_estimate(91) == 46 and moves_left_estimate(0) == 1
    assert moves_left_estimate(40, stones_per_turn=2) == 10
    assert think_level("Quick") == THINK_LEVELS["quick"] == (0.5, 128)
    seconds = [THINK_LEVELS[name][0] for name in ("quick", "normal", "strong")]
    assert seconds == sorted(seconds)
    with pytest.raises(ValueError, match="quick, normal, strong"):
        think_level("blitz")


# ------------------------------------------------------------------ GTP commands
def test_time_commands_are_listed_and_set_the_clock():
    engine = timed_engine()
    listed = ok(engine, "list_commands").split("\n")
    assert {"time_settings", "time_left", "kgs-time_settings"} <= set(listed)
    ok(engine, "time_settings 60 0 0")
    assert engine.clock.kind == "absolute" and engine.clock.main == 60
    ok(engine, "time_left b 12.5 0")
    assert engine.clock.clocks[BLACK].left == 12.5
    ok(engine, "kgs-time_settings byoyomi 30 5 3")
    assert (engine.clock.kind, engine.clock.periods) == ("byoyomi", 3)
    ok(engine, "kgs-time_settings canadian 0 60 10")
    assert engine.clock.kind == "canadian" and engine.clock.clocks[WHITE].stones == 10
    ok(engine, "kgs-time_settings absolute 90")
    ok(engine, "kgs-time_settings none")
    assert not engine.clock.limited


@pytest.mark.parametrize("command", [
    "time_settings 60 0", "time_settings -5 0 0", "time_settings x 0 0",
    "time_settings nan 0 0", "time_settings 60 0 -1", "time_left b 10", "time_left red 10 0",
    "time_left b -1 0", "kgs-time_settings", "kgs-time_settings fischer 60 5",
    "kgs-time_settings byoyomi 30 5", "kgs-time_settings byoyomi 30 5 0",
    "kgs-time_settings canadian 0 60 0",
])
def test_bad_time_commands_are_refused(command):
    engine = timed_engine()
    ok(engine, "time_settings 60 0 0")
    kind, left = engine.clock.kind, engine.clock.clocks[BLACK].left
    refused(engine, command)
    assert engine.clock.kind == kind and engine.clock.clocks[BLACK].left == left


def test_genmove_gets_a_bound_only_under_a_clock_and_is_charged():
    player = TimedPlayer(delay=0.05)
    engine = timed_engine(player)
    ok(engine, "genmove b")
    assert player.bounds == [None]
    ok(engine, "time_settings 20 0 0")
    ok(engine, "genmove w")
    assert player.bounds[-1] is not None and 0 < player.bounds[-1] < 20 / 10
    assert 20 - 0.2 < engine.clock.clocks[WHITE].left <= 20 - 0.05
    ok(engine, "clear_board")
    assert engine.clock.clocks[WHITE].left == 20


def test_a_timed_game_with_a_model_ends_in_time():
    """Side 4, 3 s sudden death for both, the engine playing both colours with no
    time_left: its own clocks must never run out."""
    from catena_zero.play.bundled import ModelLibrary
    from catena_zero.play.model_player import ModelPlayer, PlayerConfig
    from tests.export.tiny_model import tiny_model_file

    player = ModelPlayer(ModelLibrary(tiny_model_file(4)), PlayerConfig(simulations=10_000))
    player.warm_up(Rules(side=4))
    engine = timed_engine(player)
    ok(engine, "time_settings 3 0 0")
    colours = ["b", "w"]
    moves = 0
    while not engine.game.is_over:
        ok(engine, f"genmove {colours[moves % 2]}")
        moves += 1
    assert moves > 10
    for colour in (BLACK, WHITE):
        assert engine.clock.clocks[colour].left > 0
    assert np.isfinite(player.rates[Rules(side=4)])
