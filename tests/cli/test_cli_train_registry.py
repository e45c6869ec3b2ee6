"""`catena-zero train` with a damaged champion registry: refused at start-up, before any
self-play, in one line naming the file and the problem, exit status 1, nothing changed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from catena_zero.arena.config import GateConfig, TrainingGateConfig
from catena_zero.arena.registry import RegistryCorruptError
from catena_zero.cli.common import compose
from catena_zero.cli.main import EXIT_BAD_FILE, main
from catena_zero.cli.train import build_config
from catena_zero.pipeline.config import RuntimeConfig
from catena_zero.pipeline.run import check_gating_registry, run_training
from tests.cli.test_cli_bad_files import REGISTRIES, _one_error_line

TRAIN = ["train", "preset=tiny", "runtime=inline", "tensorboard=false", "iterations=1"]


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` with its bytes (None: a directory or a FIFO)."""
    found = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder) / name
            found[str(path.relative_to(root))] = path.read_bytes() if path.is_file() else None
    return found


@pytest.mark.parametrize("case", list(REGISTRIES))
def test_a_new_run_refuses_a_damaged_registry_in_its_run_dir(tmp_path, capsys, case) -> None:
    content, problem = REGISTRIES[case]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    registry = run_dir / "champions.json"  # the default registry of a run
    registry.write_text(content)
    before = _snapshot(tmp_path)
    assert main([*TRAIN, f"run_dir={run_dir}"]) == EXIT_BAD_FILE
    _one_error_line(capsys, "catena-zero train: error:", str(registry), problem)
    assert _snapshot(tmp_path) == before  # no config.yaml, shard, checkpoint or log


def test_a_resumed_run_refuses_a_damaged_registry_before_touching_the_run(tmp_path,
                                                                          capsys) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "checkpoints" / "checkpoint-step8-iter2.pt").write_bytes(b"kept as it is")
    (run_dir / "shards").mkdir()
    (run_dir / "shards" / "shard-000003.npz").write_bytes(b"after the checkpoint")
    (run_dir / "config.yaml").write_text("the run's own config\n")
    (run_dir / "champions.json").write_text("[]")
    before = _snapshot(tmp_path)
    assert main([*TRAIN, f"run_dir={run_dir}", "resume=true", "iterations=3"]) == EXIT_BAD_FILE
    _one_error_line(capsys, f"{run_dir / 'champions.json'}: top level is list")
    assert _snapshot(tmp_path) == before


def test_a_shared_registry_is_checked_before_the_run_dir_is_made(tmp_path, capsys) -> None:
    registry = tmp_path / "shared" / "champions.json"
    registry.parent.mkdir()
    registry.write_bytes(b"\xff\xfe")
    assert main([*TRAIN, f"run_dir={tmp_path / 'new'}",
                 f"gating.gate.registry={registry}"]) == EXIT_BAD_FILE
    _one_error_line(capsys, str(registry), "not UTF-8 text")
    assert not (tmp_path / "new").exists()


def test_a_fifo_registry_is_refused_without_waiting_for_a_writer(tmp_path, capsys) -> None:
    registry = tmp_path / "champions.json"
    os.mkfifo(registry)
    outcome: dict = {}
    thread = threading.Thread(target=lambda: outcome.update(status=main(
        [*TRAIN, f"run_dir={tmp_path / 'new'}", f"gating.gate.registry={registry}"])),
        daemon=True)
    thread.start()
    thread.join(120)
    if thread.is_alive():  # let the blocked reader go before failing
        os.close(os.open(registry, os.O_WRONLY | os.O_NONBLOCK))
    assert not thread.is_alive(), "train blocked reading the registry"
    assert outcome == {"status": EXIT_BAD_FILE}
    _one_error_line(capsys, str(registry), "not a regular file")


def test_the_library_refuses_before_training_and_ignores_a_registry_it_will_not_use(
        tmp_path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "champions.json").write_text("{")
    config = build_config(compose("train", ["preset=tiny", f"run_dir={run_dir}",
                                            "tensorboard=false", "iterations=1"]))
    with pytest.raises(RegistryCorruptError, match="not valid JSON"):
        run_training(config, RuntimeConfig(name="inline"), gating=TrainingGateConfig(),
                     log=None)
    assert sorted(path.name for path in run_dir.iterdir()) == ["champions.json"]
    check_gating_registry(TrainingGateConfig(enabled=False), run_dir)  # gating off
    check_gating_registry(None, run_dir)
    check_gating_registry(TrainingGateConfig(), None)  # a new run directory: none there yet
    check_gating_registry(TrainingGateConfig(), tmp_path / "elsewhere")  # no file yet
    shared = TrainingGateConfig(gate=GateConfig(registry=str(run_dir / "champions.json")))
    with pytest.raises(RegistryCorruptError):
        check_gating_registry(shared, None)
