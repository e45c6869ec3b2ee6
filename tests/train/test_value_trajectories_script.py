"""scripts/value_trajectories.py: per-move root values of the agent, wins per colour."""

from __future__ import annotations

import numpy as np

from catena_zero.arena.agents import RandomAgent, SearchAgent
from catena_zero.mcts import SearchConfig, UniformEvaluator
from catena_zero.rules import BLACK, WHITE, Engine, Rules
from tests.script_loader import load_script


def test_traces_hold_one_finite_value_per_agent_move_and_match_the_results() -> None:
    script = load_script("value_trajectories")
    engine = Engine(Rules(side=2))
    agent = SearchAgent(UniformEvaluator(engine.num_actions),
                        SearchConfig(num_simulations=4, gumbel_scale=0.0))
    for colour in (BLACK, WHITE):
        won, values = script.trace_games(engine, agent, RandomAgent(), colour, 12, 2,
                                         np.random.default_rng(colour))
        assert won.shape == (12,) and len(values) == 12
        for trajectory in values:
            assert trajectory and all(-1.0 <= v <= 1.0 for v in trajectory)
        summary = script.summarise(won, values)
        assert summary["wins"] == int(won.sum()) and summary["games"] == 12
        assert len(summary["lost_last_winning_move"]) == 12 - summary["wins"]


def test_summaries_average_over_the_games_that_reached_each_move() -> None:
    script = load_script("value_trajectories")
    assert script.mean_by_move([[0.5, -0.5], [0.1]]) == [0.3, -0.5]
    assert script.last_winning_move([0.2, 0.4, -0.1, -0.9]) == 1
    assert script.last_winning_move([-0.2, -0.4]) == -1
