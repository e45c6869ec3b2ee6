"""Baseline agents: legal batched moves, and the expected strength ordering on small boards."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.arena.agents import Agent, GreedyAgent, RandomAgent, SearchAgent, UCTAgent
from catena_zero.mcts import SearchConfig, UniformEvaluator
from catena_zero.rules import BLACK, NO_ACTION, WHITE, Engine, Rules


def play_match(engine, first, second, num_games: int, seed: int) -> float:
    """Score of `first` (win 1, draw 0.5) over num_games, colours alternating."""
    rng = np.random.default_rng(seed)
    states = engine.new_games(num_games)
    first_colour = np.where(np.arange(num_games) % 2 == 0, BLACK, WHITE)
    while not states.terminal.all():
        actions = np.full(num_games, NO_ACTION, dtype=np.int64)
        for agent, is_first in ((first, True), (second, False)):
            own = (states.to_move == first_colour) == is_first
            rows = np.flatnonzero(own & ~states.terminal)
            if rows.size:
                actions[rows] = agent.select_actions(engine, states.take(rows), rng)
        engine.step(states, actions)
    winner = engine.result(states).winner
    score = np.where(winner == first_colour, 1.0, np.where(winner == 0, 0.5, 0.0))
    return float(score.mean())


@pytest.mark.parametrize("game_type", ["komi", "double"])
def test_agents_return_legal_batched_actions(game_type):
    engine = Engine(Rules(side=4, game_type=game_type))
    rng = np.random.default_rng(0)
    states = engine.new_games(6)
    for _ in range(5):
        engine.step(states, engine.random_actions(states, rng))
    finished = engine.new_games(1)
    while not finished.terminal[0]:
        engine.step(finished, engine.random_actions(finished, rng))
    states.put(np.array([2]), finished)
    agents = [
        RandomAgent(),
        GreedyAgent(),
        UCTAgent(playouts=8),
        SearchAgent(UniformEvaluator(engine.num_actions), SearchConfig(num_simulations=4)),
        SearchAgent(
            UniformEvaluator(engine.num_actions),
            SearchConfig(algorithm="puct", num_simulations=4),
            temperature=1.0,
            temperature_moves=30,
        ),  # fmt: skip
    ]
    legal = engine.legal_actions(states)
    for agent in agents:
        assert isinstance(agent, Agent) and agent.name
        actions = agent.select_actions(engine, states, rng)
        assert actions.shape == (6,)
        assert actions[2] == NO_ACTION
        live = np.flatnonzero(~states.terminal)
        assert legal[live, actions[live]].all(), agent.name


def test_greedy_takes_an_immediate_winning_end():
    from tests.mcts.mcts_positions import KOMI_WIN_ACTION, KOMI_WIN_MOVES, position

    engine, states = position("komi", KOMI_WIN_MOVES, copies=3)
    actions = GreedyAgent().select_actions(engine, states, np.random.default_rng(1))
    assert (actions == engine.board.parse_action(KOMI_WIN_ACTION)).all()


def test_greedy_beats_random():
    engine = Engine(Rules(side=4))
    score = play_match(engine, GreedyAgent(), RandomAgent(), num_games=100, seed=2)
    assert score >= 0.68


def test_uct_beats_random_on_side_3():
    engine = Engine(Rules(side=3))
    score = play_match(engine, UCTAgent(playouts=48), RandomAgent(), num_games=36, seed=3)
    assert score >= 0.75


def test_search_agent_samples_only_in_the_opening():
    engine = Engine(Rules(side=4))
    states = engine.new_games(200)
    config = SearchConfig(algorithm="puct", num_simulations=16, dirichlet_fraction=0.0)
    evaluator = UniformEvaluator(engine.num_actions)
    greedy = SearchAgent(evaluator, config)
    sampling = SearchAgent(evaluator, config, temperature=1.0, temperature_moves=1)
    rng = np.random.default_rng(4)
    assert np.unique(greedy.select_actions(engine, states, rng)).size == 1
    opening = sampling.select_actions(engine, states, rng)
    assert np.unique(opening).size > 5
    visited = sampling.last_output.visit_counts > 0
    assert visited[np.arange(200), opening].all()
    engine.step(states, opening)  # move 1: past the opening, the agent plays the argmax
    later = sampling.select_actions(engine, states, rng)
    assert np.array_equal(later, sampling.last_output.action)
