"""NetworkEvaluator: any board side with one net, and several engines in one padded call."""

from __future__ import annotations

import numpy as np
import torch

from catena_zero.network import NetworkConfig, PolicyValueNet
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Engine, Rules, get_board
from catena_zero.selfplay.evaluator import NetworkEvaluator

CONFIG = NetworkConfig(blocks=2, channels=8, global_pool_every=1, global_pool_channels=4,
                       policy_head_channels=4, value_head_channels=4, value_hidden=8)


def played_states(engine: Engine, games: int, moves: int, seed: int):
    rng = np.random.default_rng(seed)
    states = engine.new_games(games, komi=0)
    for _ in range(moves):
        engine.step(states, engine.random_actions(states, rng))
    return states


def test_one_net_evaluates_several_engines_alone_and_in_one_call() -> None:
    torch.manual_seed(0)
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, CONFIG)
    engines = [Engine(Rules(3, "komi")), Engine(Rules(6, "double")), Engine(Rules(4, "nokomi"))]
    requests = [(engine, played_states(engine, 3 + index, 2 * index + 1, seed=index))
                for index, engine in enumerate(engines)]
    evaluator = NetworkEvaluator(net, engines[0], "cpu", precision="float32")
    together = evaluator.evaluate_many(requests)
    assert evaluator.calls == 1 and evaluator.positions == 3 + 4 + 5
    for (engine, states), mixed in zip(requests, together, strict=True):
        alone = NetworkEvaluator(net, engine, "cpu", precision="float32")(states)
        mixed.check(states.batch_size, engine.board.num_actions)
        legal = engine.legal_actions(states)
        for name in ("value", "score", "ownership"):
            np.testing.assert_allclose(getattr(mixed, name), getattr(alone, name), atol=1e-5)
        np.testing.assert_allclose(np.where(legal, mixed.policy_logits, 0),
                                   np.where(legal, alone.policy_logits, 0), atol=1e-5)
    by_side = evaluator.evaluate_many(requests, padded=False)
    assert evaluator.calls == 1 + 3
    for first, second in zip(together, by_side, strict=True):
        np.testing.assert_allclose(first.value, second.value, atol=1e-5)
        np.testing.assert_allclose(first.ownership, second.ownership, atol=1e-5)
    same_side = evaluator.evaluate_many([requests[0], requests[0]])
    np.testing.assert_allclose(same_side[0].value, same_side[1].value, atol=1e-6)
    assert evaluator.evaluate_many([]) == []


def test_a_net_built_for_one_side_evaluates_another() -> None:
    torch.manual_seed(1)
    board = get_board(4)
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index, CONFIG)
    engine = Engine(Rules(6))
    states = played_states(engine, 2, 3, seed=2)
    evaluation = NetworkEvaluator(net, engine, "cpu")(states)
    evaluation.check(2, engine.board.num_actions)
    assert evaluation.ownership.shape == (2, engine.board.num_cells)
