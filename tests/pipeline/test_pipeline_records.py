"""A training run keeps a few self-play games per iteration as game records."""

from __future__ import annotations

from pathlib import Path

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
