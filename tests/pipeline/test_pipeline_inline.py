"""The alternating loop: a tiny end-to-end run, exact resume, and a SIGKILLed run resuming."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.data import ReplayWindow, list_shards, read_shard
from catena_zero.mcts import Evaluation
from catena_zero.pipeline.inline import train_loop
from catena_zero.pipeline.messages import LoopState
from catena_zero.pipeline.steps import (
    build_fresh_network,
    learner_iteration,
    refresh_fair_komi,
    training_steps,
)
from catena_zero.rules import Engine, Rules
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.train import (
    TrainConfig,
    Trainer,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
)

REPO = Path(__file__).resolve().parents[2]
torch.set_num_threads(1)


def _config(run_dir: Path, *overrides: str):
    config = build_config(compose("train", ["preset=tiny", f"run_dir={run_dir}",
                                            "tensorboard=false", *overrides]))
    return config


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(path).model_state


def test_tiny_run_writes_shards_checkpoints_and_logs(tmp_path: Path) -> None:
    events = []
    config = _config(tmp_path / "run", "tensorboard=true")
    summary = train_loop(config, on_checkpoint=events.append)
    counters = summary["counters"]
    assert counters["iteration"] == 2 and counters["games"] == 16
    assert counters["step"] == 2 * config.train.steps_per_iteration
    assert counters["positions"] > 0
    shards = list_shards(tmp_path / "run" / "shards")
    assert len(shards) == 2
    samples, meta = read_shard(shards[-1])
    assert meta.num_games == 8 and meta.side == 3 and len(samples) > 0
    assert [event.counters.iteration for event in events] == [1, 2]
    assert events[-1].path == latest_checkpoint(tmp_path / "run" / "checkpoints")
    checkpoint = load_checkpoint(events[-1].path)
    assert checkpoint.counters.iteration == 2 and "fair_komi" in checkpoint.extra
    assert checkpoint.config["board"]["side"] == 3
    assert any((tmp_path / "run" / "tensorboard").iterdir())
    for name in ("loss/total", "selfplay/positions_per_s", "selfplay/games_per_s",
                 "selfplay/game_length", "selfplay/black_win_rate", "selfplay/fair_komi"):
        assert name in summary["last"]


@pytest.mark.parametrize("option", ["train.augment_symmetries=false",
                                    "train.augment_symmetries=true", "train.ema_decay=0.9"])
def test_resume_continues_exactly(tmp_path: Path, option: str) -> None:
    straight = train_loop(_config(tmp_path / "straight", "iterations=3", option))
    train_loop(_config(tmp_path / "split", "iterations=2", option))
    resumed = train_loop(_config(tmp_path / "split", "iterations=3", "resume=true", option))
    assert resumed["resumed_from_iteration"] == 2
    assert resumed["counters"] == straight["counters"]
    assert resumed["fair_komi"] == straight["fair_komi"]
    # Same games (RNG restored) and same weights (optimizer and step restored).
    straight_shard, _ = read_shard(list_shards(tmp_path / "straight" / "shards")[-1])
    split_shard, _ = read_shard(list_shards(tmp_path / "split" / "shards")[-1])
    assert straight_shard.equals(split_shard)
    a = _weights(Path(straight["checkpoint"]))
    b = _weights(Path(resumed["checkpoint"]))
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=1e-5, atol=1e-6)
    # With averaging on, self-play played the restored average: the shards above match only
    # because it was restored too.
    a, b = (load_checkpoint(Path(run["checkpoint"])).ema_state for run in (straight, resumed))
    assert (a is None) == (b is None) == (option != "train.ema_decay=0.9")
    for key in a or {}:
        torch.testing.assert_close(a[key], b[key], rtol=1e-5, atol=1e-6)


def test_a_run_annealing_on_its_self_play_clock_keeps_the_clock_across_a_resume(
        tmp_path: Path) -> None:
    # A horizon shorter than one iteration's self-play: the floor from the first step on,
    # also after a resume, whose trainer is handed the clock the checkpoint kept.
    options = ("train.anneal_minutes=0.000001", "train.warmup_steps=0",
               "train.learning_rate=0.01", "train.min_lr_fraction=0.1")
    first = train_loop(_config(tmp_path / "run", "iterations=2", *options))
    assert first["last"]["train/learning_rate"] == pytest.approx(0.001)
    resumed = train_loop(_config(tmp_path / "run", "iterations=3", "resume=true", *options))
    assert resumed["resumed_from_iteration"] == 2
    assert resumed["last"]["train/learning_rate"] == pytest.approx(0.001)
    plain = train_loop(_config(tmp_path / "plain", "iterations=1", *options[1:]))
    assert plain["last"]["train/learning_rate"] > 0.009  # the step horizon: barely started


def test_training_steps_follow_the_new_positions_when_asked() -> None:
    rng = np.random.default_rng(0)
    fixed = TrainConfig(batch_size=64, steps_per_iteration=7)
    assert [training_steps(fixed, positions, rng) for positions in (0, 10, 10**6)] == [7] * 3
    reused = TrainConfig(batch_size=64, samples_per_position=4.0)
    assert training_steps(reused, 320, rng) == 20  # 320 x 4 / 64, whole: no draw matters
    assert training_steps(reused, 0, rng) == 0
    draws = [training_steps(reused, 100, rng) for _ in range(4000)]  # 6.25 steps expected
    assert set(draws) == {6, 7}
    assert np.mean(draws) == pytest.approx(6.25, abs=0.03)
    again = [training_steps(reused, 100, np.random.default_rng(5)) for _ in range(3)]
    assert len(set(again)) == 1  # the train generator decides: a resumed run repeats it


def test_a_run_reusing_positions_trains_in_proportion_to_what_it_recorded(
        tmp_path: Path) -> None:
    options = ("iterations=1", "train.samples_per_position=3", "train.batch_size=16",
               "train.min_window_samples=1")
    summary = train_loop(_config(tmp_path / "run", *options))
    counters = summary["counters"]
    expected = counters["positions"] * 3 / 16
    assert counters["positions"] > 16
    assert int(expected) <= counters["step"] <= int(expected) + 1
    assert summary["last"]["train/steps"] == counters["step"]


def test_resume_without_checkpoint_starts_fresh(tmp_path: Path) -> None:
    summary = train_loop(_config(tmp_path / "run", "iterations=1", "resume=true"))
    assert summary["counters"]["iteration"] == 1


def test_run_dir_required() -> None:
    config = _config(Path("unused"))
    config = dataclasses.replace(config, loop=dataclasses.replace(config.loop, run_dir=None))
    with pytest.raises(ValueError, match="run_dir"):
        train_loop(config)


@pytest.mark.slow  # a subprocess start plus two loop runs: ~20 s on a loaded 2-core box
def test_killed_run_resumes_from_its_last_checkpoint(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "catena_zero.cli.main", "train", "preset=tiny",
               "runtime=inline", "iterations=1000", f"run_dir={run_dir}", "tensorboard=false"]
    environment = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen(command, cwd=tmp_path, env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while len(list_checkpoints(run_dir / "checkpoints")) < 2:
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "no checkpoint within 120 s"
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stderr.close()
    checkpoint = load_checkpoint(latest_checkpoint(run_dir / "checkpoints"))
    done = checkpoint.counters.iteration
    for path in list_checkpoints(run_dir / "checkpoints"):
        load_checkpoint(path)  # every checkpoint on disk reads back
    summary = train_loop(_config(run_dir, f"iterations={done + 1}", "resume=true"))
    assert summary["resumed_from_iteration"] == done
    assert summary["counters"]["iteration"] == done + 1
    assert summary["counters"]["games"] == checkpoint.counters.games + 8
    shards = list_shards(run_dir / "shards")
    assert len(shards) == done + 1  # shards written after the checkpoint were replaced
    for path in shards:
        read_shard(path)
    assert np.isfinite(summary["last"]["loss/total"])


def test_training_time_symmetries_take_each_sample_board_and_change_the_batches(
        tmp_path: Path) -> None:
    config = _config(tmp_path / "run", "iterations=1")
    train_loop(config)
    window = ReplayWindow(tmp_path / "run" / "shards", window_samples=10_000)
    augmented = dataclasses.replace(config.train, augment_symmetries=True, min_window_samples=1)
    board = Engine(config.rules).rules.board
    # Without a board, each sample is mapped by its own side's board: the same batches.
    trained = {}
    for given in (None, board):
        torch.manual_seed(0)
        trainer = Trainer(build_fresh_network(config), augmented, "cpu")
        learner_iteration(trainer, window, augmented, np.random.default_rng(0), given)
        trained[given is None] = trainer.net.state_dict()
    assert all(torch.equal(trained[True][k], trained[False][k]) for k in trained[True])
    weights = {}
    for flag in (False, True):
        torch.manual_seed(0)
        trainer = Trainer(build_fresh_network(config), dataclasses.replace(augmented,
                          augment_symmetries=flag), "cpu")
        learned = learner_iteration(trainer, window, trainer.config, np.random.default_rng(0),
                                    board)
        assert learned.metrics is not None and trainer.step == config.train.steps_per_iteration
        weights[flag] = {k: v.clone() for k, v in trainer.net.state_dict().items()}
    assert any(not torch.equal(weights[False][k], weights[True][k]) for k in weights[False])


def test_fair_komi_centre_is_smoothed_after_the_first_estimate() -> None:
    engine = Engine(Rules(side=3))
    crossing = {"komi": 8.0}

    def evaluate(states) -> Evaluation:  # Black's value is zero at crossing["komi"]
        komi = np.asarray(states.komi, dtype=np.float32)
        return Evaluation(policy_logits=np.zeros((komi.size, engine.rules.board.num_actions),
                                                 np.float32),
                          value=np.clip((crossing["komi"] - komi) / 10.0, -1, 1))

    state = LoopState()
    config = SelfPlayConfig(fair_komi_smoothing=0.75)
    assert refresh_fair_komi(state, engine, evaluate, config) == pytest.approx(8.0, abs=1e-4)
    crossing["komi"] = 12.0
    assert refresh_fair_komi(state, engine, evaluate, config) == pytest.approx(9.0, abs=1e-4)
    assert state.fair_komi == pytest.approx(9.0, abs=1e-4)
    unsmoothed = SelfPlayConfig(fair_komi_smoothing=0.0)
    assert refresh_fair_komi(state, engine, evaluate, unsmoothed) == pytest.approx(12.0, abs=1e-4)
