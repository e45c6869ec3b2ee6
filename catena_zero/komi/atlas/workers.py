"""The komi atlas's tracks measured at once, each in a process forked from the command.

`measured_tasks` runs a measurement function over a list of tasks, either one after another
in this process or over `workers` forked processes (largest boards first, so the long tracks
do not come last), and yields each (task, fields) as it finishes, so the caller can save it
at once. The tasks and the function, models included, reach the workers by fork, never by
pickling; only the fields come back. An error in a track or Ctrl-C stops every worker at
once: the tracks already yielded are the caller's to keep, those in progress are lost.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Iterator
from typing import Any

_FORKED: dict = {}  # the tasks and the measurement; worker processes fork with them


class WorkersUnavailable(ValueError):
    """Workers asked for on a platform without the fork start method."""


def _start_worker() -> None:
    """A measuring process: Ctrl-C is the parent's to handle (it stops the workers), and one
    torch thread, since the workers are the parallelism (a forked OpenMP pool can hang)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import torch

    torch.set_num_threads(1)


def _measure_forked(index: int) -> tuple[int, dict]:
    return index, _FORKED["measure"](_FORKED["tasks"][index])


def measured_tasks(tasks: list, measure: Callable[[Any], dict], workers: int,
                   starting: Callable[[Any], None] | None = None,
                   ) -> Iterator[tuple[Any, dict]]:
    """(task, measure(task)) for every task as it finishes: in order in this process
    (workers 1, or a single task; `starting(task)` before each), else over `workers`
    forked processes, the tasks with the most cells (`task.rules.board.num_cells`) first."""
    if workers <= 1 or len(tasks) <= 1:
        for task in tasks:
            if starting is not None:
                starting(task)
            yield task, measure(task)
        return
    if "fork" not in multiprocessing.get_all_start_methods():
        raise WorkersUnavailable(f"atlas.workers={workers} needs the fork start method, which "
                                 f"this platform lacks; use atlas.workers=1")
    order = sorted(range(len(tasks)), key=lambda index: -tasks[index].rules.board.num_cells)
    _FORKED.update(tasks=tasks, measure=measure)
    pool = multiprocessing.get_context("fork").Pool(min(workers, len(tasks)), _start_worker)
    try:
        for index, fields in pool.imap_unordered(_measure_forked, order):
            yield tasks[index], fields
        pool.close()
    finally:
        pool.terminate()  # at once, whether the tasks are done, one failed, or Ctrl-C came
        pool.join()
        _FORKED.clear()
