"""`runtime=processes`: self-play in worker processes, training in this one (no Ray). A run
reaches its bound, every shard and checkpoint reads back, a resumed run trains first on the
shards its predecessor's workers left in pending/, the checkpoint hook sees every
checkpoint, and a device this machine lacks is refused before any process starts."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from catena_zero.data import list_shards, read_shard, read_shard_meta
from catena_zero.mcts.config import SearchConfig
from catena_zero.network.config import NetworkConfig
from catena_zero.pipeline.config import LoopConfig, ProbeConfig, RuntimeConfig, TrainLoopConfig
from catena_zero.pipeline.handover import pending_dir
from catena_zero.pipeline.learner import LearnerCore
from catena_zero.pipeline.processes import train_processes, worker_count
from catena_zero.pipeline.run import run_training
from catena_zero.pipeline.tracks import MixConfig
from catena_zero.rules import Rules
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.train.checkpoint import latest_checkpoint, list_checkpoints, load_checkpoint
from catena_zero.train.config import TrainConfig

TWO_PROCESSES = RuntimeConfig(name="processes", num_selfplay_actors=2)


def tiny_config(run_dir: Path, iterations: int, resume: bool = False,
                mix: MixConfig | None = None) -> TrainLoopConfig:
    return TrainLoopConfig(
        rules=Rules(side=2),
        network=NetworkConfig(blocks=1, channels=8, global_pool_channels=4,
                              policy_head_channels=4, value_head_channels=4, value_hidden=8),
        search=SearchConfig(algorithm="gumbel", num_simulations=2, max_considered_actions=2),
        selfplay=SelfPlayConfig(games_in_batch=4, full_simulations=2, cheap_simulations=2,
                                full_search_probability=1.0),
        train=TrainConfig(batch_size=8, steps_per_iteration=2, warmup_steps=0,
                          min_window_samples=0, window_samples=1000),
        loop=LoopConfig(run_dir=str(run_dir), resume=resume, iterations=iterations,
                        games_per_iteration=4, device="cpu", progress=False, seed=3,
                        tensorboard=False),
        mix=mix or MixConfig(),
    )


def test_a_run_reaches_its_bound_and_everything_reads_back(tmp_path: Path) -> None:
    events = []
    summary = train_processes(tiny_config(tmp_path, iterations=5), TWO_PROCESSES,
                              on_checkpoint=events.append)
    assert summary["runtime"] == "processes" and summary["selfplay_processes"] == 2
    assert summary["selfplay_device"] == "cpu"
    counters = summary["counters"]
    assert counters["iteration"] == 5 and counters["games"] == 20
    assert counters["step"] == 10  # two steps a shard
    shards = list_shards(tmp_path / "shards")
    assert [path.name for path in shards] == [f"shard-{i:09d}.npz" for i in range(5)]
    for path in shards:
        samples, meta = read_shard(path)
        assert meta.num_games == 4 and len(samples) > 0
    for path in list_checkpoints(tmp_path / "checkpoints"):
        load_checkpoint(path)
    newest = load_checkpoint(latest_checkpoint(tmp_path / "checkpoints"))
    assert newest.counters.iteration == 5 and newest.counters.step == 10
    # the hook ran in this process for every checkpoint, in order
    assert [event.counters.iteration for event in events] == [1, 2, 3, 4, 5]
    assert Path(summary["checkpoint"]) == events[-1].path
    # tasks still running at the bound finish whole: complete shards, no partial writes
    assert not list(pending_dir(tmp_path).glob("*.tmp*"))
    for path in list_shards(pending_dir(tmp_path)):
        assert read_shard_meta(path).num_games == 4


def test_a_resumed_run_trains_first_on_the_shards_left_pending(tmp_path: Path) -> None:
    first = train_processes(tiny_config(tmp_path, iterations=3), TWO_PROCESSES)
    assert first["counters"]["iteration"] == 3
    left = {path.name for path in list_shards(pending_dir(tmp_path))}
    assert left  # two workers, three shards trained: the others' games wait in pending/
    summary = run_training(tiny_config(tmp_path, iterations=3 + len(left) + 1, resume=True),
                           TWO_PROCESSES)
    assert summary["counters"]["iteration"] == 3 + len(left) + 1
    assert not left & {path.name for path in list_shards(pending_dir(tmp_path))}
    adopted = list_shards(tmp_path / "shards")
    assert len(adopted) == summary["counters"]["iteration"]
    assert summary["counters"]["games"] == 4 * len(adopted)


def test_a_mixed_run_plans_past_the_tasks_in_flight(tmp_path: Path) -> None:
    """Two workers, two tracks of equal share: the mix hands the second worker the other
    track rather than the same one twice (the tasks in flight count ahead on its clock)."""
    mix = MixConfig(tracks=["2/komi/standard", "3/komi/standard"], shares=[1.0, 1.0])
    summary = train_processes(tiny_config(tmp_path, iterations=2, mix=mix), TWO_PROCESSES)
    assert summary["counters"]["iteration"] == 2
    # The first two tasks handed out (lowest task ids), trained on or left in pending/.
    metas = [read_shard_meta(path) for path in
             list_shards(tmp_path / "shards") + list_shards(pending_dir(tmp_path))]
    first_two = sorted(metas, key=lambda meta: meta.extra["iteration"])[:2]
    assert {meta.track.rules().board.side for meta in first_two} == {2, 3}


def test_a_time_bound_shorter_than_a_shard_still_trains_on_one_and_probes(
        tmp_path: Path) -> None:
    """However short the bound, the run trains on one shard and ends with its own checkpoint
    and probe, as the inline loop plays one iteration."""
    config = tiny_config(tmp_path, iterations=1000)
    config = dataclasses.replace(config, loop=dataclasses.replace(
        config.loop, iterations=0, max_minutes=1e-6, seed=0,
        probe=ProbeConfig(every=100, games=2)))
    summary = train_processes(config, TWO_PROCESSES)
    assert summary["counters"]["iteration"] >= 1
    assert Path(summary["checkpoint"]).exists()
    probes = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()
              if json.loads(line)["kind"] == "probe"]
    assert len(probes) == 1 and probes[0]["iteration"] == summary["counters"]["iteration"]


def test_a_probe_before_any_shard_draws_a_valid_seed(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, iterations=1)
    config = dataclasses.replace(config, loop=dataclasses.replace(
        config.loop, seed=0, probe=ProbeConfig(every=1, games=2)))
    learner = LearnerCore(config)
    assert learner.probe()  # iteration 0, seed 0: the probe's seed is never negative
    learner.close()


def test_a_device_this_machine_lacks_is_refused_before_anything_starts(tmp_path: Path,
                                                                        monkeypatch) -> None:
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    runtime = dataclasses.replace(TWO_PROCESSES, selfplay_device="cuda")
    with pytest.raises(ValueError, match="CUDA is not available"):
        train_processes(tiny_config(tmp_path / "run", iterations=1), runtime)
    assert not (tmp_path / "run").exists()


def test_the_worker_count_is_the_setting_or_one_per_cpu(monkeypatch) -> None:
    assert worker_count(TWO_PROCESSES) == 2
    monkeypatch.setattr("os.cpu_count", lambda: 6)
    assert worker_count(RuntimeConfig(name="processes")) == 6


@pytest.mark.parametrize("device", ["gpu", "", "cuda0"])
def test_an_unknown_selfplay_device_is_a_config_error(device: str) -> None:
    with pytest.raises(ValueError, match="selfplay_device"):
        RuntimeConfig(name="processes", selfplay_device=device)
