"""The Ray runtime end to end on a local Ray: a run finishes, survives a killed self-play actor
and a killed learner, and every shard and checkpoint it leaves reads back."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from catena_zero.mcts.config import SearchConfig  # noqa: E402
from catena_zero.network.config import NetworkConfig  # noqa: E402
from catena_zero.pipeline.config import LoopConfig, TrainLoopConfig  # noqa: E402
from catena_zero.pipeline.handover import pending_dir  # noqa: E402
from catena_zero.pipeline.ray import RayConfig  # noqa: E402
from catena_zero.pipeline.ray.runtime import start_driver  # noqa: E402
from catena_zero.rules import Rules  # noqa: E402
from catena_zero.selfplay.config import SelfPlayConfig  # noqa: E402
from catena_zero.train.checkpoint import list_checkpoints, load_checkpoint  # noqa: E402
from catena_zero.train.config import TrainConfig  # noqa: E402
from tests.pipeline.test_pipeline_learner import assert_everything_reads_back  # noqa: E402


def tiny_config(run_dir: Path, iterations: int, resume: bool = False,
                side: int = 2, games: int = 4) -> TrainLoopConfig:
    return TrainLoopConfig(
        rules=Rules(side=side),
        network=NetworkConfig(blocks=1, channels=8, global_pool_channels=4, policy_head_channels=4,
                              value_head_channels=4, value_hidden=8),
        search=SearchConfig(algorithm="gumbel", num_simulations=2, max_considered_actions=2),
        selfplay=SelfPlayConfig(games_in_batch=games, full_simulations=2, cheap_simulations=2,
                                full_search_probability=1.0),
        train=TrainConfig(batch_size=8, steps_per_iteration=2, warmup_steps=0,
                          min_window_samples=0, window_samples=1000),
        loop=LoopConfig(run_dir=str(run_dir), resume=resume, iterations=iterations,
                        games_per_iteration=games, device="cpu", progress=False, seed=3),
    )


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False,
             namespace="catena_zero_tests")
    yield
    ray.shutdown()


def _kill_when(driver, condition, target: str, killed: list) -> threading.Thread:
    """Kill the target actor (Ray restarts it) when `condition()` holds. A self-play task can
    finish in the instant before the kill lands, so workers are killed again (at most 3
    times) until the driver has seen a task fail."""

    def watch() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(killed) < 3:
            if target == "worker" and driver.worker_failures:
                return
            if condition():
                actor = driver.workers[0] if target == "worker" else driver.learner
                ray.kill(actor, no_restart=False)
                killed.append(target)
                if target == "learner":
                    return
                time.sleep(1.0)
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_run_survives_a_killed_selfplay_actor(tmp_path: Path, local_ray) -> None:
    # Side 3 and 48 games make a task last long enough to be killed while it runs. One actor:
    # with two, the other could finish the run before the killed task's failure is seen.
    config = tiny_config(tmp_path, iterations=6, side=3, games=48)
    driver = start_driver(config, RayConfig(num_selfplay_actors=1))
    killed: list[str] = []
    started = time.monotonic()

    def worker_zero_busy() -> bool:
        return time.monotonic() - started > 0.3 and any(
            index == 0 and not pending_dir(tmp_path).joinpath(
                Path(task.shard_path).name).exists()
            for index, task in list(driver.in_flight.values()))

    watcher = _kill_when(driver, worker_zero_busy, "worker", killed)
    try:
        summary = driver.run()
    finally:
        driver.shutdown()
    watcher.join(timeout=1)
    assert killed and set(killed) == {"worker"}
    assert summary["counters"]["iteration"] >= 6
    assert summary["worker_failures"] >= 1
    assert_everything_reads_back(tmp_path, 6, games=48)


@pytest.mark.slow
def test_run_survives_a_killed_learner_and_resumes(tmp_path: Path, local_ray) -> None:
    config = tiny_config(tmp_path, iterations=5)
    driver = start_driver(config, RayConfig(num_selfplay_actors=2))
    killed: list[str] = []
    watcher = _kill_when(driver, lambda: driver.state.counters.iteration >= 2, "learner", killed)
    try:
        summary = driver.run()
    finally:
        driver.shutdown()
    watcher.join(timeout=1)
    assert killed == ["learner"]
    assert summary["learner_restarts"] >= 1
    assert summary["counters"]["iteration"] >= 5
    assert_everything_reads_back(tmp_path, 5)
    # A user restart with resume=true continues from the newest checkpoint's counters.
    newest = load_checkpoint(list_checkpoints(tmp_path / "checkpoints")[-1])
    resumed = dataclasses.replace(config, loop=dataclasses.replace(
        config.loop, resume=True, iterations=newest.counters.iteration + 2))
    driver = start_driver(resumed, RayConfig(num_selfplay_actors=1))
    try:
        assert driver.state.counters.iteration == newest.counters.iteration
        summary = driver.run()
    finally:
        driver.shutdown()
    assert summary["counters"]["iteration"] == newest.counters.iteration + 2
    assert_everything_reads_back(tmp_path, newest.counters.iteration + 2)


def record_checkpoint(event) -> str:
    """A checkpoint hook that leaves a marker per checkpoint (runs in the evaluator actor)."""
    marker = Path(event.run_dir) / "evaluated" / (Path(event.path).name + ".done")
    marker.parent.mkdir(exist_ok=True)
    marker.write_text(str(event.counters.iteration))
    return f"evaluated {Path(event.path).name}"


@pytest.mark.slow
def test_checkpoint_hook_runs_in_an_evaluator_actor(tmp_path: Path, local_ray) -> None:
    config = tiny_config(tmp_path, iterations=3)
    driver = start_driver(config, RayConfig(num_selfplay_actors=1), on_checkpoint=record_checkpoint)
    try:
        summary = driver.run()
    finally:
        driver.shutdown()
    markers = sorted(p.name for p in (tmp_path / "evaluated").iterdir())
    assert Path(summary["checkpoint"]).name + ".done" in markers
    evaluations = summary["evaluations"]
    assert evaluations and all(text.startswith("evaluated ") for text in evaluations)


@pytest.mark.slow
def test_shared_inference_actor_serves_every_worker(tmp_path: Path, local_ray) -> None:
    """The leaves of both actors go to one inference actor (on a GPU where there is one)."""
    config = tiny_config(tmp_path, iterations=3)
    driver = start_driver(config, RayConfig(num_selfplay_actors=2, inference_actor=True))
    try:
        assert driver.server is not None
        summary = driver.run()
        assert ray.get(driver.server.set_weights.remote(driver.weights_ref)) == \
            driver.weights_version
    finally:
        driver.shutdown()
    assert summary["counters"]["iteration"] >= 3
    assert_everything_reads_back(tmp_path, 3)


class _GateCrash(Exception):
    """Stands in for the process dying in the middle of a gate match."""


@pytest.mark.slow
def test_the_evaluator_plays_a_gate_left_pending_then_gates_new_checkpoints(
        tmp_path: Path, local_ray, monkeypatch) -> None:
    from catena_zero.arena import gating
    from catena_zero.arena.config import GateConfig, TrainingGateConfig
    from catena_zero.arena.registry import ChampionRegistry, Track
    from catena_zero.arena.training_gate import read_gate_record
    from catena_zero.pipeline.inline import train_loop

    registry = tmp_path / "registry" / "champions.json"
    config = tiny_config(tmp_path / "run", iterations=2)
    settings = TrainingGateConfig(every_iterations=1, opening_plies=0,
                                  gate=GateConfig(num_games=2, registry=str(registry)))

    def hook():
        return gating.make_training_gate(config.rules, settings, search_config=config.search,
                                         device="cpu", log=None)

    def crash(*args, **kwargs):
        raise _GateCrash("killed")

    with monkeypatch.context() as patch:  # the gate of iteration 2 dies mid-match
        patch.setattr(gating, "play_match", crash)
        with pytest.raises(_GateCrash):
            train_loop(config, on_checkpoint=hook())
    resumed = dataclasses.replace(config, loop=dataclasses.replace(config.loop, resume=True,
                                                                   iterations=3))
    driver = start_driver(resumed, RayConfig(num_selfplay_actors=1), on_checkpoint=hook())
    try:
        summary = driver.run()
    finally:
        driver.shutdown()
    records = [read_gate_record(path)
               for path in sorted((tmp_path / "run" / "gates").glob("*.json"))]
    assert [record["iteration"] for record in records] == [1, 2, 3]
    assert records[1]["games"] == 2 and records[2]["games"] == 2
    assert len(summary["evaluations"]) == 2  # the recovered gate, then iteration 3's
    # Gate results reach the run's metrics (and TensorBoard), whichever process gated.
    from catena_zero.pipeline.metrics import read_metrics

    gates = [(record["iteration"], sorted(record["values"]))
             for record in read_metrics(tmp_path / "run") if record["kind"] == "gate"]
    assert [iteration for iteration, _ in gates] == [1, 2, 3]
    assert gates[1][1] == ["gate/side2-komi-standard/accepted", "gate/side2-komi-standard/elo",
                           "gate/side2-komi-standard/win_rate"]
    track = Track.from_rules(config.rules)
    named = {Path(entry.checkpoint).name for entry in ChampionRegistry(registry).history(track)}
    store = registry.parent / "champions" / track.key
    assert sorted(path.name for path in store.iterdir()) == sorted(named)


def _drive(config: TrainLoopConfig) -> dict:
    driver = start_driver(config, RayConfig(num_selfplay_actors=1))
    try:
        return driver.run()
    finally:
        driver.shutdown()


@pytest.mark.slow
def test_a_resumed_ray_run_says_a_damaged_metrics_line_and_names_records_by_iteration(
        tmp_path: Path, local_ray, capsys) -> None:
    """The learner actor's warnings reach the driver's terminal (an actor's stderr does not),
    and its game records carry the iteration, not the self-play task's number."""
    from catena_zero.pipeline.metrics import metrics_path, read_metrics

    _drive(tiny_config(tmp_path, iterations=1))
    metrics = metrics_path(tmp_path)
    metrics.write_bytes(b"\xff\n" + metrics.read_bytes())
    capsys.readouterr()
    _drive(tiny_config(tmp_path, iterations=2, resume=True))
    assert f"warning: {metrics}:1: not UTF-8 text" in capsys.readouterr().err
    assert [record["iteration"] for record in read_metrics(tmp_path)] == [1, 2]
    assert sorted(path.name for path in (tmp_path / "games").iterdir()) == [
        f"iter{iteration:06d}-game{game}.sgf" for iteration in (0, 1) for game in (0, 1)]
