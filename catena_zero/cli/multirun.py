"""`catena-zero SUBCOMMAND -m key=a,b ...`: a Hydra sweep, each job composed, then run in turn.

    catena-zero komi -m --side 2,3 agent=greedy,uct:200      # 4 jobs
    catena-zero arena -m arena.agent_b=greedy,uct:200 arena.results_json=runs/m.json
    catena-zero train -m preset=tiny seed=1,2 run_dir=runs/seeds

`-m` / `--multirun` anywhere on the command line turns the sweep syntax of Hydra's basic
sweeper (`a,b`, `range(1,4)`, `choice(x,y)`, `glob(...)`) into one job per combination, in
order, the last swept key varying fastest. Every job is composed before the first runs, so a
bad value anywhere stops the sweep before anything is written. Each job writes where it
would alone, made its own (`output_overrides`): a directory gets one subdirectory per job
(`runs/seeds/job0-seed_1`), a file a suffix (`runs/m-job1-arena.agent_b_uct_200.json`), and
a training run without `run_dir` gets `runs/multirun-<UTC time>/job<N>-...`. The jobs stop
at the first that fails, with its exit status.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import OmegaConf

from catena_zero.cli.common import ConfigError, compose

MULTIRUN_FLAGS = ("-m", "--multirun")
# Subcommands that run to an end and may be swept (the others hold a terminal or a socket).
SWEEPABLE = ("train", "arena", "komi", "evaluate", "solve")
# Where each subcommand writes: (config key, "dir" or "file").
OUTPUT_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "train": (("run_dir", "dir"),),
    "komi": (("out_dir", "dir"),),
    "arena": (("arena.results_json", "file"), ("arena.ladder.output_dir", "dir")),
    "evaluate": (("json", "file"),),
}
UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")  # characters a job label replaces by "_"


@dataclass(frozen=True)
class Job:
    """One combination of a sweep."""

    index: int
    label: str  # "job0-board.side_2": names its outputs
    overrides: list[str]  # the job's overrides, sweeps resolved (output keys not yet set)


def split_flag(arguments: Sequence[str]) -> tuple[bool, list[str]]:
    """(whether -m / --multirun was given, the arguments without it)."""
    kept = [argument for argument in arguments if argument not in MULTIRUN_FLAGS]
    return len(kept) != len(arguments), kept


def expand(overrides: Sequence[str]) -> list[Job]:
    """The jobs of a sweep (one when nothing is swept); ConfigError on a malformed override."""
    try:
        parsed = OverridesParser.create().parse_overrides(list(overrides))
    except HydraException as error:
        raise ConfigError(" ".join(str(error).split())) from error
    choices: list[list[tuple[str, str | None]]] = []
    for override in parsed:
        if override.is_sweep_override():
            key = override.get_key_element()
            choices.append([(f"{key}={value}", f"{key}={value}")
                            for value in override.sweep_string_iterator()])
        else:
            choices.append([(override.input_line, None)])
    jobs = []
    for index, combination in enumerate(itertools.product(*choices)):
        swept = [label for _, label in combination if label is not None]
        label = UNSAFE.sub("_", "-".join([f"job{index}", *swept]))
        jobs.append(Job(index, label, [line for line, _ in combination]))
    return jobs


def output_overrides(name: str, config, job: Job, stamp: str) -> list[str]:
    """Overrides that give `job` outputs of its own (see the module docstring)."""
    extra = []
    for key, kind in OUTPUT_KEYS.get(name, ()):
        value = OmegaConf.select(config, key, default=None)
        if not value:
            if name == "train" and key == "run_dir":
                extra.append(f"{key}={Path('runs') / f'multirun-{stamp}' / job.label}")
            continue
        path = Path(str(value))
        target = path / job.label if kind == "dir" else path.with_name(
            f"{path.stem}-{job.label}{path.suffix}")
        extra.append(f"{key}={target}")
    return extra


def run_sweep(name: str, overrides: Sequence[str], run_job: Callable[[list[str]], int],
              log: Callable[[str], None] = print) -> int:
    """Compose every job of the sweep of `overrides`, then run them in turn with `run_job`;
    the first non-zero status, else 0."""
    if name not in SWEEPABLE:
        raise ConfigError(f"{name} does not take -m/--multirun (sweepable: "
                          f"{', '.join(SWEEPABLE)})")
    jobs = expand(overrides)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    prepared = []
    for job in jobs:  # every job composes before any runs: a bad value changes nothing
        job_overrides = list(job.overrides)
        try:
            config = compose(name, job_overrides)
        except ConfigError as error:
            raise ConfigError(f"multirun {job.label}: {error}") from error
        job_overrides += output_overrides(name, config, job, stamp)
        compose(name, job_overrides)
        prepared.append((job, job_overrides))
    for job, job_overrides in prepared:
        log(f"[multirun {job.index + 1}/{len(jobs)}] {job.label}")
        status = int(run_job(job_overrides) or 0)
        if status:
            return status
    return 0
