"""The fast batched engine against the definitional reference, move by move.

Every position compares the full legal mask (cells and button), the ribbon-rule legal
cells, stone colours, degrees, limited flags, side to move, stones left, button,
last placer, move number and terminal flag; every finished game compares winner,
margin and result string. Each reference trajectory is replayed under all three
scorings (each with its own random komi), so one trajectory checks three fast games.
"""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catena_zero.rules import Engine, Rules
from tests.rules.reference_engine import GAME_TYPES, SCORINGS, RefGame, komi_range
from tests.rules.rules_crosscheck_support import (
    compare_state,
    crosscheck,
    crosscheck_with_restarts,
)

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


@settings(max_examples=40, deadline=None)
@given(side=st.integers(2, 5), game_type=st.sampled_from(GAME_TYPES),
       scoring=st.sampled_from(SCORINGS), komi_fraction=st.floats(0, 1),
       choices=st.lists(st.integers(0, 10**6), max_size=80))
def test_hypothesis_move_sequences_match_reference(side, game_type, scoring, komi_fraction,
                                                   choices):
    # Hypothesis picks the moves (index into the legal list), so a disagreement would be
    # shrunk to a short move list.
    low, high = komi_range(game_type, scoring)
    komi = low + round(komi_fraction * (high - low))
    engine = Engine(Rules(side=side, game_type=game_type, scoring=scoring))
    state = engine.new_games(1, komi=komi)
    ref = RefGame(side, game_type, scoring, komi)
    for choice in choices:
        mask = ref.legal_actions()
        compare_state(ref, engine, state, 0, engine.legal_actions(state)[0], mask, komi,
                      scoring)
        if ref.terminal:
            break
        legal = [action for action, ok in enumerate(mask) if ok]
        action = legal[choice % len(legal)]
        engine.step(state, np.array([action]))
        ref.step(action, mask)
    if ref.terminal:
        winner, margin = ref.result()
        result = engine.result(state)
        assert (int(result.winner[0]), float(result.margin[0])) == (winner, margin)
