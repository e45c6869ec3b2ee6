"""rules/explain.py: illegal-move reasons agree with the engine, claims name the ribbons
RULES.md claims, and the score parts add up to the engine's result."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.rules import BLACK, WHITE, Game, GameType, Rules, Scoring
from catena_zero.rules.explain import claims_after, illegal_reason, mover_of, score_parts
from tests.rules.test_rules_seeds import EXAMPLE_1_MOVES, EXAMPLE_2_MOVES

VARIANTS = [(game_type, scoring) for game_type in GameType for scoring in Scoring]


def played(moves: list[str], rules: Rules | None = None, komi: int = 0) -> Game:
    game = Game(rules or Rules(side=6), komi=komi)
    for move in moves:
        game.play(move)
    return game


def test_the_seed_examples_name_the_rule_broken() -> None:
    game = played(EXAMPLE_1_MOVES)
    assert illegal_reason(game, "B5") is None and illegal_reason(game, "F5") is None
    assert "close a ring" in illegal_reason(game, "D6")
    assert "3 stone neighbours" in illegal_reason(game, "G6")
    assert illegal_reason(game, "I6").startswith("I6 would form a branch at H6")
    assert illegal_reason(game, "C5") == "C5 is occupied (a black stone)"
    assert "not a cell" in illegal_reason(game, "Z9") or "not on the side-6" in \
        illegal_reason(game, "Z9")
    assert illegal_reason(game, "F5", colour=WHITE) == "it is Black's turn"


def test_button_reasons() -> None:
    game = played([], Rules(side=3, game_type="nokomi"))
    assert "first move must be a stone" in illegal_reason(game, "button")
    game.play("C3")
    game.play("button")
    assert illegal_reason(game, "button") == "the button has already been taken (by White)"
    double = played([], Rules(side=3, game_type="double"))
    assert illegal_reason(double, "button") == "there is no button in the double game type"


@pytest.mark.parametrize("game_type,scoring", VARIANTS)
def test_reason_is_none_exactly_when_the_engine_says_legal(game_type, scoring) -> None:
    rng = np.random.default_rng(hash((game_type, scoring)) % 2**32)
    for side in range(2, 11):
        rules = Rules(side=side, game_type=game_type, scoring=scoring)
        game = Game(rules)
        actions = np.arange(rules.board.num_actions)
        while True:
            legal = set(game.legal_actions())
            sample = actions if side <= 4 else rng.choice(actions, 40, replace=False)
            for action in sample:
                reason = illegal_reason(game, int(action))
                assert (reason is None) == (int(action) in legal), (side, action, reason)
                assert reason is None or "not a legal placement" not in reason
            if game.is_over:
                break
            # Play on fast: long random stretches on the big boards.
            game.play(int(rng.choice(sorted(legal))))
            for _ in range(0 if side <= 4 else 3):
                if not game.is_over:
                    game.play(int(rng.choice(game.legal_actions())))


def test_seed_example_2_claim_is_described() -> None:
    game = played(EXAMPLE_2_MOVES)
    before = game.state.copy()
    game.play("C8")
    claims = claims_after(before, game.state)
    [claim] = claims
    assert claim.cells == ["A1", "A2", "A3", "A4", "A5", "A6"] and claim.owner == WHITE
    assert (claim.black, claim.white, claim.taken, claim.tie) == (2, 4, 2, False)
    assert claim.text() == ("ribbon A1-A6 limited (2 black, 4 white): White claims it, "
                            "2 stones taken")


def test_a_tie_goes_to_the_opponent_of_the_limiting_move() -> None:
    rng = np.random.default_rng(3)
    ties = 0
    for _ in range(40):
        game = Game(Rules(side=3))
        while not game.is_over:
            before = game.state.copy()
            mover = game.to_move
            game.play(int(rng.choice(game.legal_actions())))
            for claim in claims_after(before, game.state):
                assert claim.black + claim.white == len(claim.cells)
                if claim.tie:
                    ties += 1
                    assert claim.owner == 3 - mover
                    assert "a tie goes to the opponent" in claim.text()
                else:
                    assert claim.owner == (BLACK if claim.black > claim.white else WHITE)
                assert all(game.state.stones[0][game.board.parse_cell(c)] == claim.owner
                           for c in claim.cells)
    assert ties > 0


@pytest.mark.parametrize("game_type,scoring", VARIANTS)
def test_final_score_parts_agree_with_the_result(game_type, scoring) -> None:
    rng = np.random.default_rng(7)
    for side in (2, 3, 4):
        rules = Rules(side=side, game_type=game_type, scoring=scoring)
        for komi in sorted({0, rules.komi_range[1] and 3}):
            game = Game(rules, komi=komi)
            while not game.is_over:
                parts = score_parts(game)
                assert not parts.final
                game.play(int(rng.choice(game.legal_actions())))
            parts = score_parts(game)
            assert parts.final and parts.lead == game.result_string()
            result = game.engine.result(game.state)
            if result.black_score is not None:
                assert parts.black.total == pytest.approx(result.black_score[0])
                assert parts.white.total == pytest.approx(result.white_score[0])
            else:
                lead = parts.remaining[0] if parts.remaining else None
                assert lead is None or abs(lead) == abs(result.margin[0])
            assert parts.black.claimed + parts.white.claimed <= game.state.stones[0].size
            assert parts.line().startswith("final score (")


def test_live_score_line_has_its_parts() -> None:
    game = played(["C3", "button", "B2"], Rules(side=3), komi=3)
    parts = score_parts(game)
    assert parts.line() == ("score now (stones): Black 2 = 2 stones | "
                            "White 3.5 = 0 stones + 0.5 button + 3 komi | W+1.5")
    quadratic = played(["C3", "C4"], Rules(side=3, scoring="quadratic"), komi=0)
    assert quadratic.rules.scoring == Scoring.QUADRATIC
    assert "quadratic points (squared ribbon lengths)" in score_parts(quadratic).line()


@pytest.mark.parametrize("game_type", list(GameType))
def test_mover_of_matches_the_engine(game_type) -> None:
    rng = np.random.default_rng(11)
    rules = Rules(side=3, game_type=game_type)
    for _ in range(5):
        game = Game(rules)
        while not game.is_over:
            assert mover_of(rules, len(game.history)) == game.to_move
            game.play(int(rng.choice(game.legal_actions())))
