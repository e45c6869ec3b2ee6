"""The PNG report of a training run, drawn from its `metrics.jsonl` (`pipeline.metrics`):

    strength   the probe's win rate per track against each baseline, by iteration, and the
               gates' win rates against the champion (markers; filled when accepted)
    gate Elo   the Elo each gate's score implies, per track
    losses     policy, value, score and ownership losses, by iteration

The run redraws it every `loop.report_every` iterations and at its end; `catena-zero report
RUN_DIR` draws it on demand. Here the records are read; the figure is drawn and written
atomically by `pipeline.report_figure`, which alone imports matplotlib (Agg backend, no display
needed) and which the run's log (`pipeline.metrics.RunLog`) draws with too.

Of a damaged metrics file the sound records are drawn and the bad lines named in one warning
line (`pipeline.metrics.read_metrics`); names from the file are drawn as plain text, whatever
characters they hold.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from catena_zero.pipeline.metrics import read_metrics, warn
from catena_zero.pipeline.report_figure import (
    REPORT_FILE,
    ReportError,
    draw_report,
    run_directory,
    series,
)

__all__ = ["REPORT_FILE", "ReportError", "series", "write_report"]


def write_report(run_dir: str | Path, output: str | Path | None = None,
                 log: Callable[[str], None] | None = warn) -> Path:
    """Draw the report of the run in `run_dir` into `output` (default run_dir/report.png);
    returns its path. The sound records of a damaged metrics file are drawn, its bad lines
    said in one line through `log`. ReportError when run_dir is not a directory;
    MetricsError (a ValueError) when the metrics file cannot be read at all (not a regular
    file, say)."""
    run_dir = run_directory(run_dir)
    return draw_report(run_dir, read_metrics(run_dir, log=log), output)
