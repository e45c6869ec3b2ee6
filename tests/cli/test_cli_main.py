"""The `catena-zero` dispatcher: help, unknown and unavailable subcommands, option translation,
config errors, and a `train preset=tiny` smoke run through a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from catena_zero.cli import main as cli_main
from catena_zero.cli.common import ConfigError, prepare_run_dir
from catena_zero.cli.main import SUBCOMMANDS, main, translate_arguments

REPO = Path(__file__).resolve().parents[2]


def test_help_lists_every_subcommand(capsys) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for name in ("train", "arena", "komi", "solve", "export", "gtp", "play", "serve"):
        assert name in text
    assert main([]) == 2  # no subcommand: usage, status 2


def test_unknown_subcommand_exits_2_naming_it(capsys) -> None:
    assert main(["trian"]) == 2
    error = capsys.readouterr().err
    assert "unknown subcommand 'trian'" in error and "train" in error


def test_missing_subcommand_module_is_not_available_yet(capsys, monkeypatch) -> None:
    monkeypatch.setitem(SUBCOMMANDS, "nonesuch", "a subcommand nobody wrote")
    assert main(["nonesuch"]) == 2
    assert "not available yet" in capsys.readouterr().err


def test_dispatch_passes_translated_overrides(monkeypatch) -> None:
    received = []

    class Module:
        @staticmethod
        def main(overrides: list[str]) -> int:
            received.append(overrides)
            return 7

    monkeypatch.setattr(cli_main, "load_subcommand", lambda name: Module)
    assert main(["train", "--games", "3", "--run-dir=x", "preset=tiny", "--resume"]) == 7
    assert received == [["games=3", "run_dir=x", "preset=tiny", "resume=true"]]


def test_translate_arguments() -> None:
    assert translate_arguments(["--a", "1", "--b=2", "c=3", "--flag", "d.e=4"]) == [
        "a=1", "b=2", "c=3", "flag=true", "d.e=4"]
    assert translate_arguments(["--flag", "--other", "x", "+new=1", "~gone"]) == [
        "flag=true", "other=x", "+new=1", "~gone"]
    assert translate_arguments(["--k", "-1"]) == ["k=-1"]


def test_config_error_exits_2_naming_the_key(capsys) -> None:
    assert main(["train", "preset=tiny", "selfplay.full_simulatons=3"]) == 2
    assert "full_simulatons" in capsys.readouterr().err
    assert main(["train", "preset=tiny", "selfplay.full_search_probability=2.0"]) == 2
    assert "full_search_probability" in capsys.readouterr().err


def test_cfg_prints_the_composed_config(capsys) -> None:
    assert main(["train", "--cfg", "preset=side4"]) == 0
    text = capsys.readouterr().out
    assert "side: 4" in text and "full_simulations" in text


def test_subcommand_help_shows_docstring_and_defaults(capsys) -> None:
    assert main(["train", "--help"]) == 0
    text = capsys.readouterr().out
    assert "catena-zero train" in text and "games_per_iteration" in text


def test_prepare_run_dir_refuses_to_mix_runs(tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    config = OmegaConf.create({"a": 1})
    run_dir = prepare_run_dir(str(tmp_path / "run"), config)
    assert (run_dir / "config.yaml").read_text().strip() == "a: 1"
    (run_dir / "checkpoints").mkdir()
    (run_dir / "checkpoints" / "checkpoint-x.pt").write_bytes(b"x")
    with pytest.raises(ConfigError, match="resume=true"):
        prepare_run_dir(str(run_dir), config)
    assert prepare_run_dir(str(run_dir), config, resume=True) == run_dir


def test_train_tiny_in_process(tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "run"
    assert main(["train", "preset=tiny", "runtime=inline", "iterations=1", "tensorboard=false",
                 f"run_dir={run_dir}"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["counters"]["iteration"] == 1
    assert json.loads((run_dir / "summary.json").read_text()) == summary


@pytest.mark.slow  # two fresh interpreters importing torch: ~20-50 s on a loaded 2-core box
def test_train_tiny_through_the_console_script(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    environment = dict(os.environ, PYTHONPATH=str(REPO))
    completed = subprocess.run(
        [sys.executable, "-m", "catena_zero.cli.main", "train", "preset=tiny", "runtime=inline",
         "iterations=1",
         "--run-dir", str(run_dir), "--tensorboard", "false"],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["counters"]["iteration"] == 1
    assert (run_dir / "config.yaml").exists()
    assert list((run_dir / "checkpoints").iterdir())
    again = subprocess.run(
        [sys.executable, "-m", "catena_zero.cli.main", "train", "preset=tiny", "runtime=inline",
         "iterations=1",
         f"run_dir={run_dir}"],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "resume=true" in again.stderr


def test_arena_help_lists_only_what_the_arena_reads(capsys) -> None:
    from catena_zero.cli.main import main

    assert main(["arena", "--help"]) == 0
    text = capsys.readouterr().out
    for key in ("board:", "rules:", "mcts:", "arena:"):
        assert f"\n{key}" in text
    for key in ("iterations:", "selfplay:", "train:", "gating:", "probe:", "network:",
                "runtime:", "mix:"):
        assert f"\n{key}" not in text, key
