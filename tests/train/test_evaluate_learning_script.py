"""scripts/evaluate_learning.py: search overrides are typed, checked and named on error; the
script evaluates a run at either inference precision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.mcts import SearchConfig
from catena_zero.train.loop import train_loop
from tests.script_loader import load_script


def test_search_overrides_take_the_field_types() -> None:
    script = load_script("evaluate_learning")
    base = SearchConfig()
    values = script.parse_overrides(
        ["algorithm=puct", "max_considered_actions=8", "c_scale=0.5", "tree_reuse=true"], base)
    assert values == {"algorithm": "puct", "max_considered_actions": 8, "c_scale": 0.5,
                      "tree_reuse": True}


@pytest.mark.parametrize("item, message", [
    ("bogus=1", "bogus=1"),
    ("max_considered_actions", "KEY=VALUE"),
    ("tree_reuse=maybe", "tree_reuse"),
    ("num_simulations=many", "many"),
])
def test_bad_search_overrides_are_named(item: str, message: str) -> None:
    script = load_script("evaluate_learning")
    with pytest.raises(ValueError, match=message):
        script.parse_overrides([item], SearchConfig())


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_evaluates_a_tiny_run_at_either_precision(tmp_path: Path, precision: str) -> None:
    run_dir = tmp_path / "run"
    train_loop(build_config(compose("train", ["preset=tiny", f"run_dir={run_dir}",
                                              "tensorboard=false"])))
    out = tmp_path / "evaluation.json"
    assert load_script("evaluate_learning").main([
        "--run-dir", str(run_dir), "--games", "2", "--opponents", "random",
        "--precision", precision, "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["precision"] == precision
    assert [match["games"] for match in report["matches"]] == [2]
