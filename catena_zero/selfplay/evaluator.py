"""The network -> EvaluateFn bridge used by the search in self-play, arena and play.

One net evaluates every board side: `NetworkEvaluator(net, engine)` works for any engine's
rules, and `evaluate_many` evaluates the states of several engines (sides and variants) in one
padded network call, for self-play that mixes boards.

Example::

    evaluator = NetworkEvaluator(net, Engine(Rules(6)))
    evaluation = evaluator(states)                       # [B, A_6] policy, [B] value, ...
    side4, side8 = evaluator.evaluate_many([(engine4, states4), (engine8, states8)])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from catena_zero.mcts.evaluation import Evaluation
from catena_zero.network import InferenceModel, NetOutput, pad_planes
from catena_zero.rules import Engine, GameState, observe


class NetworkEvaluator:
    """`EvaluateFn` over a PolicyValueNet: observe the states, one batched network call.

    `evaluator(states) -> Evaluation` with policy_logits [B, A], value [B] = p(win) - p(loss)
    in [-1, 1], score [B] and ownership [B, C], all from the side to move's view.
    `calls` and `positions` count network calls and evaluated positions (for benchmarks).
    `net` is a PolicyValueNet, or a model that answers like an `InferenceModel` (one already,
    shared between evaluators of several boards, or a stand-in that sends the planes to a
    remote one); `device` and `precision` are `InferenceModel`'s, for a net.
    """

    def __init__(self, net, engine: Engine, device="auto", precision: str = "auto"):
        self.engine = engine
        self.model = (InferenceModel(net, device, precision=precision)
                      if isinstance(net, torch.nn.Module) else net)
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
        return _evaluation(output)

    def evaluate_many(self, requests: Sequence[tuple[Engine, GameState]],
                      padded: bool = True) -> list[Evaluation]:
        """One Evaluation per (engine, states) request, in order, each in its own board's
        layout (as from `NetworkEvaluator(net, engine)`).

        `padded`: one network call, the observations of all requests padded to the largest
        board's grid (one call is what a GPU wants); otherwise one call per board side, which
        on a CPU costs less than the padding cells (benchmarks/bench_padding.py: a 4/6/8 mix at
        batch 256 padded into 15 x 15 took 2.1x the time of three one-side calls).
        """
        if not requests:
            return []
        observations = [observe(engine, states) for engine, states in requests]
        sides = [engine.board.side for engine, _ in requests]
        counts = [len(planes) for planes, _ in observations]
        groups = [sorted(set(sides))] if padded else [[side] for side in sorted(set(sides))]
        evaluations: list[Evaluation | None] = [None] * len(requests)
        for group in groups:
            members = [index for index, side in enumerate(sides) if side in group]
            grid = 2 * max(group) - 1
            planes = np.concatenate([pad_planes(observations[i][0], grid) for i in members])
            globals_ = np.concatenate([observations[i][1] for i in members])
            one_side = len(group) == 1
            row_sides = np.repeat([sides[i] for i in members], [counts[i] for i in members])
            output = (self.model(planes, globals_) if one_side
                      else self.model(planes, globals_, sides=row_sides))
            self.calls += 1
            self.positions += len(planes)
            start = 0
            for index in members:
                rows = np.arange(start, start + counts[index])
                start += counts[index]
                heads = (output.policy_logits, output.value_logits, output.score,
                         output.ownership)
                part = (NetOutput(*(head[rows] for head in heads)) if one_side
                        else output.rows_on_side(rows, sides[index]))
                evaluations[index] = _evaluation(part)
        return evaluations


def _evaluation(output: NetOutput) -> Evaluation:
    return Evaluation(
        policy_logits=np.asarray(output.policy_logits, dtype=np.float32),
        value=np.asarray(output.value, dtype=np.float32),
        score=np.asarray(output.score, dtype=np.float32),
        ownership=np.asarray(output.ownership, dtype=np.float32),
    )
