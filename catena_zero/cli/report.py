"""catena-zero report: draw the PNG report of a training run from its metrics.jsonl.

    catena-zero report runs/side4                          # writes runs/side4/report.png
    catena-zero report runs/side4 output=/tmp/side4.png    # somewhere else

The same report a run redraws every `report_every` iterations and at its end: the strength
probe's win rates per track against its baselines, the gates' win rates and Elo against the
champion, and the policy/value/score/ownership losses (`catena_zero.pipeline.report`).
"""

from __future__ import annotations

from catena_zero.cli.common import ConfigError, InputFileError


def main(overrides: list[str]) -> int:
    # lazy: torch, which `catena-zero report --help` (reading this module) never needs
    from catena_zero.pipeline.metrics import MetricsError
    from catena_zero.pipeline.report import ReportError, write_report

    run_dirs = [argument for argument in overrides if "=" not in argument]
    options = dict(argument.split("=", 1) for argument in overrides if "=" in argument)
    unknown = sorted(set(options) - {"output"})
    if unknown:
        raise ConfigError(f"unknown key {', '.join(unknown)} (valid keys: output)")
    if len(run_dirs) != 1:
        raise ConfigError(f"expected one RUN_DIR, got {len(run_dirs)}: "
                          "catena-zero report RUN_DIR [output=PATH]")
    try:
        path = write_report(run_dirs[0], options.get("output"))
    except ReportError as error:
        raise ConfigError(str(error)) from None
    except MetricsError as error:
        raise InputFileError(str(error)) from None
    print(f"wrote {path}")
    return 0
