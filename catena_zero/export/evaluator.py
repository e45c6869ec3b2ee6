"""A model file as the search's `evaluate_fn`, for play and for evaluations of exported models.

    evaluate_fn = ModelFileEvaluator(load_model_file("side6.pt"), Engine(Rules(6)))
    evaluation = evaluate_fn(states)        # catena_zero.mcts.Evaluation, batch B

    factory = AgentFactory(rules, search, model_reader=read_model_network)
    factory("model:side6.pt")               # or checkpoint:side6.pt: the header decides
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from catena_zero.arena.specs import NetworkFile
from catena_zero.export.model_file import ModelFile, load_model_file
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


def read_model_network(path: str | Path, device: str = "auto") -> NetworkFile:
    """The network of a model file as the arena's NetworkFile (an InferenceModel on `device`
    and the tracks it was trained on): the `model_reader` of an AgentFactory. ModelFileError
    (a ValueError naming the file) when it is unusable."""
    from catena_zero.network import InferenceModel

    model = load_model_file(path)
    return NetworkFile(InferenceModel(model.network, device), "model",
                       tuple(str(track) for track in model.metadata.tracks))
