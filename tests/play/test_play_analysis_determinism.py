"""The analysis engine's answers do not depend on the lines batched with a query: the
network runs on batches of one fixed shape (`chunk` of catena_zero.selfplay.evaluator), in
float32 and in bfloat16 alike."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from catena_zero.export.evaluator import model_file_evaluator
from catena_zero.export.model_file import load_model_file
from catena_zero.network import NetOutput
from catena_zero.play import analysis_engine as engine_module
from catena_zero.play.analysis_engine import AnalysisConfig, AnalysisEngine
from catena_zero.play.bundled import ModelLibrary, bundled_general_path
from catena_zero.rules import Engine, Rules, observe
from catena_zero.selfplay.evaluator import STEADY, NetworkEvaluator, steady_chunk
from tests.export.tiny_model import tiny_model_file

QUERY = {"id": "same", "side": 3, "komi": 1, "moves": ["C3", "B2"], "analyzeTurns": [0, 2],
         "maxVisits": 12, "include": {"ownership": True, "policy": True}}
NEIGHBOURS = [
    {"id": "n1", "side": 3, "moves": ["A1"], "maxVisits": 5},
    {"id": "n2", "side": 3, "komi": 4, "moves": ["B3", "C2", "D4"], "analyzeTurns": [0, 1, 3]},
    {"id": "n3", "side": 3, "moves": [], "maxVisits": 20},
    {"id": "n4", "side": 2, "moves": []},
]
PRECISIONS = ("float32", "bfloat16")


class FakeModel:
    """Answers like an InferenceModel: one number per row from the row alone, plus an offset
    that grows with the batch size (and with the slot, below `slot_dependent_below` rows), as
    a CPU kernel's rounding may; records every call's batch size."""

    def __init__(self, engine: Engine, slot_dependent_below: int = 0) -> None:
        self.actions = engine.board.num_actions
        self.cells = engine.board.num_cells
        self.calls: list[int] = []
        self.slot_dependent_below = slot_dependent_below

    def __call__(self, planes: np.ndarray, globals_: np.ndarray) -> NetOutput:
        count = int(planes.shape[0])
        self.calls.append(count)
        own = planes.reshape(count, -1).sum(axis=1) + globals_.sum(axis=1)  # [B]
        slot = np.arange(count) if count < self.slot_dependent_below else np.zeros(count)
        score = (own + 1e-3 * count + 1e-4 * slot).astype(np.float32)
        return NetOutput(np.repeat(score[:, None], self.actions, axis=1),
                         np.zeros((count, 3), np.float32), score,
                         np.zeros((count, self.cells), np.float32))


def exact(value, digits: int = 6):
    """`finite` without its rounding: any difference in the last bit shows."""
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def answers_of(engine: AnalysisEngine, queries: list[dict], query_id: str) -> list[dict]:
    return [a for a in engine.handle_lines([json.dumps(q) for q in queries])
            if a["id"] == query_id]


def positions(side: int, count: int, seed: int):
    engine = Engine(Rules(side=side))
    rng = np.random.default_rng(seed)
    states = engine.new_games(count, 0)
    for _ in range(int(rng.integers(0, 2 * side))):
        actions = engine.random_actions(states, rng)
        actions[states.terminal] = -1
        engine.step(states, actions)
    return engine, states


@pytest.fixture(scope="module", params=PRECISIONS)
def tiny_engine(request) -> AnalysisEngine:
    torch.set_num_threads(1)
    return AnalysisEngine(ModelLibrary(tiny_model_file(3)),
                          AnalysisConfig(visits=8, precision=request.param))


@settings(max_examples=40, deadline=None)
@given(count=st.integers(1, 70), chunk=st.integers(1, 17))
def test_every_network_call_has_the_fixed_shape(count, chunk) -> None:
    engine, states = positions(3, count, count)
    fake = FakeModel(engine)
    evaluation = NetworkEvaluator(fake, engine, chunk=chunk)(states)
    assert set(fake.calls) == {chunk} and len(fake.calls) == -(-count // chunk)
    planes, globals_ = observe(engine, states)
    own = planes.reshape(count, -1).sum(axis=1) + globals_.sum(axis=1)
    # Each row its own, in order, computed in a call of the one shape.
    np.testing.assert_allclose(evaluation.score, own + 1e-3 * chunk, rtol=1e-6)


def test_calls_of_any_size_without_a_chunk() -> None:
    engine, states = positions(3, 5, 0)
    fake = FakeModel(engine)
    NetworkEvaluator(fake, engine)(states)
    assert fake.calls == [5]
    for bad in (0, -3, 2.5, True, "sometimes"):
        with pytest.raises(ValueError, match="chunk must be"):
            NetworkEvaluator(fake, engine, chunk=bad)


@pytest.mark.parametrize(("slot_dependent_below", "chosen"), [(0, 16), (20, 32), (33, 64),
                                                              (100, 1)])
def test_the_chunk_is_the_first_where_slots_agree(slot_dependent_below, chosen) -> None:
    engine = Engine(Rules(side=3))
    fake = FakeModel(engine, slot_dependent_below)
    assert steady_chunk(fake, engine) == chosen
    assert NetworkEvaluator(fake, engine, chunk=STEADY).chunk == chosen


def test_the_engine_runs_the_model_at_its_precision(tiny_engine) -> None:
    evaluator = tiny_engine.evaluator(Rules(side=3))
    want = None if tiny_engine.config.precision == "float32" else torch.bfloat16
    assert evaluator.model.dtype == want and evaluator.chunk >= 1
    with pytest.raises(ValueError, match="precision must be one of auto, float32, bfloat16"):
        AnalysisConfig(precision="float16")


def test_an_answer_does_not_depend_on_its_batch(tiny_engine, monkeypatch) -> None:
    monkeypatch.setattr(engine_module, "finite", exact)
    alone = answers_of(tiny_engine, [QUERY], "same")
    assert len(alone) == 2 and alone[0]["moveInfos"]
    for batch in ([*NEIGHBOURS[:2], QUERY, *NEIGHBOURS[2:]], [QUERY, *NEIGHBOURS],
                  [*NEIGHBOURS, QUERY, QUERY | {"id": "copy"}]):
        assert answers_of(tiny_engine, batch, "same") == alone
    chunked = AnalysisEngine(tiny_engine.library, AnalysisConfig(
        visits=8, max_positions=3, precision=tiny_engine.config.precision))
    assert answers_of(chunked, [NEIGHBOURS[1], QUERY], "same") == alone


@pytest.mark.skipif(not bundled_general_path().is_file(), reason="no bundled general model")
@pytest.mark.parametrize("precision", PRECISIONS)
def test_the_bundled_model_answers_alike_in_any_batch(monkeypatch, precision) -> None:
    # The trained net (channels of 64) runs chunks of 16 on a usual CPU, not one row at a
    # time as the tiny test net does: this covers the filled-up chunks, and under bfloat16
    # every call runs the bfloat16 copy of the net.
    torch.set_num_threads(1)
    monkeypatch.setattr(engine_module, "finite", exact)
    engine = AnalysisEngine(ModelLibrary(), AnalysisConfig(visits=4, precision=precision))
    query = QUERY | {"maxVisits": 6}
    alone = answers_of(engine, [query], "same")
    crowd = [n | {"id": f"{n['id']}-{k}", "maxVisits": 3 + k} for k in range(4)
             for n in NEIGHBOURS]
    assert answers_of(engine, [*crowd[:7], query, *crowd[7:]], "same") == alone
    assert engine.evaluator(Rules(side=3)).chunk >= 16  # the filled-up chunks were run


@pytest.fixture(scope="module")
def models() -> dict[str, object]:
    torch.set_num_threads(1)
    found = {"tiny": load_model_file(tiny_model_file(3))}
    if bundled_general_path().is_file():
        found["general"] = ModelLibrary().get(5)
    return found


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["tiny", "general"]), side=st.integers(2, 5),
       count=st.integers(1, 40), seed=st.integers(0, 10**6),
       precision=st.sampled_from(PRECISIONS), data=st.data())
def test_a_row_evaluates_alike_beside_any_rows(models, name, side, count, seed, precision,
                                               data) -> None:
    if name not in models:
        return
    engine, states = positions(side, count, seed)
    evaluate = model_file_evaluator(models[name], engine, precision, chunk=STEADY)
    row = data.draw(st.integers(0, count - 1))
    together = evaluate(states)
    alone = evaluate(states.take([row]))
    for field in ("policy_logits", "value", "score", "ownership"):
        assert np.array_equal(getattr(together, field)[row], getattr(alone, field)[0])
