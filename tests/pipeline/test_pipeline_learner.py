"""The self-play worker and the learner of the process and Ray runtimes, in this process: a
worker's shard is adopted and trained on, the fair komi moves as in the inline loop, a learner
resumes past a damaged checkpoint, and it probes and logs as the inline loop does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from catena_zero.data import list_shards, read_shard
from catena_zero.komi.fair import estimate_fair_komi
from catena_zero.pipeline.config import ProbeConfig
from catena_zero.pipeline.handover import pending_dir
from catena_zero.pipeline.learner import LearnerCore
from catena_zero.pipeline.metrics import read_metrics
from catena_zero.pipeline.worker import SelfPlayTask, SelfPlayWorkerCore
from catena_zero.train.checkpoint import list_checkpoints, load_checkpoint
from tests.pipeline.test_pipeline_processes import tiny_config


def assert_everything_reads_back(run_dir: Path, iterations: int, games: int = 4) -> None:
    shards = list_shards(run_dir / "shards")
    assert len(shards) >= iterations
    for path in shards:
        samples, meta = read_shard(path)
        assert meta.num_games == games and len(samples) > 0
    checkpoints = list_checkpoints(run_dir / "checkpoints")
    assert checkpoints
    for path in checkpoints:
        load_checkpoint(path)
    assert not list(pending_dir(run_dir).glob("*.tmp-*"))


def test_worker_and_learner_cores_in_process(tmp_path: Path) -> None:
    """A worker's shard is adopted and trained on."""
    config = tiny_config(tmp_path, iterations=1)
    learner = LearnerCore(config)
    worker = SelfPlayWorkerCore(config, worker_index=0)
    weights = learner.weights()
    task = SelfPlayTask(task_id=5, attempt=0, fair_komi=0.0, weights_version=weights.version,
                        shard_path=str(pending_dir(tmp_path) / "shard-000000000005.npz"))
    result = worker.play(task, weights)
    assert worker.weights_version == weights.version
    status = learner.consume(result)
    assert status.counters.iteration == 1 and status.counters.games == 4
    assert status.weights_version == 2 and status.checkpoint is not None
    assert not list(pending_dir(tmp_path).iterdir())
    learner.close()
    assert_everything_reads_back(tmp_path, 1)


def test_learner_core_smooths_the_fair_komi_like_the_inline_loop(tmp_path: Path) -> None:
    """The learner moves its fair-komi centre by selfplay.fair_komi_smoothing too."""
    config = tiny_config(tmp_path, iterations=1)
    config = dataclasses.replace(config, selfplay=dataclasses.replace(
        config.selfplay, fair_komi_smoothing=0.75))
    learner = LearnerCore(config)
    engine, evaluator, _ = learner.players.of(learner.mix.tracks[0])  # the run's one track
    first = learner.state.fair_komi
    assert first == estimate_fair_komi(engine, evaluator)
    worker = SelfPlayWorkerCore(config, worker_index=0)
    weights = learner.weights()
    task = SelfPlayTask(task_id=0, attempt=0, fair_komi=first, weights_version=weights.version,
                        shard_path=str(pending_dir(tmp_path) / "shard-000000000000.npz"))
    status = learner.consume(worker.play(task, weights))
    estimate = estimate_fair_komi(engine, evaluator)  # of the trained net
    assert status.fair_komi == pytest.approx(0.75 * first + 0.25 * estimate, abs=1e-6)
    checkpoint = load_checkpoint(status.checkpoint)
    assert checkpoint.extra["fair_komi"] == pytest.approx(status.fair_komi)
    learner.close()


def _play_and_consume(learner: LearnerCore, worker: SelfPlayWorkerCore, task_id: int):
    weights = learner.weights()
    task = SelfPlayTask(task_id=task_id, attempt=0, fair_komi=0.0,
                        weights_version=weights.version,
                        shard_path=str(pending_dir(learner.run_dir) / f"shard-{task_id:012d}.npz"))
    return learner.consume(worker.play(task, weights))


def test_learner_core_resumes_past_a_damaged_newest_checkpoint(tmp_path: Path) -> None:
    """The newest checkpoint is truncated: the learner resumes from the one before, requeues
    the shard trained on after it, and says which file it skipped."""
    learner = LearnerCore(tiny_config(tmp_path, iterations=2))
    worker = SelfPlayWorkerCore(tiny_config(tmp_path, iterations=2), worker_index=0)
    for task_id in range(2):
        _play_and_consume(learner, worker, task_id)
    learner.close()
    first, newest = list_checkpoints(tmp_path / "checkpoints")
    newest.write_bytes(newest.read_bytes()[:500])
    resumed = LearnerCore(tiny_config(tmp_path, iterations=2, resume=True))
    assert resumed.state.counters.iteration == 1 and resumed.last_checkpoint == first
    assert [path.name for path in resumed.requeued] == ["requeued-shard-000000001.npz"]
    (warning,) = resumed.warnings()
    assert f"skipping checkpoint {newest}: truncated" in warning and str(first) in warning
    resumed.close()


def test_the_learner_probes_logs_metrics_and_draws_the_report(tmp_path: Path) -> None:
    """The learner records what the inline loop does: probe and iteration records in
    metrics.jsonl, and report.png when it closes."""
    config = tiny_config(tmp_path, iterations=1)
    config = dataclasses.replace(config, loop=dataclasses.replace(
        config.loop, tensorboard=False, report_every=1,
        probe=ProbeConfig(every=1, games=2, baselines=("random",), simulations=2)))
    learner = LearnerCore(config)
    worker = SelfPlayWorkerCore(config, worker_index=0)
    weights = learner.weights()
    task = SelfPlayTask(task_id=6, attempt=0, fair_komi=0.0, weights_version=weights.version,
                        shard_path=str(pending_dir(tmp_path) / "shard-000000000006.npz"))
    learner.consume(worker.play(task, weights))
    assert learner.probe() == {}  # probed after this iteration already
    learner.close()
    records = read_metrics(tmp_path)
    assert [(record["kind"], record["iteration"]) for record in records] == [
        ("probe", 1), ("iteration", 1)]
    assert 0.0 <= records[0]["values"]["probe/side2-komi-standard/random/win_rate"] <= 1.0
    assert (tmp_path / "report.png").stat().st_size > 0
