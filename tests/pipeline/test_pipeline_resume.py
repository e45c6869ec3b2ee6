"""Where a resumed run starts (`pipeline.resume`): the newest good checkpoint, with the shards,
replay window and metrics put back at its iteration. A newest checkpoint name held by something
that is not a regular file (a directory, a FIFO) is passed over with a warning naming it and
left as it is; the iteration done again is saved beside it, so no iteration is lost and the
next resume starts from that one."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
import torch

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.data import list_shards, read_shard
from catena_zero.pipeline.handover import pending_dir
from catena_zero.pipeline.inline import train_loop
from catena_zero.pipeline.metrics import read_metrics
from catena_zero.pipeline.resume import find_resume_checkpoint, resume_run
from catena_zero.pipeline.tracks import TrackMix
from catena_zero.train import list_checkpoints, load_checkpoint

torch.set_num_threads(1)


def _config(run_dir: Path, *overrides: str):
    return build_config(compose("train", ["preset=tiny", f"run_dir={run_dir}",
                                          "tensorboard=false", "gating.enabled=false",
                                          *overrides]))


def _train_without_blocking(config, seconds: float = 300.0) -> dict:
    """train_loop(config); fails the test instead of hanging on a FIFO."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = train_loop(config)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "resuming blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.mark.parametrize("kind", ["a directory", "a FIFO"])
def test_a_special_file_as_the_newest_checkpoint_loses_no_iteration(tmp_path, capsys,
                                                                     kind) -> None:
    run_dir = tmp_path / "run"
    train_loop(_config(run_dir, "iterations=2"))
    first, newest = list_checkpoints(run_dir / "checkpoints")
    newest.unlink()
    newest.mkdir() if kind == "a directory" else os.mkfifo(newest)
    capsys.readouterr()

    summary = _train_without_blocking(_config(run_dir, "iterations=2", "resume=true"))
    assert summary["resumed_from_iteration"] == 1 and summary["counters"]["iteration"] == 2
    saved = newest.with_name(newest.stem + "-2.pt")
    assert summary["checkpoint"] == str(saved)
    assert load_checkpoint(saved).counters.iteration == 2
    warnings = [line for line in capsys.readouterr().err.splitlines()
                if line.startswith("warning:")]
    assert warnings == [
        f"warning: skipping checkpoint {newest}: is {kind}, not a checkpoint file; resuming "
        f"from {first}",
        f"warning: {newest} is {kind}, not a checkpoint file; left as it is, this checkpoint "
        f"is saved as {saved.name}"]
    assert newest.is_dir() if kind == "a directory" else newest.is_fifo()

    # The next resume starts from the iteration saved beside it, with nothing to say.
    said: list[str] = []
    checkpoint = find_resume_checkpoint(_config(run_dir, "iterations=3", "resume=true"),
                                        run_dir / "checkpoints", log=said.append)
    assert checkpoint.path == saved and said == []


@pytest.mark.parametrize("handover", [False, True])
def test_resume_run_puts_the_folder_back_at_the_newest_checkpoint(tmp_path, handover) -> None:
    """`resume_run`, which every runtime starts with: the trainer, counters and RNG streams of
    the newest checkpoint; the shard of the iteration after it removed (inline) or moved back
    to pending/ (a runtime whose workers hand shards over by files); the replay window and the
    metrics records end at the checkpoint's iteration."""
    run_dir = tmp_path / "run"
    train_loop(_config(run_dir, "iterations=2"))
    first, newest = list_checkpoints(run_dir / "checkpoints")
    newest.unlink()
    config = _config(run_dir, "iterations=2", "resume=true")
    said: list[str] = []

    resumed = resume_run(config, log=said.append, handover=handover)
    assert resumed.checkpoint == first and said == []
    assert resumed.state.counters.iteration == 1 and resumed.trainer.step == load_checkpoint(
        first).counters.step
    assert [path.name for path in list_shards(run_dir / "shards")] == ["shard-000000000.npz"]
    pending = sorted(path.name for path in pending_dir(run_dir).glob("*"))
    assert [path.name for path in resumed.requeued] == pending
    assert pending == (["requeued-shard-000000001.npz"] if handover else [])
    window = resumed.replay_window(TrackMix(config.mix, config.rules))
    window.refresh()
    samples, _ = read_shard(run_dir / "shards" / "shard-000000000.npz")
    assert window.num_samples == len(samples)
    resumed.run_log(log=said.append).close()
    assert [record["iteration"] for record in read_metrics(run_dir)] == [1] and said == []
