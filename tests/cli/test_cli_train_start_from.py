"""`catena-zero train start_from=...`: a checkpoint that cannot be read, or whose net does
not fit the run's network, is refused in one line before the run folder is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from catena_zero.cli.main import EXIT_BAD_FILE, EXIT_USAGE, main
from catena_zero.train import latest_checkpoint
from catena_zero.train.grow import grow_checkpoint
from tests.cli.test_cli_bad_files import _one_error_line
from tests.cli.test_cli_train_registry import TRAIN, _snapshot


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("source")
    assert main([*TRAIN, f"run_dir={run_dir}"]) == 0
    return latest_checkpoint(run_dir / "checkpoints")


def test_a_missing_start_from_is_a_file_error(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nowhere.pt"
    assert main([*TRAIN, f"run_dir={tmp_path / 'run'}", "resume=true",
                 f"start_from={missing}"]) == EXIT_BAD_FILE
    _one_error_line(capsys, "catena-zero train: error:", str(missing), "cannot read")
    assert not (tmp_path / "run").exists()


def test_a_damaged_start_from_is_a_file_error(tmp_path: Path, capsys,
                                             tiny_checkpoint: Path) -> None:
    damaged = tmp_path / tiny_checkpoint.name
    damaged.write_bytes(tiny_checkpoint.read_bytes()[:-100])
    assert main([*TRAIN, f"run_dir={tmp_path / 'run'}", "resume=true",
                 f"start_from={damaged}"]) == EXIT_BAD_FILE
    _one_error_line(capsys, "catena-zero train: error:", str(damaged))
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("deeper,overrides,problem", [
    (False, ["network.value_hidden=24"], "value_hidden 16 (this run: 24)"),
    (True, [], "its net has 3 blocks, network.blocks is 1 (a net can grow, not shrink)"),
])
def test_a_net_that_does_not_fit_is_a_config_error(tmp_path: Path, capsys,
                                                   tiny_checkpoint: Path, deeper: bool,
                                                   overrides: list[str], problem: str) -> None:
    if deeper:
        tiny_checkpoint = grow_checkpoint(tiny_checkpoint, 3, tmp_path / "deeper")
    before = _snapshot(tmp_path)
    assert main([*TRAIN, f"run_dir={tmp_path / 'run'}", "resume=true",
                 f"start_from={tiny_checkpoint}", *overrides]) == EXIT_USAGE
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("catena-zero train: config error:"), lines
    assert problem in lines[0] and str(tiny_checkpoint) in lines[0]
    assert _snapshot(tmp_path) == before


def test_a_run_with_checkpoints_of_its_own_does_not_read_start_from(tmp_path: Path,
                                                                   tiny_checkpoint: Path) -> None:
    run_dir = tmp_path / "run"
    assert main([*TRAIN, f"run_dir={run_dir}", "resume=true",
                 f"start_from={tiny_checkpoint}"]) == 0
    # The checkpoint it started from may go: the run continues from its own.
    gone = tmp_path / "gone.pt"
    assert main([*TRAIN, f"run_dir={run_dir}", "resume=true", f"start_from={gone}",
                 "iterations=4"]) == 0
    assert latest_checkpoint(run_dir / "checkpoints").name.endswith("iter000004.pt")
