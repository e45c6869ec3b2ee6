"""The start-up line and the ETA of a run bounded by iterations, by minutes, or by both."""

from __future__ import annotations

import dataclasses

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.pipeline.config import LoopConfig
from catena_zero.pipeline.progress import (
    ProgressReporter,
    describe_bound,
    describe_run,
    format_minutes,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _reporter(loop: LoopConfig, start: int = 0):
    clock, lines = FakeClock(), []
    return ProgressReporter(loop, start, log=lines.append, clock=clock), clock, lines


def test_a_minutes_bound_gives_an_eta_from_the_first_moment() -> None:
    # A run bounded by minutes alone once showed `2it [00:54]`: no total, no ETA.
    reporter, clock, _ = _reporter(LoopConfig(iterations=0, max_minutes=600.0,
                                              progress=False))
    clock.now += 60.0
    assert reporter.eta_text() == "599m of 600m"
    clock.now += 23.0 * 60
    assert reporter.eta_seconds() == (576.0 * 60, 600.0 * 60)


def test_an_iterations_bound_gives_its_eta_after_the_first_iteration() -> None:
    reporter, clock, lines = _reporter(LoopConfig(iterations=10, progress=False))
    assert reporter.eta_text() == "? of ?"  # nothing to go by yet
    clock.now += 30.0
    reporter.update(1)
    assert reporter.eta_seconds() == (270.0, 300.0)
    assert lines == ["train: first iteration took 30s; about 10 iterations in this run "
                     "(bound 10 iterations, eta 4m)"]
    clock.now += 30.0
    reporter.update(2)
    assert len(lines) == 1  # the estimate is said once


def test_the_bound_that_binds_first_sets_the_eta() -> None:
    reporter, clock, lines = _reporter(LoopConfig(iterations=100, max_minutes=10.0,
                                                  progress=False))
    clock.now += 60.0
    reporter.update(1)
    assert reporter.eta_seconds() == (540.0, 600.0)  # the minutes bind, not 99 more minutes
    assert "about 10 iterations in this run" in lines[0]
    assert describe_bound(reporter.loop) == "100 iterations or 10 min, whichever comes first"


def test_a_resumed_run_counts_only_its_own_iterations() -> None:
    reporter, clock, _ = _reporter(LoopConfig(iterations=10, progress=False), start=6)
    clock.now += 20.0
    reporter.update(7)
    assert reporter.eta_seconds() == (60.0, 80.0)


def test_the_bar_carries_the_eta_in_its_postfix(capsys) -> None:
    loop = LoopConfig(iterations=0, max_minutes=28.5, progress=True)
    clock = FakeClock()
    reporter = ProgressReporter(loop, 0, clock=clock, header="train: the header")
    assert reporter.bar.postfix == "eta=28m of 28m"  # before the first iteration too
    clock.now += 54.0
    reporter.update(2, {"loss": "1.000"})
    assert reporter.bar.postfix == "loss=1.000, eta=28m of 28m"
    reporter.close()
    captured = capsys.readouterr()
    assert captured.out == ""  # stdout keeps the summary alone
    assert captured.err.index("train: the header") < captured.err.index("first iteration")


def test_the_start_up_line_says_what_will_run_and_for_how_long(tmp_path) -> None:
    config = build_config(compose("train", ["preset=side4", f"run_dir={tmp_path}"]))
    line = describe_run(config, runtime="ray", detail="2 self-play actors of 1 CPU")
    assert line == ("train: tracks 4/komi/standard; net 4x32; search gumbel 64/16 simulations "
                    "(full 0.5); 256 games/iteration; runtime ray (2 self-play actors of 1 "
                    "CPU); bound 28.5 min")
    general = build_config(compose("train", [f"run_dir={tmp_path}"]))
    line = describe_run(general, runtime="inline")
    assert "tracks 24: 3/komi/standard, 4/komi/standard, 5/komi/standard, ... " \
           "6/double/quadratic (mixed" in line and "bound 600 min" in line
    limited = dataclasses.replace(general, loop=dataclasses.replace(general.loop,
                                                                    iterations=500))
    assert describe_run(limited, "inline").endswith(
        "bound 500 iterations or 600 min, whichever comes first")


def test_durations_read_at_a_glance() -> None:
    assert [format_minutes(s) for s in (5, 89, 23 * 60, 600 * 60, float("inf"))] == [
        "5s", "89s", "23m", "600m", "?"]


def test_the_realised_time_shares_are_shown_by_side() -> None:
    from catena_zero.pipeline.progress import side_time_shares
    from catena_zero.pipeline.tracks import TrackClock

    clock = TrackClock()
    assert side_time_shares(clock) == ""
    clock.add("side6-komi-standard", 30.0)
    clock.add("side6-nokomi-longest", 10.0)
    clock.add("side4-komi-standard", 10.0)
    assert side_time_shares(clock) == "4:20% 6:80%"


def test_the_start_up_line_says_what_the_shares_divide(tmp_path) -> None:
    from catena_zero.cli.common import compose
    from catena_zero.cli.train import build_config
    from catena_zero.pipeline.progress import describe_run
    from catena_zero.pipeline.tracks import TrackClock

    config = build_config(compose("train", [f"run_dir={tmp_path}"]))  # the default job
    line = describe_run(config, runtime="inline")
    assert "shares of self-play time, moving over 60 min" in line
    resumed = describe_run(config, runtime="inline",
                           clock=TrackClock({"side6-komi-standard": 2},
                                            {"side6-komi-standard": 9.0}))
    assert "so far by side 6:100%" in resumed
    counted = build_config(compose("train", [f"run_dir={tmp_path}", "mix.clock=iterations",
                                             "mix.schedule_minutes=0",
                                             "mix.schedule_iterations=50"]))
    assert "shares of iterations, moving over 50 iterations" in describe_run(counted, "ray")
