"""A model file as the search's `evaluate_fn`, for play and for evaluations of exported models.

    evaluate_fn = model_file_evaluator(load_model_file("side6.pt"), Engine(Rules(6)))
    evaluation = evaluate_fn(states)        # catena_zero.mcts.Evaluation, batch B
    steady = model_file_evaluator(model, engine, "float32", chunk="steady")  # one call shape

    factory = AgentFactory(rules, search, model_reader=read_model_network)
    factory("model:side6.pt")               # or checkpoint:side6.pt: the header decides

Both run the file's network in `catena_zero.network.InferenceModel`, as self-play runs its
net: bfloat16 convolutions on a CPU with AMX or AVX512-BF16 under `precision="auto"`,
float32 elsewhere (`catena_zero.selfplay.evaluator.NetworkEvaluator` is the one wrapper).
"""

from __future__ import annotations

from pathlib import Path

from catena_zero.arena.specs import NetworkFile
from catena_zero.export.model_file import ModelFile, load_model_file
from catena_zero.network import InferenceModel
from catena_zero.rules import Engine
from catena_zero.selfplay.evaluator import NetworkEvaluator


def model_file_evaluator(model: ModelFile, engine: Engine, precision: str = "auto",
                         chunk: int | str | None = None,
                         device: str = "cpu") -> NetworkEvaluator:
    """The EvaluateFn of a loaded model file on `engine`'s board (any side: the network reads
    planes of every grid): its network in an InferenceModel on `device` at `precision`
    (auto | float32 | bfloat16), every call of `chunk` positions when set ("steady": the
    machine's steady chunk, for answers that do not depend on their batch)."""
    return NetworkEvaluator(model.network, engine, device, precision, chunk=chunk)


def read_model_network(path: str | Path, device: str = "auto") -> NetworkFile:
    """The network of a model file as the arena's NetworkFile (an InferenceModel on `device`
    and the tracks it was trained on): the `model_reader` of an AgentFactory. ModelFileError
    (a ValueError naming the file) when it is unusable."""
    model = load_model_file(path)
    return NetworkFile(InferenceModel(model.network, device), "model",
                       tuple(str(track) for track in model.metadata.tracks))
