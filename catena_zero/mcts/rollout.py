"""Random-rollout evaluation: the evaluate_fn of plain UCT (no network)."""

from __future__ import annotations

import numpy as np

from catena_zero.mcts.evaluation import Evaluation
from catena_zero.rules import EMPTY, GameState


class RolloutEvaluator:
    """Plays every position to the end with uniformly random moves, all games of the batch
    stepped together; value = the result (win 1, draw 0, loss -1) for the side to move.
    Logits are uniform. `rollouts` > 1 averages several playouts per position."""

    def __init__(self, engine, rng: np.random.Generator, rollouts: int = 1) -> None:
        if rollouts < 1:
            raise ValueError(f"rollouts must be >= 1, got {rollouts}")
        self.engine = engine
        self.rng = rng
        self.rollouts = int(rollouts)
        self.num_actions = int(engine.rules.board.num_actions)

    def __call__(self, states: GameState) -> Evaluation:
        batch_size = int(states.to_move.shape[0])
        movers = states.to_move.copy()
        repeated = np.tile(np.arange(batch_size), self.rollouts)
        playout = states.take(repeated)
        self.play_out(playout)
        winner = self.engine.result(playout).winner
        outcome = np.where(winner == EMPTY, 0.0, np.where(winner == movers[repeated], 1.0, -1.0))
        value = outcome.reshape(self.rollouts, batch_size).mean(axis=0)
        return Evaluation(
            policy_logits=np.zeros((batch_size, self.num_actions), dtype=np.float32),
            value=value.astype(np.float32),
        )

    def play_out(self, states: GameState) -> None:
        """Step random moves until every game of `states` is over (in place)."""
        index = np.flatnonzero(~states.terminal)
        if index.size == 0:
            return
        batch = states.take(index)
        while True:
            self.engine.step(batch, self.engine.random_actions(batch, self.rng))
            done = batch.terminal
            if done.all():
                break
            # Drop finished games once they are the majority, so late steps stay cheap.
            if 2 * int(done.sum()) > done.size:
                states.put(index[done], batch.take(done))
                index, batch = index[~done], batch.take(~done)
        states.put(index, batch)


class RolloutMixEvaluator:
    """The network's evaluation with its value mixed with random playouts, as AlphaGo mixed
    its value network with fast rollouts: value = (1 - weight) * network + weight * the mean
    result of `rollouts` uniformly random playouts from the position (side to move's view).
    The policy, score and ownership stay the network's. A random playout counts every
    ribbon to the end exactly, which is where a network trained on its own games can be
    blind; it costs one playout of the batch per leaf."""

    def __init__(self, evaluate_fn, engine, rng: np.random.Generator, weight: float,
                 rollouts: int = 1) -> None:
        if not 0 < weight <= 1:
            raise ValueError(f"rollout mix weight must be in (0, 1], got {weight}")
        self.evaluate_fn = evaluate_fn
        self.weight = float(weight)
        self.rollout = RolloutEvaluator(engine, rng, rollouts)

    def __call__(self, states: GameState) -> Evaluation:
        evaluation = self.evaluate_fn(states)
        played_out = self.rollout(states).value  # [B]
        value = (1.0 - self.weight) * np.asarray(evaluation.value, dtype=np.float64) \
            + self.weight * played_out
        return Evaluation(policy_logits=evaluation.policy_logits,
                          value=value.astype(np.float32), score=evaluation.score,
                          ownership=evaluation.ownership)
