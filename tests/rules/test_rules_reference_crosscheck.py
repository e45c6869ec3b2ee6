"""The fast batched engine against the definitional reference, move by move.

Every position compares the full legal mask (cells and button), the ribbon-rule legal
cells, stone colours, degrees, limited flags, side to move, stones left, button,
last placer, move number and terminal flag; every finished game compares winner,
margin and result string. Each reference trajectory is replayed under all three
scorings (each with its own random komi), so one trajectory checks three fast games.
"""

from collections import Counter

import pytest

from tests.rules.reference_engine import GAME_TYPES
from tests.rules.rules_crosscheck_support import crosscheck, crosscheck_with_restarts

# Reference trajectories per game type; the fast subset keeps the whole file well under 30 s.
FAST_TRAJECTORIES = {2: 6, 3: 4, 4: 3, 5: 2, 6: 2, 7: 1, 8: 1, 9: 1, 10: 1}
SLOW_TRAJECTORIES = {2: 150, 3: 150, 4: 120, 5: 80, 6: 60, 7: 30, 8: 20, 9: 12, 10: 10}


@pytest.mark.parametrize("game_type", GAME_TYPES)
@pytest.mark.parametrize("side", range(2, 11))
def test_fast_engine_matches_reference(side, game_type):
    count = crosscheck(side, game_type, FAST_TRAJECTORIES[side], seed=1000 * side + 7)
    assert count.fast_games == 3 * FAST_TRAJECTORIES[side]


@pytest.mark.slow
@pytest.mark.parametrize("game_type", GAME_TYPES)
@pytest.mark.parametrize("side", range(2, 11))
def test_fast_engine_matches_reference_many_games(side, game_type):
    count = crosscheck(side, game_type, SLOW_TRAJECTORIES[side], seed=1000 * side + 99)
    assert count.fast_games == 3 * SLOW_TRAJECTORIES[side]


@pytest.mark.parametrize("game_type", GAME_TYPES)
def test_fast_engine_matches_reference_pure_extension_play(game_type):
    # Always growing existing ribbons makes long ribbons, many joins and late claims.
    crosscheck(6, game_type, 2, seed=4242, extend_bias=1.0, biased_fraction=1.0)


def test_cross_checked_games_reach_the_rare_rule_situations():
    # Small boards, many games: every claiming and scoring corner case must actually occur
    # (and so be compared) at least once. Draws cannot occur: in double placement the number
    # of stones is odd, and so is the sum of lengths and of squared lengths.
    events = Counter()
    for side in (2, 3, 4):
        for game_type in GAME_TYPES:
            events.update(crosscheck(side, game_type, 20, seed=side).events)
    for situation in [
        "claim", "tie claim", "claim changing colours",
        "claim of a ribbon the stone does not touch",
        "mover's own stones claimed by the opponent",
        "double end claim", "double ends with a legal cell left",
        "longest: komi with no White ribbon", "longest: pair removed",
        "longest: no ribbon remains",
    ]:
        assert events[situation] > 0, f"no game reached: {situation}"


@pytest.mark.parametrize("side,game_type,scoring", [(3, "komi", "longest"),
                                                    (4, "double", "quadratic"),
                                                    (5, "nokomi", "standard")])
def test_fast_engine_matches_reference_with_slot_restarts(side, game_type, scoring):
    count = crosscheck_with_restarts(side, game_type, scoring, slots=4, total_games=12,
                                     seed=side)
    assert count.fast_games == 12


@pytest.mark.slow
@pytest.mark.parametrize("game_type", GAME_TYPES)
@pytest.mark.parametrize("side,scoring", [(2, "standard"), (3, "quadratic"), (4, "longest"),
                                          (6, "standard")])
def test_fast_engine_matches_reference_with_many_slot_restarts(side, game_type, scoring):
    total = 600 if side <= 3 else 150 if side == 4 else 40
    count = crosscheck_with_restarts(side, game_type, scoring, slots=16, total_games=total,
                                     seed=77 * side)
    assert count.fast_games == total
