"""`evaluate` reads a model file named by `checkpoint=` (and a checkpoint by `model_file=`):
the file's header decides."""

from __future__ import annotations

import pytest

from catena_zero.evaluate import EvaluateConfig, EvaluationError, load_net
from catena_zero.play.bundled import bundled_model_path
from catena_zero.rules import Rules

SIDE4 = bundled_model_path(4)


def test_checkpoint_key_naming_a_model_file_loads_the_model_file() -> None:
    loaded = load_net(EvaluateConfig(checkpoint=str(SIDE4)))
    assert loaded.checkpoint is None and loaded.label == f"model file {SIDE4}"
    assert loaded.rules == Rules(side=4)


def test_generalisation_of_a_model_file_is_refused_in_one_line() -> None:
    with pytest.raises(EvaluationError, match="is a model file"):
        load_net(EvaluateConfig(mode="generalisation", checkpoint=str(SIDE4)))
