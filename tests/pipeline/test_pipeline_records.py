"""A training run keeps a few self-play games per iteration as game records."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from catena_zero.data.game_record import load_record, replay
from catena_zero.pipeline.inline import train_loop
from tests.pipeline.test_pipeline_inline import _config

torch.set_num_threads(1)


def test_a_tiny_run_leaves_records_that_replay_to_their_result(tmp_path: Path) -> None:
    config = _config(tmp_path / "run", "sample_games=3", "iterations=1")
    train_loop(config)
    paths = sorted((tmp_path / "run" / "games").iterdir())
    assert [path.name for path in paths] == [f"iter{iteration:06d}-game{game}.sgf"
                                             for iteration in (0,) for game in range(3)]
    for path in paths:
        record = load_record(path)
        assert record.rules == config.rules and record.result is not None
        game = replay(record)
        assert game.is_over and game.result_string() == record.result
        assert record.black_player.startswith("catena_zero step")
        assert record.event.startswith("self-play iteration")


def test_sample_games_zero_keeps_none(tmp_path: Path) -> None:
    train_loop(_config(tmp_path / "run", "sample_games=0", "iterations=1"))
    assert not (tmp_path / "run" / "games").exists()


def test_a_ray_worker_keeps_records_of_its_task(tmp_path: Path) -> None:
    """The Ray self-play actor's body, without Ray: its task's games land in games/."""
    pytest.importorskip("ray")
    from catena_zero.pipeline.ray.learner import LearnerCore, pending_dir
    from catena_zero.pipeline.ray.worker import SelfPlayTask, SelfPlayWorkerCore
    from tests.pipeline.test_pipeline_ray import tiny_config

    config = tiny_config(tmp_path, iterations=1)
    learner = LearnerCore(config)
    worker = SelfPlayWorkerCore(config, worker_index=0)
    weights = learner.weights()
    task = SelfPlayTask(task_id=7, attempt=0, fair_komi=0.0, weights_version=weights.version,
                        shard_path=str(pending_dir(tmp_path) / "shard-000000000007.npz"))
    worker.play(task, weights)
    learner.close()
    paths = sorted((tmp_path / "games").iterdir())
    assert [path.name for path in paths] == ["iter000007-game0.sgf", "iter000007-game1.sgf"]
    for path in paths:
        record = load_record(path)
        assert replay(record).result_string() == record.result
