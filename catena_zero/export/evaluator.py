"""A model file as the search's `evaluate_fn`, for play and for evaluations of exported models.

    evaluate_fn = ModelFileEvaluator(load_model_file("side6.pt"), Engine(Rules(6)))
    evaluation = evaluate_fn(states)        # catena_zero.mcts.Evaluation, batch B
"""

from __future__ import annotations

import numpy as np

from catena_zero.export.model_file import ModelFile
from catena_zero.mcts.evaluation import Evaluation
from catena_zero.network.output import wdl_to_value
from catena_zero.rules import Engine, GameState, observe


class ModelFileEvaluator:
    """EvaluateFn over a model file: observe, run its network, value = p(win) - p(loss).

    The engine's side may be any: the model's network reads planes of every grid."""

    def __init__(self, model: ModelFile, engine: Engine) -> None:
        self.model = model
        self.engine = engine

    def __call__(self, states: GameState) -> Evaluation:
        planes, globals_ = observe(self.engine, states)  # [B, P, H, W], [B, G]
        out = self.model.run(planes, globals_)
        return Evaluation(
            policy_logits=out["policy_logits"].astype(np.float32),  # [B, A]
            value=np.asarray(wdl_to_value(out["value_logits"]), dtype=np.float32),  # [B]
            score=out["score"].astype(np.float32),  # [B]
            ownership=out["ownership"].astype(np.float32),  # [B, C]
        )
