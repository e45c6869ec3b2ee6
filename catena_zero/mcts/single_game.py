"""One-game-at-a-time PUCT in plain Python objects: the baseline the batched search is measured
against (self-play benchmark, baseline (c)) and a reference it must agree with in tests.

It stays in the package, beside the batched search, because it is that search's reference
(tests/mcts/test_mcts_reuse.py checks equal visit counts) as much as a benchmark baseline;
`benchmarks/bench_selfplay.py` imports it from here.

It uses the PUCT settings of a SearchConfig whatever its `algorithm`, calls evaluate_fn with a
batch of one position per simulation, and follows the same rules as the batched PUCT: exact
results at terminal nodes, values from the mover's view, signs flipped only where the mover
changes, argmax of visits (ties broken by Q) as the move.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catena_zero.mcts import puct
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.evaluation import EvaluateFn
from catena_zero.mcts.policy import masked_softmax
from catena_zero.rules import EMPTY, NO_ACTION, GameState


@dataclass
class SingleGameOutput:
    action: int  # chosen move, NO_ACTION if the game is over
    visit_counts: np.ndarray  # [A] int32 root visits per action
    root_value: float  # mean backed-up value at the root, mover's view


class _Node:
    __slots__ = ("state", "mover", "terminal", "raw_value", "prior", "legal", "children",
                 "visits", "value_sum", "edge_visits", "edge_value_sums")  # fmt: skip

    def __init__(self, state: GameState, mover: int, terminal: bool, num_actions: int) -> None:
        self.state = state
        self.mover = mover
        self.terminal = terminal
        self.raw_value = 0.0
        self.prior = np.zeros(num_actions, dtype=np.float32)
        self.legal = np.zeros(num_actions, dtype=bool)
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.value_sum = 0.0
        self.edge_visits = np.zeros(num_actions, dtype=np.int64)
        self.edge_value_sums = np.zeros(num_actions, dtype=np.float64)


def single_game_search(
    engine,
    state: GameState,
    evaluate_fn: EvaluateFn,
    config: SearchConfig,
    rng: np.random.Generator,
) -> SingleGameOutput:
    """PUCT search of one position (`state`: a batch of one)."""
    if int(state.to_move.shape[0]) != 1:
        raise ValueError(f"single_game_search needs a batch of one, got {state.to_move.shape[0]}")
    num_actions = int(engine.rules.board.num_actions)
    if bool(state.terminal[0]):
        return SingleGameOutput(NO_ACTION, np.zeros(num_actions, dtype=np.int32), 0.0)

    def make_node(node_state: GameState, parent_mover: int) -> tuple[_Node, float]:
        terminal = bool(node_state.terminal[0])
        mover = parent_mover if terminal else int(node_state.to_move[0])
        node = _Node(node_state, mover, terminal, num_actions)
        if terminal:
            winner = int(engine.result(node_state).winner[0])
            value = 0.0 if winner == EMPTY else (1.0 if winner == mover else -1.0)
        else:
            node.legal = engine.legal_actions(node_state)[0]
            evaluation = evaluate_fn(node_state)
            evaluation.check(1, num_actions)
            logits = np.asarray(evaluation.policy_logits, dtype=np.float32)
            node.prior = masked_softmax(logits, node.legal[None])[0]
            value = float(np.clip(np.float32(evaluation.value[0]), -1.0, 1.0))
        node.raw_value = value
        return node, value

    root, value = make_node(state.copy(), int(state.to_move[0]))
    root.visits, root.value_sum = 1, value
    root_prior = puct.noisy_root_prior(root.prior[None], root.legal[None], config, rng)[0]

    for _ in range(config.num_simulations):
        node, path = root, []
        while True:
            prior = root_prior if node is root else node.prior
            scores = puct.puct_scores(
                node.edge_visits[None], node.edge_value_sums[None], prior[None], node.legal[None],
                np.array([node.visits]), np.array([node.value_sum]), config,
            )[0]  # fmt: skip
            action = int(np.argmax(scores))
            path.append((node, action))
            child = node.children.get(action)
            if child is None:
                child_state = node.state.copy()
                engine.step(child_state, np.array([action]))
                child, value = make_node(child_state, node.mover)
                node.children[action] = child
                break
            if child.terminal:
                value = child.raw_value
                break
            node = child
        for visited, action in path:
            signed = value if visited.mover == child.mover else -value
            visited.edge_visits[action] += 1
            visited.edge_value_sums[action] += signed
            visited.visits += 1
            visited.value_sum += signed
        child.visits += 1
        child.value_sum += value

    q_values = puct.mean_values(root.edge_visits[None], root.edge_value_sums[None])
    action = int(puct.most_visited(root.edge_visits[None], q_values, root.legal[None])[0])
    return SingleGameOutput(action, root.edge_visits.astype(np.int32), root.value_sum / root.visits)
