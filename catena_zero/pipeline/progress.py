"""What a training run tells its terminal: a start-up line saying what will run and for how
long, a per-iteration estimate once the first iteration is done, and an ETA on the bar.

A run ends at `loop.iterations` or `loop.max_minutes`, whichever comes first. The bar counts
iterations against `iterations` when there is such a bound (tqdm's own ETA), and its postfix
`eta` says how long is left by whichever bound binds first, e.g. `eta 23m of 600m` on a run
bounded by minutes alone (tqdm cannot know the total of such a run). Both runtimes use it.

    reporter = ProgressReporter(config.loop, start_iteration=0, unit="it",
                                header=describe_run(config, runtime="inline"))
    reporter.update(iteration + 1, {"loss": "1.234"})   # after each iteration
    reporter.close()
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable

from catena_zero.network.config import NetworkConfig
from catena_zero.pipeline.config import LoopConfig, TrainLoopConfig
from catena_zero.pipeline.tracks import TrackClock, TrackMix
from catena_zero.rules import Track


def format_minutes(seconds: float) -> str:
    """A duration for the bar, in the unit of `max_minutes`: `45s`, `23m`, `600m`."""
    if not math.isfinite(seconds):
        return "?"
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f}s"
    return f"{seconds / 60.0:.0f}m"


def describe_bound(loop: LoopConfig) -> str:
    """`500 iterations`, `28.5 min`, or `500 iterations or 60 min, whichever comes first`."""
    parts = []
    if loop.iterations:
        parts.append(f"{loop.iterations} iterations")
    if loop.max_minutes:
        parts.append(f"{loop.max_minutes:g} min")
    if len(parts) == 2:
        return f"{parts[0]} or {parts[1]}, whichever comes first"
    return parts[0]


def side_time_shares(clock: TrackClock) -> str:
    """The realised shares of self-play time by board side, all variants of a side
    together: `4:12% 6:41% 8:20%` (empty before any)."""
    by_side: dict[int, float] = {}
    for key, share in clock.time_shares().items():
        side = Track.parse(key).side
        by_side[side] = by_side.get(side, 0.0) + share
    return " ".join(f"{side}:{100 * share:.0f}%" for side, share in sorted(by_side.items()))


def describe_mix(config: TrainLoopConfig, clock: TrackClock | None = None) -> str:
    """What the mix's shares divide and its schedule, with the realised time shares of a
    resumed run: `shares of self-play time, moving over 60 min (so far 4:12% 6:41%)`."""
    mix = config.mix
    if mix.clock == "seconds":
        text = "shares of self-play time" + (
            f", moving over {mix.schedule_minutes:g} min" if mix.schedule_minutes else "")
    else:
        text = "shares of iterations" + (
            f", moving over {mix.schedule_iterations} iterations"
            if mix.schedule_iterations else "")
    realised = side_time_shares(clock) if clock is not None else ""
    return text + (f" (so far by side {realised})" if realised else "")


def describe_run(config: TrainLoopConfig, runtime: str, detail: str = "",
                 clock: TrackClock | None = None, network: NetworkConfig | None = None) -> str:
    """The start-up line: tracks (and mix), network, search, games per iteration, runtime and
    bound. `detail`: what the runtime adds (say, its actors); `clock`: a resumed run's
    track clock, whose realised time shares the line shows; `network`: the net the run
    trains (a resumed checkpoint's), when not `config.network`."""
    tracks = [str(track) for track in TrackMix(config.mix, config.rules).tracks]
    mix = ", ".join(tracks) if len(tracks) <= 4 else (
        f"{len(tracks)}: {', '.join(tracks[:3])}, ... {tracks[-1]}")
    network = network if network is not None else config.network
    search, selfplay = config.search, config.selfplay
    parts = [
        f"tracks {mix}" + (f" (mixed, one size-general net; {describe_mix(config, clock)})"
                           if config.mix.is_mixed else ""),
        f"net {network.blocks}x{network.channels}",
        f"search {search.algorithm} {selfplay.full_simulations}/{selfplay.cheap_simulations} "
        f"simulations (full {selfplay.full_search_probability:g})",
        f"{config.loop.games_per_iteration} games/iteration" + (
            f" (more on small boards, batch_cells={config.loop.batch_cells})"
            if config.loop.batch_cells else ""),
        f"runtime {runtime}" + (f" ({detail})" if detail else ""),
        f"bound {describe_bound(config.loop)}",
    ]
    return "train: " + "; ".join(parts)


class ProgressReporter:
    """The bar (optional: `loop.progress`) and the lines about how long the run will take,
    on stderr; `log` replaces how a line is said."""

    def __init__(self, loop: LoopConfig, start_iteration: int, unit: str = "it",
                 log: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, header: str = ""):
        self.loop = loop
        self._log = log
        self.start_iteration = start_iteration
        self.clock = clock
        self.started = clock()
        self.iteration = start_iteration
        self.first_said = False
        self.bar = None
        if header:  # before the bar, so that it stands above it
            self.say(header)
        if loop.progress:
            from tqdm import tqdm

            self.bar = tqdm(total=loop.iterations or None, initial=start_iteration, unit=unit,
                            dynamic_ncols=True)
            if loop.max_minutes:  # known before the first iteration ends
                self.bar.set_postfix({"eta": self.eta_text()})

    def say(self, line: str) -> None:
        """A line on stderr, beside the bar (stdout keeps the run's summary alone)."""
        if self._log is not None:
            self._log(line)
        elif self.bar is not None:
            self.bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def seconds_per_iteration(self) -> float | None:
        done = self.iteration - self.start_iteration
        return (self.clock() - self.started) / done if done > 0 else None

    def eta_seconds(self) -> tuple[float, float]:
        """(seconds left, seconds of the whole run in this process) by the bound that binds
        first; inf while unknown (a bound in iterations before the first one is done)."""
        elapsed = self.clock() - self.started
        left = math.inf
        if self.loop.max_minutes:
            left = max(0.0, 60.0 * self.loop.max_minutes - elapsed)
        per_iteration = self.seconds_per_iteration()
        if self.loop.iterations and per_iteration is not None:
            left = min(left, max(0, self.loop.iterations - self.iteration) * per_iteration)
        return left, elapsed + left

    def eta_text(self) -> str:
        left, total = self.eta_seconds()
        return f"{format_minutes(left)} of {format_minutes(total)}"

    def update(self, iteration: int, postfix: dict[str, str] | None = None) -> None:
        """After an iteration: `iteration` iterations are done (of the whole run)."""
        self.iteration = iteration
        if not self.first_said and iteration > self.start_iteration:
            self.first_said = True
            self.say(self.estimate_line())
        if self.bar is not None:
            self.bar.set_postfix({**(postfix or {}), "eta": self.eta_text()}, refresh=False)
            self.bar.update(max(0, iteration - self.bar.n))

    def estimate_line(self) -> str:
        """`first iteration: 54s; about 31 iterations in the 28.5 min bound (eta 27m)`."""
        per_iteration = self.seconds_per_iteration() or 0.0
        left, _ = self.eta_seconds()
        if per_iteration > 0 and math.isfinite(left):
            count = self.iteration - self.start_iteration + int(left / per_iteration)
            if self.loop.iterations:
                count = min(count, self.loop.iterations - self.start_iteration)
            fits = f"about {count} iterations in this run"
        else:
            fits = "no estimate"
        return (f"train: first iteration took {format_minutes(per_iteration)}; {fits} "
                f"(bound {describe_bound(self.loop)}, eta {format_minutes(left)})")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def advance_bar(bar: ProgressReporter, iteration: int, scalars: dict[str, float],
                time_shares: str = "") -> None:
    """Move a bar of shards (the Ray and process runtimes) to `iteration`, with one
    self-play worker's positions/s, the loss and (a mixed run) the time shares by side."""
    postfix = {}
    if "selfplay/positions_per_s" in scalars:
        postfix["pos/s/actor"] = f"{scalars['selfplay/positions_per_s']:.0f}"
    if "loss/total" in scalars:
        postfix["loss"] = f"{scalars['loss/total']:.3f}"
    if time_shares:
        postfix["time"] = time_shares
    bar.update(iteration, postfix)
