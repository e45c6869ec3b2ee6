"""An exported model file is evaluated like a checkpoint, through the same evaluator values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from catena_zero.cli.main import main
from catena_zero.evaluate import EvaluateConfig, load_net
from catena_zero.rules import Engine, Rules
from catena_zero.selfplay.evaluator import NetworkEvaluator
from tests.export.tiny_model import tiny_model_file, tiny_network

# Exporting the tiny model (torch.export) takes 10-20 s on a shared machine.
pytestmark = pytest.mark.slow


def test_a_model_file_evaluates_as_its_network() -> None:
    loaded = load_net(EvaluateConfig(model_file=str(tiny_model_file(3))))
    assert loaded.rules == Rules(side=3) and loaded.checkpoint is None
    engine = Engine(Rules(side=3))
    rng = np.random.default_rng(0)
    states = engine.new_games(6, komi=np.arange(6))
    for _ in range(3):
        engine.step(states, engine.random_actions(states, rng))
    got = loaded.evaluator(states)
    want = NetworkEvaluator(tiny_network(3), engine, "cpu", "float32")(states)
    for name in ("policy_logits", "value", "score", "ownership"):
        assert getattr(got, name) == pytest.approx(getattr(want, name), abs=1e-4), name


def test_evaluate_learning_plays_a_model_file(tmp_path: Path, capsys) -> None:
    path = tiny_model_file(3)
    out = tmp_path / "evaluation.json"
    assert main(["evaluate", "learning", f"model_file={path}", "games=2", "opponents=[random]",
                 "komi_from=network", "simulations=4", f"json={out}"]) == 0
    report = json.loads(out.read_text())
    assert report["checkpoint"] == str(path) and report["counters"] is None
    assert report["rules"] == {"side": 3, "game_type": "komi", "scoring": "standard"}
    assert [match["games"] for match in report["matches"]] == [2]
    assert capsys.readouterr().out.startswith(f"model file {path} (training steps 0)")
    assert main(["evaluate", "learning", f"model_file={path}", "precision=bfloat16"]) == 2
    assert "float32" in capsys.readouterr().err
