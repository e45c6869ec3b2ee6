"""Hand-made positions and evaluators shared by the MCTS tests.

The positions were found by exhaustive minimax on side 3 and are replayed from their moves.
"""

from __future__ import annotations

import numpy as np

from catena_zero.mcts import Evaluation
from catena_zero.rules import BLACK, Engine, Game, GameState, Rules

# Side 3, komi 0, standard scoring: White to move has three legal moves; E3 ends the game
# with a White win, both other moves lose against best play.
KOMI_WIN_MOVES = ["C2", "B2", "E5", "D3", "C4", "C5", "B3"]
KOMI_WIN_ACTION = "E3"

# Side 3, komi 0: Black to move, five legal moves; only C1 wins (not at once: the win takes
# a few more plies), the others lose against best play.
KOMI_DEEP_WIN_MOVES = ["E5", "C3", "button", "A2", "C5", "B4", "D5", "A3", "E3", "C2"]
KOMI_DEEP_WIN_ACTION = "C1"

# Side 3, double placement: Black places two stones. B3 then C4 (or C4 then B3) ends the game
# with a Black win; every other pair loses against best play. The winning line is two plies
# by the same player, so it is found only if backups do not flip the sign between them.
DOUBLE_WIN_MOVES = ["E3", "D5", "D3", "B1", "A2", "E5", "C2"]
DOUBLE_WIN_ACTIONS = ("B3", "C4")


def position(game_type: str, moves: list[str], copies: int, side: int = 3):
    """(engine, states of `copies` identical games) after playing `moves`."""
    rules = Rules(side=side, game_type=game_type)
    game = Game(rules)
    for move in moves:
        game.play(move)
    return Engine(rules), game.state.take(np.zeros(copies, dtype=np.int64))


class ConstantEvaluator:
    """Uniform logits and the same value for every position (side to move's view)."""

    def __init__(self, num_actions: int, value: float) -> None:
        self.num_actions = num_actions
        self.value = value

    def __call__(self, states: GameState) -> Evaluation:
        batch_size = states.batch_size
        return Evaluation(
            np.zeros((batch_size, self.num_actions), dtype=np.float32),
            np.full(batch_size, self.value, dtype=np.float32),
        )


class BlackWinsEvaluator:
    """Value +1 when Black is to move and -1 when White is: Black always wins."""

    def __init__(self, num_actions: int) -> None:
        self.num_actions = num_actions

    def __call__(self, states: GameState) -> Evaluation:
        batch_size = states.batch_size
        value = np.where(states.to_move == BLACK, 1.0, -1.0).astype(np.float32)
        return Evaluation(np.zeros((batch_size, self.num_actions), dtype=np.float32), value)


class HashEvaluator:
    """Deterministic pseudo-random logits and values, a function of the position only."""

    def __init__(self, num_actions: int) -> None:
        self.num_actions = num_actions
        self.calls = 0

    def __call__(self, states: GameState) -> Evaluation:
        self.calls += 1
        cells = states.stones.shape[1]
        weights = np.random.default_rng(12345).normal(size=(3, cells))
        features = np.stack([states.stones == colour for colour in (0, 1, 2)], axis=1)
        code = (features * weights[None]).sum(axis=(1, 2)) + 0.37 * states.to_move
        phase = code[:, None] * np.arange(1, self.num_actions + 1)[None, :]
        logits = (2.0 * np.sin(phase)).astype(np.float32)
        value = np.tanh(np.sin(3.1 * code)).astype(np.float32)
        return Evaluation(logits, value)


def check_tree_invariants(tree) -> None:
    """Edge stats equal child stats (signed by the movers); visits add up at every node."""
    batch, capacity, _ = tree.children.shape
    for b in range(batch):
        count = int(tree.num_nodes[b])
        for node in range(1, count):
            parent, action = int(tree.parent[b, node]), int(tree.action_from_parent[b, node])
            assert 0 <= parent < node, (b, node, parent)
            assert tree.children[b, parent, action] == node
            assert tree.edge_visits[b, parent, action] == tree.visit_counts[b, node]
            sign = 1.0 if tree.mover[b, parent] == tree.mover[b, node] else -1.0
            assert np.isclose(
                tree.edge_value_sums[b, parent, action], sign * tree.value_sums[b, node]
            )
        for node in range(count):
            if not tree.terminal[b, node]:
                assert tree.visit_counts[b, node] == tree.edge_visits[b, node].sum() + 1
        assert (tree.children[b, count:] == -1).all()


def random_positions(side: int, game_type: str, games: int, plies: int, seed: int):
    """(engine, states, rng): `games` games of `plies` random moves from the empty board."""
    engine = Engine(Rules(side=side, game_type=game_type))
    states = engine.new_games(games)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        engine.step(states, engine.random_actions(states, rng))
    return engine, states, rng
