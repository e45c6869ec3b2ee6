"""PlaySession: turns, double placement, the nokomi swap, komi/colour choice and undo."""

from __future__ import annotations

import pytest

from catena_zero.play.session import PlaySession, SessionError
from catena_zero.rules import BLACK, WHITE, Rules


class ScriptedPlayer:
    """Plays the first legal action; its komi and colour choices are fixed (a test double)."""

    def __init__(self, komi: int = 5, colour: int = WHITE) -> None:
        self.komi = komi
        self.colour = colour
        self.moves = 0

    def genmove(self, game, **options) -> int:
        self.moves += 1
        return game.legal_actions()[0]

    def choose_komi(self, rules) -> int:
        return self.komi

    def choose_colour(self, game) -> int:
        return self.colour


def test_the_model_answers_and_undo_takes_both_back() -> None:
    session = PlaySession(ScriptedPlayer(), Rules(side=3), komi=2, human_colour="black")
    assert session.human_to_move() and not session.can_undo()
    replies = session.human_move("c3")
    c3 = session.rules.board.parse_cell("C3")
    assert replies == ["A1"] and session.game.history == [c3, 0]
    with pytest.raises(SessionError, match="illegal move C3"):
        session.human_move("C3")
    with pytest.raises(ValueError, match="malformed"):
        session.human_move("zz")
    assert session.game.history == [c3, 0]
    session.undo()
    assert session.game.history == [] and session.human_to_move()
    with pytest.raises(SessionError, match="nothing to undo"):
        session.undo()


def test_model_as_black_opens_and_double_gives_two_stones() -> None:
    session = PlaySession(ScriptedPlayer(), Rules(side=3, game_type="double"), komi=0,
                          human_colour="white")
    assert session.model_moves == ["A1"] and session.human_to_move()
    session.human_move("C3")
    assert session.human_to_move()  # White places two stones
    replies = session.human_move("E5")
    assert len(replies) == 2 and session.human_to_move()
    session.undo()  # the model's two stones and the person's second stone
    assert len(session.game.history) == 2 and session.human_to_move()


def test_auto_komi_and_colour() -> None:
    session = PlaySession(ScriptedPlayer(komi=7, colour=BLACK), Rules(side=3), komi=None,
                          human_colour="auto")
    assert int(session.game.state.komi[0]) == 7 and session.human == WHITE
    assert session.notes == ["the model chose komi 7 from the network's own estimate",
                             "the model chose black"]
    assert session.model_moves == ["A1"]


def test_nokomi_model_swaps_and_person_swaps() -> None:
    session = PlaySession(ScriptedPlayer(colour=BLACK), Rules(side=3, game_type="nokomi"),
                          human_colour="black")
    assert session.human_move("C3") == ["swap"]
    assert session.human == WHITE and session.human_to_move()
    session.undo()
    assert session.human == BLACK and session.game.history == []

    session = PlaySession(ScriptedPlayer(), Rules(side=3, game_type="nokomi"),
                          human_colour="white")
    assert session.swap_available() and session.game.history == [0]
    session.human_swap()
    assert session.human == BLACK and len(session.game.history) == 2
    with pytest.raises(SessionError, match="no swap"):
        session.human_swap()
    session.undo()
    assert session.human == WHITE and session.swap_available()
    session.human_move("C3")  # playing on declines the swap
    assert not session.swap_available()


def test_finished_games_refuse_moves() -> None:
    session = PlaySession(ScriptedPlayer(), Rules(side=2), komi=0, human_colour="black")
    while not session.game.is_over:
        session.human_move(session.game.legal_actions()[-1])
    with pytest.raises(SessionError, match="over"):
        session.human_move("button")
    with pytest.raises(SessionError, match="unknown colour"):
        PlaySession(ScriptedPlayer(), Rules(side=2), human_colour="green")


class FailingPlayer(ScriptedPlayer):
    """Answers until `failing` is set, then its search breaks (a model error)."""

    failing = False

    def genmove(self, game, **options) -> int:
        if self.failing:
            raise RuntimeError("the model broke")
        return super().genmove(game)


def test_a_failing_reply_takes_the_persons_move_back() -> None:
    player = FailingPlayer(colour=BLACK)
    session = PlaySession(player, Rules(side=3, game_type="nokomi"), komi=0,
                          human_colour="white")
    before = (list(session.game.history), session.human, list(session.events),
              list(session.model_moves), list(session.notes))
    player.failing = True
    seen = []
    for act in (lambda: session.human_move("c3", played=lambda: seen.append(
                    list(session.game.history))),
                lambda: session.human_swap(played=lambda: seen.append(session.human))):
        with pytest.raises(RuntimeError, match="the model broke"):
            act()
        assert (list(session.game.history), session.human, list(session.events),
                list(session.model_moves), list(session.notes)) == before
    # `played` saw the person's move on the board, and the person as Black after the swap.
    assert seen == [before[0] + [session.rules.board.parse_cell("C3")], BLACK]
    player.failing = False
    assert session.human_move("c3") and session.human_to_move()
