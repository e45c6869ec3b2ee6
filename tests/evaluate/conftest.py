"""A tiny trained run shared by the evaluation tests (seconds to train, side 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.pipeline.inline import train_loop


def train_tiny_run(run_dir: Path, *overrides: str) -> Path:
    """A run of the tiny preset (two iterations) in `run_dir`, with `overrides`."""
    train_loop(build_config(compose("train", ["preset=tiny", f"run_dir={run_dir}",
                                              "tensorboard=false", *overrides])))
    return run_dir


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    return train_tiny_run(tmp_path_factory.mktemp("evaluate") / "run")
