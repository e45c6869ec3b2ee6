"""Self-play with a share of its games against opponents that are not the network
(selfplay.opponent_share, a league): only the network's moves are samples, the games'
outcomes are their real ones, and the network's score against each opponent is counted."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.arena.agents import UCTAgent
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.evaluation import UniformEvaluator
from catena_zero.rules import BLACK, EMPTY, WHITE, Engine, Rules
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.selfplay.selfplay import SelfPlay
from tests.selfplay.test_selfplay_start_positions import _same_samples


def _play(side: int = 3, games: int = 8, seed: int = 5, playouts=(4,), **overrides):
    """(SelfPlay, (samples, stats)) of `games` games with every one kept whole, against
    rollout MCTS opponents of `playouts` where they play; every network move searched in
    full, so that it is recorded, and no symmetry copies."""
    engine = Engine(Rules(side))
    config = SelfPlayConfig(**({"games_in_batch": 4, "full_simulations": 4,
                                "cheap_simulations": 2, "full_search_probability": 1.0,
                                "augment_symmetries": False,
                                "opponents": tuple(f"uct:{count}" for count in playouts)}
                               | overrides))
    selfplay = SelfPlay(engine, UniformEvaluator(engine.rules.board.num_actions),
                        SearchConfig(max_considered_actions=4), config,
                        opponents=[UCTAgent(count) for count in playouts])
    return selfplay, selfplay.play_games(games, np.random.default_rng(seed), games)


def _replay(engine: Engine, game) -> tuple[list[int], int]:
    """(the colour to move before each action, the winner) of a kept game."""
    state = engine.new_games(1, komi=game.komi)
    movers = []
    for action in game.actions:
        movers.append(int(state.to_move[0]))
        engine.step(state, np.array([action]))
    assert bool(state.terminal[0])
    return movers, int(np.asarray(engine.result(state).winner)[0])


def test_every_game_against_an_opponent_records_only_the_networks_moves():
    selfplay, (samples, stats) = _play(opponent_share=1.0, playouts=(3, 6))
    engine = selfplay.engine
    assert stats.games == stats.opponent_games == 8 and len(stats.sample_games) == 8
    network_moves, score = 0, 0.0
    for game in stats.sample_games:
        assert game.opponent in (BLACK, WHITE) and game.opponent_name in ("uct3", "uct6")
        movers, winner = _replay(engine, game)
        network = WHITE if game.opponent == BLACK else BLACK
        network_moves += sum(mover == network for mover in movers)
        score += (winner == network) + 0.5 * (winner == EMPTY)
    # full_search_probability 1: each network move is one sample, no opponent move is
    assert stats.positions == network_moves == samples.planes.shape[0]
    assert stats.moves == sum(len(game.actions) for game in stats.sample_games) > network_moves
    assert stats.opponent_score == score
    by_name = {name: [sum(game.opponent_name == name for game in stats.sample_games), 0.0]
               for name in ("uct3", "uct6")}
    assert {name: result[0] for name, result in stats.opponent_results.items()} == \
        {name: result[0] for name, result in by_name.items()}
    assert sum(result[1] for result in stats.opponent_results.values()) == score
    # both colours and both opponents are drawn
    assert {game.opponent for game in stats.sample_games} == {BLACK, WHITE}
    assert set(by_name) == {game.opponent_name for game in stats.sample_games}


def test_a_share_plays_that_share_of_the_games_against_an_opponent():
    _, (_, stats) = _play(games=40, opponent_share=0.25, playouts=(2,))
    against = [game for game in stats.sample_games if game.opponent != EMPTY]
    assert len(against) == stats.opponent_games and 3 <= len(against) <= 20
    assert all(game.opponent_name == "uct2" for game in against)
    assert all(game.opponent_name == "" for game in stats.sample_games
               if game.opponent == EMPTY)


def test_a_zero_share_or_another_side_plays_exactly_as_without_opponents():
    plain = _play()[1]
    _same_samples(plain, _play(opponent_share=0.0, playouts=(50,))[1])
    other_side = _play(opponent_share=1.0, opponent_sides=(4, 6))
    _same_samples(plain, other_side[1])
    assert other_side[1][1].opponent_games == 0 and not other_side[0].opponents
    assert _play(opponent_share=1.0, opponent_sides=(3,))[1][1].opponent_games == 8


def test_a_stronger_opponent_scores_more_against_a_uniform_network():
    """A network that searches on uniform priors and values loses more to a rollout MCTS of
    64 simulations than to one of 1 (a random mover, near enough)."""
    weak = _play(games=24, seed=1, opponent_share=1.0, playouts=(1,))[1][1]
    strong = _play(games=24, seed=1, opponent_share=1.0, playouts=(64,))[1][1]
    assert strong.opponent_score < weak.opponent_score


@pytest.mark.parametrize(("fields", "problem"), [
    ({"opponent_share": 1.5}, "opponent_share must be in [0, 1]"),
    ({"opponent_share": -0.1}, "opponent_share must be in [0, 1]"),
    ({"opponents": ()}, "opponents must be a non-empty list of agent specs"),
    ({"opponents": ("uct:200", " ")}, "opponents must be a non-empty list of agent specs"),
    ({"opponents": (200,)}, "opponents must be a non-empty list of agent specs"),
    ({"opponent_sides": (1,)}, "opponent_sides must be board sides 2..10"),
    ({"opponent_sides": (11,)}, "opponent_sides must be board sides 2..10"),
    ({"opponent_share": 0.5, "tree_reuse": True}, "does not go with tree_reuse"),
])
def test_bad_opponent_settings_are_refused(fields: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        SelfPlayConfig(**fields)


def test_settings_given_as_lists_become_tuples():
    config = SelfPlayConfig(opponent_share=0.5, opponents=["uct:200", " greedy "],
                            opponent_sides=[6])
    assert config.opponents == ("uct:200", "greedy") and config.opponent_sides == (6,)
    assert config.opponents_play(6) and not config.opponents_play(8)
    assert SelfPlayConfig(opponent_share=0.5).opponents_play(8)
    assert not SelfPlayConfig().opponents_play(6)


def test_opponents_must_be_given_where_they_play():
    engine = Engine(Rules(3))
    config = SelfPlayConfig(opponent_share=0.5)
    with pytest.raises(ValueError, match="needs the opponents' agents"):
        SelfPlay(engine, UniformEvaluator(engine.rules.board.num_actions), SearchConfig(),
                 config)
    other_side = SelfPlayConfig(opponent_share=0.5, opponent_sides=(6,))
    SelfPlay(engine, UniformEvaluator(engine.rules.board.num_actions), SearchConfig(),
             other_side)  # none play on side 3: none needed
