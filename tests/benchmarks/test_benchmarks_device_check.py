"""benchmarks/device_check.sh and device_champion.sh: they parse, what they run exists, and
both run end to end against a stand-in interpreter in seconds (the real CPU rehearsals of
the champion script are `slow`)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
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


# Both scripts end to end in about a second: PYTHON names a stand-in interpreter that logs
# each call's arguments and does what the real command would leave behind (a checkpoint in
# the run dir, a benchmark JSON, a test summary), so the scripts' own work is what is checked:
# the overrides they pass, the files they copy to OUT and the lines they print.
STAND_IN = '''#!{python}
import json, os, sys
from pathlib import Path

arguments = sys.argv[1:]
with open(os.environ["STAND_IN_LOG"], "a") as log:
    log.write(json.dumps(arguments) + "\\n")
if arguments[:2] == ["-m", "pytest"]:
    print("55 passed in 1.00s")
elif arguments[:2] == ["-m", "benchmarks.bench_selfplay"]:
    Path(arguments[arguments.index("--json") + 1]).write_text('{{"results": []}}')
    print("| preset | (a) positions/s |")
elif arguments[0] == "-c" and "catena_zero.cli.main" in arguments[1]:
    overrides = dict(word.split("=", 1) for word in arguments[3:] if "=" in word)
    if overrides.get("runtime.selfplay_device") == os.environ.get("STAND_IN_REFUSE", "-"):
        print("cannot start the self-play processes", file=sys.stderr)
        sys.exit(1)
    checkpoints = Path(overrides["run_dir"]) / "checkpoints"
    checkpoints.mkdir(parents=True, exist_ok=True)
    number = len(list(checkpoints.glob("*.pt"))) + 1
    (checkpoints / f"checkpoint-step{{number:09d}}-iter{{number:06d}}.pt").write_bytes(b"net")
    (checkpoints.parent / "summary.json").write_text('{{"iterations": 1}}')
    (checkpoints.parent / "metrics.jsonl").write_text('{{"step": 1}}\\n')
    print("runtime", overrides.get("runtime"), "on", overrides.get("device"))
else:
    print("3.12.3 torch stand-in cuda False numpy 2 cpus 16")
'''


def _stand_in_run(tmp_path: Path, script: Path, **settings: str,
                  ) -> tuple[subprocess.CompletedProcess, list[list[str]], Path]:
    """Runs `script` with the stand-in interpreter; (the run, each call's arguments, OUT)."""
    python, log, out = tmp_path / "python", tmp_path / "calls.jsonl", tmp_path / "out"
    python.write_text(STAND_IN.format(python=sys.executable))
    python.chmod(0o755)
    environment = {**os.environ, "PYTHON": str(python), "STAND_IN_LOG": str(log),
                   "OUT": str(out), "RUN_DIR": str(tmp_path / "run"), "DEVICE": "cpu",
                   "RUN_MINUTES": "0.01", **settings}
    completed = subprocess.run(["bash", str(script)], capture_output=True, text=True,
                               env=environment, check=False, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    return completed, calls, out


def _overrides(call: list[str]) -> dict[str, str]:
    return dict(word.split("=", 1) for word in call[3:] if "=" in word)


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_check_runs_end_to_end_with_a_stand_in(tmp_path: Path) -> None:
    completed, calls, out = _stand_in_run(tmp_path, SCRIPT, BENCH_GAMES="8")
    environment, tests, train, bench = calls
    assert environment[0] == "-c" and "torch.__version__" in environment[1]
    assert tests[:2] == ["-m", "pytest"] and tests[-2:] == ["tests/network", "tests/train"]
    assert train[2] == "train"
    settings = _overrides(train)
    assert (settings["device"], settings["max_minutes"], settings["run_dir"]) == (
        "cpu", "0.01", str(tmp_path / "run"))
    assert settings["resume"] == "true" and settings["preset"] == "side6"
    assert bench[:2] == ["-m", "benchmarks.bench_selfplay"]
    assert bench[bench.index("--device") + 1] == "cpu"
    assert bench[bench.index("--games") + 1] == "8"
    assert sorted(path.name for path in out.iterdir()) == [
        "bench.log", "bench_gpu.json", "checkpoint-step000000001-iter000001.pt",
        "summary.json", "train.log"]
    assert json.loads((out / "bench_gpu.json").read_text()) == {"results": []}
    assert (out / "train.log").read_text() == "runtime inline on cpu\n"
    printed = completed.stdout
    for line in ("55 passed in 1.00s", "train exit 0", "| preset | (a) positions/s |",
                 f"kept {tmp_path / 'run'}/checkpoints/checkpoint-step000000001-iter000001.pt",
                 "side-6 continuation on cpu for 0.01 minutes"):
        assert line in printed, line
    assert printed.rstrip().endswith("done")


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("workers", ["0", "3"])
def test_the_champion_script_runs_end_to_end_with_a_stand_in(tmp_path: Path,
                                                            workers: str) -> None:
    completed, calls, out = _stand_in_run(
        tmp_path, CHAMPION_SCRIPT, GAMES="64", THREADS="2", WORKERS=workers,
        EXTRA="selfplay.full_simulations=128 selfplay.cheap_simulations=32")
    environment, train = calls
    assert environment[0] == "-c" and "torch.__version__" in environment[1]
    settings = _overrides(train)
    # 64 training steps per 128 games: the sittings' steps per self-play game.
    assert settings["train.steps_per_iteration"] == "32"
    assert settings["games_per_iteration"] == settings["selfplay.games_in_batch"] == "64"
    assert settings["network.blocks"] == "6" and settings["train.learning_rate"] == "1e-4"
    # EXTRA comes after the run's own search, so it is the one Hydra keeps.
    assert train.index("selfplay.full_simulations=128") > train.index(
        "selfplay.full_simulations=16")
    assert settings["threads"] == "2" and settings["max_minutes"] == "0.01"
    if workers == "0":
        assert settings["runtime"] == "inline" and "runtime.num_selfplay_actors" not in settings
    else:
        assert settings["runtime"] == "processes"
        assert settings["runtime.num_selfplay_actors"] == "3"
        assert settings["runtime.selfplay_device"] == "cpu"
    assert sorted(path.name for path in out.iterdir()) == [
        "checkpoint-step000000001-iter000001.pt", "metrics.jsonl", "summary.json",
        "train.log"]
    runtime = "inline" if workers == "0" else "processes"
    assert (out / "train.log").read_text() == f"runtime {runtime} on cpu\n"
    assert "train exit 0" in completed.stdout and "inline instead" not in completed.stdout
    assert completed.stdout.rstrip().endswith("done")


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_champion_script_falls_back_to_one_process_with_a_stand_in(
        tmp_path: Path) -> None:
    completed, calls, out = _stand_in_run(
        tmp_path, CHAMPION_SCRIPT, GAMES="16", THREADS="1", WORKERS="2",
        SELFPLAY_DEVICE="no-such-device", STAND_IN_REFUSE="no-such-device",
        HARD_SECONDS="330")
    _, refused, fallback = calls
    assert _overrides(refused)["runtime"] == "processes"
    settings = _overrides(fallback)
    # What is left of the 330 s, less two minutes for the copy, in whole minutes.
    assert settings["runtime"] == "inline" and settings["max_minutes"] == "3"
    assert "processes runtime failed (exit 1)" in completed.stdout
    assert (out / "train.log").read_text() == (
        "cannot start the self-play processes\nruntime inline on cpu\n")
    assert list(out.glob("checkpoint-*.pt"))
