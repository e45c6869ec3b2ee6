"""PlaySession's explanations: the reason in a refused move, claims per action, the last
turn's cells, the swap decision."""

from __future__ import annotations

import pytest

from catena_zero.play.session import PlaySession, SessionError
from catena_zero.rules import BLACK, WHITE, Rules
from tests.play.test_play_session import ScriptedPlayer


def test_a_refused_move_carries_its_reason() -> None:
    session = PlaySession(ScriptedPlayer(), Rules(side=3), komi=0)
    session.human_move("C3")
    with pytest.raises(SessionError, match="illegal move C3: C3 is occupied") as refused:
        session.human_move("C3")
    assert refused.value.reason == "C3 is occupied (a black stone)"


def test_claims_since_and_the_last_turn() -> None:
    session = PlaySession(ScriptedPlayer(), Rules(side=2), komi=0)
    seen = []
    while not session.game.is_over:
        start = session.turn_start()
        session.human_move(session.game.legal_actions()[-1])
        seen += session.claims_since(start)
        assert session.last_turn_cells() == [a for a in session.game.history[-1:]
                                             if a != session.rules.board.button_action]
    assert seen and all(turn.actor in ("you", "the model") and turn.claims for turn in seen)
    start = session.turn_start()
    session.undo()
    assert session.claims_since(start) == []


def test_double_marks_both_stones_of_the_last_turn() -> None:
    session = PlaySession(ScriptedPlayer(), Rules(side=3, game_type="double"), komi=0,
                          human_colour="white")
    session.human_move("C3")
    session.human_move("E5")  # the model answers with two stones
    assert len(session.last_turn_cells()) == 2
    assert session.last_turn_cells() == session.game.history[-1:-3:-1]


def test_the_swap_decision() -> None:
    session = PlaySession(ScriptedPlayer(colour=WHITE), Rules(side=3, game_type="nokomi"))
    assert session.swap_decision() is None
    session.human_move("C3")
    assert session.swap_decision() == "the model did not swap: it plays on as White"
    session = PlaySession(ScriptedPlayer(), Rules(side=3, game_type="nokomi"),
                          human_colour="white")
    assert session.swap_decision() is None  # the opening stone is down, nobody decided
    session.human_swap()
    assert session.human == BLACK
    assert session.swap_decision() == "you swapped: you take the opening stone and play Black"
    session.undo()
    assert session.swap_decision() is None
    session.human_move("C3")
    assert session.swap_decision() == "you did not swap: you play on as White"
    assert PlaySession(ScriptedPlayer(), Rules(side=3)).swap_decision() is None
