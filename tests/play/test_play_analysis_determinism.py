"""The analysis engine's answers do not depend on the lines batched with a query: the
network runs on batches of one fixed shape (catena_zero.play.fixed_shape_model)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from catena_zero.export.model_file import load_model_file
from catena_zero.play import analysis_engine as engine_module
from catena_zero.play.analysis_engine import AnalysisConfig, AnalysisEngine
from catena_zero.play.bundled import ModelLibrary, bundled_general_path
from catena_zero.play.fixed_shape_model import (
    FixedShapeModel,
    fixed_shape_evaluator,
    steady_chunk,
)
from catena_zero.rules import Engine, Rules
from tests.export.tiny_model import tiny_model_file

QUERY = {"id": "same", "side": 3, "komi": 1, "moves": ["C3", "B2"], "analyzeTurns": [0, 2],
         "maxVisits": 12, "include": {"ownership": True, "policy": True}}
NEIGHBOURS = [
    {"id": "n1", "side": 3, "moves": ["A1"], "maxVisits": 5},
    {"id": "n2", "side": 3, "komi": 4, "moves": ["B3", "C2", "D4"], "analyzeTurns": [0, 1, 3]},
    {"id": "n3", "side": 3, "moves": [], "maxVisits": 20},
    {"id": "n4", "side": 2, "moves": []},
]


class FakeModel:
    """Outputs one number per row from the row alone, plus an offset that grows with the
    batch size, as a CPU kernel's rounding may; records every call's batch size."""

    def __init__(self, slot_dependent_below: int = 0) -> None:
        self.metadata = None
        self.calls: list[int] = []
        self.slot_dependent_below = slot_dependent_below

    def run(self, planes: np.ndarray, globals_: np.ndarray) -> dict[str, np.ndarray]:
        count = int(planes.shape[0])
        self.calls.append(count)
        own = planes.reshape(count, -1).sum(axis=1) + globals_.sum(axis=1)  # [B]
        slot = np.arange(count) if count < self.slot_dependent_below else np.zeros(count)
        return {"value_logits": np.stack([own, own + 1e-3 * count + 1e-4 * slot], axis=1)}


def exact(value, digits: int = 6):
    """`finite` without its rounding: any difference in the last bit shows."""
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def answers_of(engine: AnalysisEngine, queries: list[dict], query_id: str) -> list[dict]:
    return [a for a in engine.handle_lines([json.dumps(q) for q in queries])
            if a["id"] == query_id]


@pytest.fixture(scope="module")
def tiny_engine() -> AnalysisEngine:
    torch.set_num_threads(1)
    return AnalysisEngine(ModelLibrary(tiny_model_file(3)), AnalysisConfig(visits=8))


@settings(max_examples=40, deadline=None)
@given(count=st.integers(1, 70), chunk=st.integers(1, 17))
def test_every_network_call_has_the_fixed_shape(count, chunk) -> None:
    fake = FakeModel()
    rng = np.random.default_rng(count)
    planes, globals_ = rng.random((count, 2, 3, 3)), rng.random((count, 4))
    outputs = FixedShapeModel(fake, chunk).run(planes, globals_)
    assert set(fake.calls) == {chunk} and len(fake.calls) == -(-count // chunk)
    own = planes.reshape(count, -1).sum(axis=1) + globals_.sum(axis=1)
    assert np.allclose(outputs["value_logits"][:, 0], own)  # each row its own, in order
    assert np.allclose(outputs["value_logits"][:, 1], own + 1e-3 * chunk)  # one shape


@pytest.mark.parametrize(("slot_dependent_below", "chosen"), [(0, 16), (20, 32), (33, 64),
                                                              (100, 1)])
def test_the_chunk_is_the_first_where_slots_agree(slot_dependent_below, chosen) -> None:
    fake = FakeModel(slot_dependent_below)
    assert steady_chunk(fake, Engine(Rules(side=3))) == chosen
    assert fixed_shape_evaluator(fake, Engine(Rules(side=3))).model.chunk == chosen


def test_an_answer_does_not_depend_on_its_batch(tiny_engine, monkeypatch) -> None:
    monkeypatch.setattr(engine_module, "finite", exact)
    alone = answers_of(tiny_engine, [QUERY], "same")
    assert len(alone) == 2 and alone[0]["moveInfos"]
    for batch in ([*NEIGHBOURS[:2], QUERY, *NEIGHBOURS[2:]], [QUERY, *NEIGHBOURS],
                  [*NEIGHBOURS, QUERY, QUERY | {"id": "copy"}]):
        assert answers_of(tiny_engine, batch, "same") == alone
    chunked = AnalysisEngine(tiny_engine.library, AnalysisConfig(visits=8, max_positions=3))
    assert answers_of(chunked, [NEIGHBOURS[1], QUERY], "same") == alone


@pytest.mark.skipif(not bundled_general_path().is_file(), reason="no bundled general model")
def test_the_bundled_model_answers_alike_in_any_batch(monkeypatch) -> None:
    # The trained net (channels of 64) runs chunks of 16 on a usual CPU, not one row at a
    # time as the tiny test net does: this covers the filled-up chunks.
    torch.set_num_threads(1)
    monkeypatch.setattr(engine_module, "finite", exact)
    engine = AnalysisEngine(ModelLibrary(), AnalysisConfig(visits=4))
    query = QUERY | {"maxVisits": 6}
    alone = answers_of(engine, [query], "same")
    crowd = [n | {"id": f"{n['id']}-{k}", "maxVisits": 3 + k} for k in range(4)
             for n in NEIGHBOURS]
    assert answers_of(engine, [*crowd[:7], query, *crowd[7:]], "same") == alone


def positions(side: int, count: int, seed: int):
    engine = Engine(Rules(side=side))
    rng = np.random.default_rng(seed)
    states = engine.new_games(count, 0)
    for _ in range(int(rng.integers(0, 2 * side))):
        actions = engine.random_actions(states, rng)
        actions[states.terminal] = -1
        engine.step(states, actions)
    return engine, states


@pytest.fixture(scope="module")
def models() -> dict[str, object]:
    torch.set_num_threads(1)
    found = {"tiny": load_model_file(tiny_model_file(3))}
    if bundled_general_path().is_file():
        found["general"] = ModelLibrary().get(5)
    return found


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["tiny", "general"]), side=st.integers(2, 5),
       count=st.integers(1, 40), seed=st.integers(0, 10**6), data=st.data())
def test_a_row_evaluates_alike_beside_any_rows(models, name, side, count, seed, data) -> None:
    if name not in models:
        return
    engine, states = positions(side, count, seed)
    evaluate = fixed_shape_evaluator(models[name], engine)
    row = data.draw(st.integers(0, count - 1))
    together = evaluate(states)
    alone = evaluate(states.take([row]))
    for field in ("policy_logits", "value", "score", "ownership"):
        assert np.array_equal(getattr(together, field)[row], getattr(alone, field)[0])

