"""SearchConfig.rollout_mix: leaf values mixed with random playouts (RolloutMixEvaluator)."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.mcts import RolloutEvaluator, SearchConfig, UniformEvaluator, search
from catena_zero.mcts.evaluation import Evaluation
from catena_zero.mcts.rollout import RolloutMixEvaluator
from catena_zero.rules import Engine, Rules


class ConstantEvaluator:
    """Uniform policy, the same value everywhere; counts its calls."""

    def __init__(self, num_actions: int, value: float) -> None:
        self.num_actions = num_actions
        self.value = value
        self.calls = 0

    def __call__(self, states) -> Evaluation:
        self.calls += 1
        size = int(states.to_move.shape[0])
        return Evaluation(np.zeros((size, self.num_actions), np.float32),
                          np.full(size, self.value, np.float32),
                          score=np.full(size, 2.5, np.float32))


def finished_games(engine: Engine, count: int, seed: int):
    rng = np.random.default_rng(seed)
    states = engine.new_games(count, 0)
    while not states.terminal.all():
        engine.step(states, engine.random_actions(states, rng))
    return states


def test_a_finished_position_mixes_the_network_with_its_result() -> None:
    engine = Engine(Rules(3))
    states = finished_games(engine, 6, seed=1)
    result = engine.result(states)
    movers_result = np.where(result.winner == 0, 0.0,
                             np.where(result.winner == states.to_move, 1.0, -1.0))
    network = ConstantEvaluator(engine.rules.board.num_actions, 0.2)
    mixed = RolloutMixEvaluator(network, engine, np.random.default_rng(0), weight=0.25)(states)
    assert mixed.value == pytest.approx(0.75 * 0.2 + 0.25 * movers_result)
    assert mixed.score.tolist() == [2.5] * 6  # the network's own heads stay as they were


def test_the_playout_part_is_the_rollout_evaluators_value() -> None:
    engine = Engine(Rules(4))
    states = engine.new_games(5, 3)
    network = ConstantEvaluator(engine.rules.board.num_actions, -0.4)
    mixed = RolloutMixEvaluator(network, engine, np.random.default_rng(7), weight=1.0,
                                rollouts=3)(states)
    alone = RolloutEvaluator(engine, np.random.default_rng(7), rollouts=3)(states)
    assert np.array_equal(mixed.value, alone.value)
    with pytest.raises(ValueError, match="rollout mix weight"):
        RolloutMixEvaluator(network, engine, np.random.default_rng(0), weight=0.0)


def test_search_mixes_only_when_asked_and_checks_the_fields() -> None:
    engine = Engine(Rules(4))
    states = engine.new_games(3, 0)
    base = SearchConfig(num_simulations=8, gumbel_scale=0.0)
    plain = search(engine, states.copy(), UniformEvaluator(engine.rules.board.num_actions),
                   base, np.random.default_rng(0))
    assert np.allclose(plain.root_value, 0.0)  # a value-free evaluator keeps every value 0
    mixed = search(engine, states.copy(), UniformEvaluator(engine.rules.board.num_actions),
                   SearchConfig(num_simulations=8, gumbel_scale=0.0, rollout_mix=1.0,
                                rollout_mix_playouts=4), np.random.default_rng(0))
    assert not np.allclose(mixed.root_value, 0.0)  # playouts decide games: values move
    with pytest.raises(ValueError, match="rollout_mix"):
        SearchConfig(rollout_mix=1.5)
    with pytest.raises(ValueError, match="rollout_mix_playouts"):
        SearchConfig(rollout_mix_playouts=0)
