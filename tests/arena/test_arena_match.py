"""Batched matches: colour alternation, scoring, distinct openings, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.arena.agents import GreedyAgent, RandomAgent
from catena_zero.arena.match import combine_results, make_openings, play_match
from catena_zero.arena.stats import wilson_interval
from catena_zero.rules import BLACK, EMPTY, WHITE, Engine, Game, Rules


class RecordingAgent:
    """Random moves; remembers the colour to move and the batch size of every call."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[tuple[np.ndarray, int]] = []

    def select_actions(self, engine, states, rng):
        self.calls.append((states.to_move.copy(), len(states.to_move)))
        assert not states.terminal.any()
        return engine.random_actions(states, rng)


def _replayed_points(rules: Rules, game, komi: int) -> float:
    replay = Game(rules, komi=komi)
    for action in game.actions:
        replay.play(action)
    assert replay.is_over
    assert replay.result_string() == game.result
    winner, _ = replay.result()
    colour = BLACK if game.a_colour == "black" else WHITE
    return 1.0 if winner == colour else 0.5 if winner == EMPTY else 0.0


@pytest.mark.parametrize("rules", [Rules(side=4), Rules(side=3, game_type="double")])
def test_colours_alternate_and_scores_match_a_replay(rules):
    agent_a, agent_b = RecordingAgent("a"), RecordingAgent("b")
    result = play_match(rules, agent_a, agent_b, num_games=16, seed=3, opening_plies=0)
    assert [g.a_colour for g in result.games] == ["black", "white"] * 8
    assert [g.pair for g in result.games] == list(np.repeat(np.arange(8), 2))
    # No opening: at the first step A moves (as Black) in the 8 even games, B in the odd ones.
    first_a, first_b = agent_a.calls[0], agent_b.calls[0]
    assert first_a[1] == first_b[1] == 8
    assert (first_a[0] == BLACK).all() and (first_b[0] == BLACK).all()
    for game in result.games:
        assert game.a_points == _replayed_points(rules, game, komi=0)
    points = np.array([g.a_points for g in result.games])
    assert result.wins == int((points == 1).sum()) and result.losses == int((points == 0).sum())
    assert result.draws == int((points == 0.5).sum())
    assert result.a_as_black.games == result.a_as_white.games == 8
    assert result.a_as_black.wins + result.a_as_white.wins == result.wins
    assert result.score == pytest.approx(points.mean())
    low, high = wilson_interval(points.sum(), len(points))
    assert result.interval == pytest.approx((float(low), float(high)))


def test_draws_count_half():
    # Real draws are rare in every variant, so the scoring is fed synthetic outcomes.
    from catena_zero.arena.match import _summarise

    a_colour = np.array([BLACK, WHITE] * 4, dtype=np.int8)
    winner = np.array([BLACK, BLACK, EMPTY, EMPTY, WHITE, WHITE, BLACK, EMPTY], dtype=np.int8)
    a_points = np.where(winner == a_colour, 1.0, np.where(winner == EMPTY, 0.5, 0.0))
    margin = np.where(winner == BLACK, 3.0, np.where(winner == WHITE, -3.0, 0.0))
    history = np.full((8, 2), -1)
    result = _summarise(Rules(side=3, game_type="double"), 0, 0, "a", "b", a_colour, a_points,
                        winner, margin, np.full((4, 0), -1), np.repeat(np.arange(4), 2),
                        history, 4)
    # A: black win, white loss, draw, draw, black loss, white win, black win, white draw.
    assert (result.wins, result.draws, result.losses) == (3, 3, 2)
    assert (result.a_as_black.wins, result.a_as_black.draws, result.a_as_black.losses) == (2, 1, 1)
    assert (result.a_as_white.wins, result.a_as_white.draws, result.a_as_white.losses) == (1, 2, 1)
    assert result.score == pytest.approx(4.5 / 8)
    assert [g.result for g in result.games[:3]] == ["B+3", "B+3", "0"]


def test_pairs_share_distinct_openings():
    rules = Rules(side=4)
    result = play_match(rules, GreedyAgent(), RandomAgent(), num_games=40, seed=11,
                        opening_plies=3)
    assert result.distinct_openings == 20
    openings = [tuple(g.actions[:g.opening_plies]) for g in result.games]
    for pair in range(20):
        assert openings[2 * pair] == openings[2 * pair + 1]
        assert len(openings[2 * pair]) == 3
    assert len(set(openings[::2])) == 20
    # The two games of a pair differ after the opening (different agents play each colour).
    assert sum(result.games[2 * p].actions != result.games[2 * p + 1].actions
               for p in range(20)) >= 15


def test_duplicate_openings_are_redrawn_until_distinct():
    # Side 3, one ply: 19 possible first placements for 15 pairs; a plain draw would
    # almost surely repeat some.
    engine = Engine(Rules(side=3))
    states, history, distinct = make_openings(engine, 15, 1, 0, seed=0)
    assert distinct == 15 and len(set(history[:, 0].tolist())) == 15
    # More pairs than openings exist: duplicates remain, reported, no failure.
    _, _, distinct = make_openings(engine, 25, 1, 0, seed=0)
    assert distinct == 19


def test_opening_agent_and_reproducibility():
    rules = Rules(side=4)
    kwargs = dict(num_games=8, komi=2, opening_plies=2, opening_agent=GreedyAgent())
    first = play_match(rules, GreedyAgent(), RandomAgent(), seed=5, **kwargs)
    again = play_match(rules, GreedyAgent(), RandomAgent(), seed=5, **kwargs)
    other = play_match(rules, GreedyAgent(), RandomAgent(), seed=6, **kwargs)
    assert [g.actions for g in first.games] == [g.actions for g in again.games]
    assert [g.actions for g in first.games] != [g.actions for g in other.games]
    assert first.komi == 2 and first.rules == "side4-komi-standard"


def test_progress_reports_to_the_end():
    seen = []
    play_match(Rules(side=3), RandomAgent(), RandomAgent(), num_games=6,
               progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (6, 6)
    assert all(b >= a for (a, _), (b, _) in zip(seen, seen[1:], strict=False))


def test_combine_results_adds_up():
    rules = Rules(side=3)
    parts = [play_match(rules, GreedyAgent(), RandomAgent(), num_games=6, seed=s,
                        name_a="g", name_b="r") for s in (1, 2)]
    combined = combine_results(parts)
    assert combined.num_games == 12 and len(combined.games) == 12
    assert combined.wins == parts[0].wins + parts[1].wins
    assert [g.index for g in combined.games] == list(range(12))
    assert combined.games[6].pair == 3
    with pytest.raises(ValueError, match="cannot combine"):
        combine_results([parts[0], play_match(rules, RandomAgent(), RandomAgent(), 2)])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"num_games": 7}, "even"), ({"num_games": 0}, "even"), ({"komi": 99}, "99"),
    ({"opening_plies": -1}, "-1"),
])
def test_bad_arguments_are_refused(kwargs, message):
    arguments = {"num_games": 4, **kwargs}
    with pytest.raises(ValueError, match=message):
        play_match(Rules(side=3), RandomAgent(), RandomAgent(), **arguments)


def test_an_agent_returning_the_wrong_shape_is_named():
    class Broken:
        name = "broken"

        def select_actions(self, engine, states, rng):
            return np.zeros(len(states.to_move) + 1, dtype=np.int64)

    with pytest.raises(ValueError, match="broken"):
        play_match(Rules(side=3), Broken(), RandomAgent(), num_games=2)
