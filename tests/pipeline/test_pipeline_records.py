"""A training run keeps a few self-play games per iteration as game records."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from catena_zero.data.game_record import load_record, replay
from catena_zero.pipeline.handover import pending_dir, sample_games_of
from catena_zero.pipeline.inline import train_loop
from catena_zero.pipeline.learner import LearnerCore
from catena_zero.pipeline.worker import SelfPlayTask, SelfPlayWorkerCore
from catena_zero.selfplay.selfplay import SelfPlayStats
from tests.pipeline.test_pipeline_inline import _config
from tests.pipeline.test_pipeline_processes import tiny_config

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


def test_ray_records_are_named_after_the_iteration_not_the_task(tmp_path: Path) -> None:
    """The worker and learner of the process and Ray runtimes, in this process: a worker
    keeps its task's games whole in its shard, and the learner writes them under the
    iteration the shard becomes, as the inline loop names them (the task id is a large number
    unique across restarts of a run), also for a shard a stopped run left in pending/ (its
    result has no games)."""
    config = tiny_config(tmp_path, iterations=2)
    learner = LearnerCore(config)
    worker = SelfPlayWorkerCore(config, worker_index=0)
    for task_id in (181373521, 181373522):
        weights = learner.weights()
        task = SelfPlayTask(task_id=task_id, attempt=0, fair_komi=0.0,
                            weights_version=weights.version,
                            shard_path=str(pending_dir(tmp_path) / f"shard-{task_id:012d}.npz"))
        before = set((tmp_path / "games").glob("*"))
        result = worker.play(task, weights)
        assert set((tmp_path / "games").glob("*")) == before  # it does not know the iteration
        if task_id == 181373522:  # as a shard found in pending/ arrives: statistics only
            result = dataclasses.replace(result, stats=SelfPlayStats(games=4))
        learner.consume(result)
    learner.close()
    paths = sorted((tmp_path / "games").iterdir())
    assert [path.name for path in paths] == [f"iter{iteration:06d}-game{game}.sgf"
                                             for iteration in (0, 1) for game in (0, 1)]
    for iteration, path in zip((0, 0, 1, 1), paths, strict=True):
        record = load_record(path)
        assert record.event == f"self-play iteration {iteration}"
        assert replay(record).result_string() == record.result


def test_games_in_a_shards_meta_are_read_only_in_their_own_form() -> None:
    assert [game.actions for game in sample_games_of({"sample_games": [[0, 3, [1, 2]]]})] == [
        (1, 2)]
    for bad in (5, "01", [[0, 3]], [[0, 3, "12"]], [[0, True, [1]]], [[0, 3, [1.5]]], [None],
                [[0, 3, [1]], {"game_id": 1}]):
        assert sample_games_of({"sample_games": bad}) == []
    assert sample_games_of({}) == []
