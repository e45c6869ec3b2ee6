"""The terminal explains the board: marks, legend, reasons, claims, score parts, one point
of view for win rates, the swap decision. Literal boards, with a scripted player."""

from __future__ import annotations

import io

import numpy as np

from catena_zero.play.model_player import Analysis, MoveInfo, PositionEvaluation
from catena_zero.play.terminal import TerminalConfig, play_terminal
from catena_zero.rules import BLACK, WHITE


class _Library:
    def describe(self, side: int) -> str:
        return f"side {side} scripted player"


class ScriptedPlayer:
    """Plays the first legal action; a fixed evaluation and analysis (White to move: the
    analysis says 60% for White, its move 70% for White)."""

    def __init__(self, colour: int = WHITE) -> None:
        self.library = _Library()
        self.colour = colour

    def genmove(self, game, **options) -> int:
        return game.legal_actions()[0]

    def choose_komi(self, rules) -> int:
        return 0

    def choose_colour(self, game) -> int:
        return self.colour

    def evaluate(self, game) -> PositionEvaluation:
        return PositionEvaluation(0.25, -1.0, np.zeros(game.rules.board.num_cells, np.float32))

    def analyze(self, game) -> Analysis:
        to_move = int(game.state.to_move[0])
        first = game.legal_actions()[0]
        return Analysis(to_move, 0.6, 2.0, first,
                        [MoveInfo(first, game.rules.board.action_name(first), 3, 0.5, 0.7)])


def run(text: str, player: ScriptedPlayer | None = None, **settings) -> str:
    output = io.StringIO()
    settings.setdefault("side", 3)
    assert play_terminal(player or ScriptedPlayer(), TerminalConfig(**settings),
                         io.StringIO(text), output) == 0
    return output.getvalue()


def block(text: str, first: str, lines: int) -> str:
    """The `lines` lines of `text` starting at the last line that starts with `first`."""
    all_lines = text.splitlines()
    start = max(i for i, line in enumerate(all_lines) if line.startswith(first))
    return "\n".join(all_lines[start:start + lines])


def test_marks_last_turn_unplayable_cells_and_letters_on_every_edge() -> None:
    text = run("c3\nquit\n")
    # Black C3, the model A1: A1 is marked as the last turn; the cells beside C3 stay
    # playable, and every column has its letter at both ends.
    assert block(text, "      C D E", 7) == "\n".join([
        "      C D E",
        " 5   B . . .",
        " 4  A . . . .",
        " 3   . . X . .",
        " 2    . . . . E",
        " 1    (O). . D",
        "        A B C",
    ])
    assert "(X) stones of the last turn" in text and "- empty, unplayable" in text
    assert "score now (stones): Black 1 = 1 stone | White 1 = 1 stone | 0" in text
    assert "(Black's view: win rate for black 25%)" in text  # after the model's move


def test_unplayable_cells_and_the_reason_of_an_illegal_move() -> None:
    text = run("c3\nd3\nc2\nquit\n")  # C3-D3 is one ribbon: C2 touches both of its ends
    assert "error: illegal move C2: C2 would close a ring: C3 and D3 are in the same " \
           "ribbon" in text
    # The model's A1-A2 (A2 just played): B2 touches both ends, C2 both of C3-D3.
    assert block(text, " 2 ", 1) == " 2   (O)- - . E"


def test_claims_are_announced_and_the_game_ends_with_a_breakdown() -> None:
    cells = ["A1", "A2", "B1", "B2", "B3", "C2", "C3"]
    text = run("\n".join(cells * 2) + "\n", side=2, komi=2)
    assert "ribbon" in text and " claims it" in text and "played" in text
    final = text[text.index("game over: "):].splitlines()
    assert final[1].startswith("final score (stones): Black ")
    assert final[2].startswith("  Black: ") and "in claimed ribbons" in final[2]
    assert final[3].startswith("  White: ") and "2 komi" in final[3]


def test_hint_is_from_blacks_view() -> None:
    text = run("hint\nquit\n", colour="white")
    # White to move: 60% for White is 40% for Black, the move's 70% for White is 30%.
    assert "Black's view: win rate for black 40.0% (the search's mean), score lead " \
           "W+2 stones" in text
    assert "top moves for white (win rate for black after each):" in text
    assert "win rate for black 30.0%" in text


def test_nokomi_swap_decisions_are_shown() -> None:
    text = run("c3\nquit\n", game_type="nokomi", player=ScriptedPlayer(colour=WHITE))
    assert "the model did not swap: it plays on as White" in text
    text = run("c3\nquit\n", game_type="nokomi", player=ScriptedPlayer(colour=BLACK))
    assert "the model swapped: it takes the opening stone" in text
    text = run("c3\nquit\n", game_type="nokomi", colour="white")
    assert "you did not swap: you play on as White" in text


def test_score_units_follow_the_scoring() -> None:
    text = run("c3\nquit\n", scoring="quadratic")
    assert "score now (quadratic points (squared ribbon lengths)): Black 0 = 0 ribbons" in text
    text = run("c3\nquit\n", scoring="longest", komi=2)
    assert "score now (ribbon length): Black 0 = longest ribbon 0 | White 0 = " \
           "longest ribbon 0 + 2 komi (added once White has a ribbon)" in text
