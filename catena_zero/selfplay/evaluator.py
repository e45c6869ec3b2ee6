"""The network -> EvaluateFn bridge used by the search in self-play, arena and play."""

from __future__ import annotations

import numpy as np

from catena_zero.mcts.evaluation import Evaluation
from catena_zero.network import InferenceModel
from catena_zero.rules import Engine, GameState, observe


class NetworkEvaluator:
    """`EvaluateFn` over a PolicyValueNet: observe the states, one batched network call.

    `evaluator(states) -> Evaluation` with policy_logits [B, A], value [B] = p(win) - p(loss)
    in [-1, 1], score [B] and ownership [B, C], all from the side to move's view.
    `calls` and `positions` count network calls and evaluated positions (for benchmarks).
    `device` and `precision` are `InferenceModel`'s (ignored when `net` is one already).
    """

    def __init__(self, net, engine: Engine, device="auto", precision: str = "auto"):
        self.engine = engine
        self.model = (net if isinstance(net, InferenceModel)
                      else InferenceModel(net, device, precision=precision))
        self.calls = 0
        self.positions = 0

    @property
    def net(self):
        return self.model.net

    def refresh(self) -> None:
        """Call after the net's weights changed elsewhere (e.g. trained on another device)."""
        self.model.refresh()

    def __call__(self, states: GameState) -> Evaluation:
        planes, globals_ = observe(self.engine, states)  # [B, P, H, W], [B, G]
        output = self.model(planes, globals_)
        self.calls += 1
        self.positions += len(planes)
        return Evaluation(
            policy_logits=np.asarray(output.policy_logits, dtype=np.float32),
            value=np.asarray(output.value, dtype=np.float32),
            score=np.asarray(output.score, dtype=np.float32),
            ownership=np.asarray(output.ownership, dtype=np.float32),
        )
