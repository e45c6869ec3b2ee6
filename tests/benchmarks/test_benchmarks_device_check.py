"""benchmarks/device_check.sh: the GPU check parses, and what it runs exists."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "device_check.sh"


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_script_parses() -> None:
    completed = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True,
                               check=False)
    assert completed.returncode == 0, completed.stderr


def test_every_module_and_test_folder_it_names_exists() -> None:
    text = SCRIPT.read_text()
    modules = re.findall(r"\$PY -m ([\w.]+)", text)
    assert "benchmarks.bench_selfplay" in modules
    for module in modules:
        assert importlib.util.find_spec(module) is not None, module
    for folder in re.findall(r"\b(tests/\w+)", text):
        assert (ROOT / folder).is_dir(), folder


CHAMPION_SCRIPT = ROOT / "benchmarks" / "device_champion.sh"


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_champion_script_parses() -> None:
    completed = subprocess.run(["bash", "-n", str(CHAMPION_SCRIPT)], capture_output=True,
                               text=True, check=False)
    assert completed.returncode == 0, completed.stderr


def _rehearse(tmp_path: Path, **settings: str) -> subprocess.CompletedProcess:
    out, run_dir = tmp_path / "out", tmp_path / "run"
    environment = {**__import__("os").environ, "OUT": str(out), "DEVICE": "cpu",
                   "RUN_MINUTES": "0.01", "GAMES": "4", "THREADS": "1",
                   "RUN_DIR": str(run_dir), "PYTHON": __import__("sys").executable, **settings}
    completed = subprocess.run(["bash", str(CHAMPION_SCRIPT)], capture_output=True, text=True,
                               env=environment, check=False, timeout=600)
    assert "train exit 0" in completed.stdout, completed.stdout[-2000:]
    assert list(out.glob("checkpoint-*.pt")), completed.stdout[-2000:]
    return completed


@pytest.mark.slow  # one tiny iteration of the 24-track mix on the CPU: about 30 s
@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_champion_script_rehearses_on_the_cpu(tmp_path: Path, workers: str) -> None:
    completed = _rehearse(tmp_path, WORKERS=workers)
    runtime = "processes" if workers != "0" else "inline"
    assert f"runtime {runtime}" in (tmp_path / "out" / "train.log").read_text()
    assert "inline instead" not in completed.stdout


@pytest.mark.slow  # a refused start, then one tiny inline iteration: about 30 s
@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_champion_script_falls_back_to_one_process(tmp_path: Path) -> None:
    completed = _rehearse(tmp_path, WORKERS="2", SELFPLAY_DEVICE="no-such-device",
                          HARD_SECONDS="300")
    assert "processes runtime failed" in completed.stdout
    assert "runtime inline" in (tmp_path / "out" / "train.log").read_text()


@pytest.mark.slow  # one tiny inline iteration: about 30 s
@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_champion_script_passes_extra_overrides_to_the_run(tmp_path: Path) -> None:
    _rehearse(tmp_path, WORKERS="0",
              EXTRA="selfplay.full_simulations=12 selfplay.cheap_simulations=3")
    assert "search gumbel 12/3 simulations" in (tmp_path / "out" / "train.log").read_text()
