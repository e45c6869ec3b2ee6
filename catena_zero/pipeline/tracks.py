"""The mix of a training run: which tracks (board side x variant) it plays and trains on, in
what shares, and how the shares move as training goes.

One network learns every track of the mix. Each iteration plays one track's games: the track
whose share of the run's clock so far lags its target share the most (deficit round-robin,
so the mix holds and resumes where it left off). The clock (`mix.clock`) is either the
seconds of self-play each track has taken (the default: a side-10 iteration costs about
twenty side-4 ones, so shares of iterations would spend most of the time on the largest
boards) or the count of iterations (deterministic, for reproducible runs and tests). The
schedule that moves the shares runs on the same clock: `schedule_minutes` of self-play, or
`schedule_iterations`. Each iteration's games fill one shard whose meta names the track; the
replay window draws each training batch across tracks by the same shares. Each track keeps
its own fair-komi estimate, which its komi draws centre on.

    mix = TrackMix(MixConfig(tracks=("4/komi/standard", "6/komi/standard"),
                             shares=(3.0, 1.0), final_shares=(1.0, 3.0),
                             schedule_minutes=60), default=Rules(6))
    mix.shares_at(seconds=1800)               # {4/komi/standard: 0.5, 6/komi/standard: 0.5}
    track = mix.next_track(TrackClock(iterations={...}, seconds={"side4-komi-standard":
                                                                  900.0, ...}))

Playing one track per iteration keeps every network call as large as a one-track run's
(padding a mixed batch into the largest board's grid costs about the extra area on a CPU:
benchmarks/bench_padding.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from catena_zero.rules import Rules, Track


@dataclass(frozen=True)
class MixConfig:
    """The tracks of a run and their shares (the `mix` group of `catena-zero train`)."""

    # tracks as "side/game_type/scoring", e.g. [4/komi/standard, 6/komi/standard]; empty =
    # the run's own board and rules alone (a one-track run, as the per-side presets are)
    tracks: tuple[str, ...] = ()
    shares: tuple[float, ...] = ()  # relative share of each track at the start (empty = equal)
    final_shares: tuple[float, ...] = ()  # shares once the schedule has run (empty = shares)
    # what the shares divide: "seconds" of self-play per track, or "iterations" per track
    clock: str = "seconds"
    # clock "seconds": minutes of self-play (all tracks together) over which the shares move
    # linearly to final_shares (0 = fixed at shares)
    schedule_minutes: float = 0.0
    # clock "iterations": iterations over which shares move linearly (0 = fixed at shares)
    schedule_iterations: int = 0

    def __post_init__(self) -> None:
        parsed = [Track.parse(text) for text in self.tracks]  # ValueError names a bad one
        if len(set(parsed)) != len(parsed):
            raise ValueError(f"mix.tracks lists a track twice: {list(self.tracks)}")
        for name in ("shares", "final_shares"):
            values = getattr(self, name)
            if values and len(values) != len(self.tracks):
                raise ValueError(f"mix.{name} must give one share per track "
                                 f"({len(self.tracks)}), got {len(values)}")
            if any(not value >= 0 for value in values):
                raise ValueError(f"mix.{name} must be >= 0, got {list(values)}")
            if values and sum(values) <= 0:
                raise ValueError(f"mix.{name} must not all be 0, got {list(values)}")
        if self.clock not in CLOCKS:
            raise ValueError(f"mix.clock must be one of {', '.join(CLOCKS)}, got {self.clock!r}")
        if self.schedule_iterations < 0:
            raise ValueError(f"mix.schedule_iterations must be >= 0, "
                             f"got {self.schedule_iterations}")
        if not (math.isfinite(self.schedule_minutes) and self.schedule_minutes >= 0):
            raise ValueError(f"mix.schedule_minutes must be a number >= 0, "
                             f"got {self.schedule_minutes}")
        if self.clock == "seconds" and self.schedule_iterations:
            raise ValueError("mix.schedule_iterations moves shares of iterations: use "
                             "mix.schedule_minutes with mix.clock=seconds (or set "
                             "mix.clock=iterations)")
        if self.clock == "iterations" and self.schedule_minutes:
            raise ValueError("mix.schedule_minutes moves shares of self-play time: use "
                             "mix.schedule_iterations with mix.clock=iterations (or set "
                             "mix.clock=seconds)")

    @property
    def is_mixed(self) -> bool:
        """Whether the run names its tracks (and so trains the size-general network)."""
        return bool(self.tracks)


CLOCKS = ("seconds", "iterations")


@dataclass
class TrackClock:
    """What each track has taken so far (Track.key -> value): iterations and seconds of
    self-play. A run keeps one in its loop state and checkpoints it."""

    iterations: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, key: str, seconds: float, iterations: int = 1) -> None:
        self.iterations[key] = self.iterations.get(key, 0) + iterations
        self.seconds[key] = self.seconds.get(key, 0.0) + float(seconds)

    @property
    def total_iterations(self) -> int:
        return sum(self.iterations.values())

    @property
    def total_seconds(self) -> float:
        return float(sum(self.seconds.values()))

    def seconds_per_iteration(self, key: str) -> float:
        """The mean self-play seconds of one of the track's iterations; the mean over all
        tracks for one not played yet; 0 before any."""
        count = self.iterations.get(key, 0)
        if count and key in self.seconds:
            return self.seconds[key] / count
        total = self.total_iterations
        return self.total_seconds / total if total else 0.0

    def ahead(self, keys) -> TrackClock:
        """A copy with one more iteration of each track key in `keys` counted at its mean
        seconds: the tasks handed out and not yet back, so that a mix plans past them.
        Before any play there is no mean, and each counts one unit (as in `next_track`):
        the first tasks of a run with several workers spread over the tracks too."""
        clock = TrackClock(iterations=dict(self.iterations), seconds=dict(self.seconds))
        for key in keys:
            clock.add(key, clock.seconds_per_iteration(key) or 1.0)
        return clock

    def time_shares(self) -> dict[str, float]:
        """Each track's realised share of the self-play seconds (empty before any)."""
        total = self.total_seconds
        return {key: value / total for key, value in self.seconds.items()} if total else {}


class TrackMix:
    """The run's tracks, their shares at an iteration and the track an iteration plays."""

    def __init__(self, config: MixConfig, default: Rules):
        self.config = config
        if config.tracks:
            self.tracks = [Track.parse(text) for text in config.tracks]
        else:
            self.tracks = [Track.from_rules(default)]
        count = len(self.tracks)
        self.start = _normalised(config.shares or (1.0,) * count)
        self.end = _normalised(config.final_shares) if config.final_shares else self.start

    @property
    def clock(self) -> str:
        return self.config.clock

    def progress(self, iteration: int = 0, seconds: float = 0.0) -> float:
        """How far the schedule has run (0..1) after `iteration` iterations and `seconds`
        of self-play, on the mix's clock."""
        if self.clock == "seconds":
            span = 60.0 * self.config.schedule_minutes
            return min(1.0, seconds / span) if span else 0.0
        span = self.config.schedule_iterations
        return min(1.0, iteration / span) if span else 0.0

    def shares_at(self, iteration: int = 0, seconds: float = 0.0) -> dict[Track, float]:
        """Each track's share (summing to 1) after `iteration` iterations and `seconds` of
        self-play (only the mix's clock counts)."""
        progress = self.progress(iteration, seconds)
        shares = [a + (b - a) * progress for a, b in zip(self.start, self.end, strict=True)]
        return dict(zip(self.tracks, _normalised(shares), strict=True))

    def shares_of(self, clock: TrackClock) -> dict[Track, float]:
        """The shares where `clock` stands."""
        return self.shares_at(clock.total_iterations, clock.total_seconds)

    def next_track(self, clock: TrackClock | Mapping[str, int]) -> Track:
        """The track the next iteration plays: the one furthest below its share of the
        clock once it has played (its own mean iteration counted ahead, so that a costly
        track waits until its share has room for it), the earlier-listed track on a tie.
        A plain mapping is taken as iterations per track."""
        if not isinstance(clock, TrackClock):
            clock = TrackClock(iterations={str(k): int(v) for k, v in clock.items()})
        shares = self.shares_of(clock)
        if self.clock == "iterations":
            spent = {track: float(clock.iterations.get(track.key, 0)) for track in self.tracks}
            ahead = dict.fromkeys(self.tracks, 1.0)
        else:
            spent = {track: clock.seconds.get(track.key, 0.0) for track in self.tracks}
            # before any play there is no mean: one unit each, so the largest share starts
            ahead = {track: clock.seconds_per_iteration(track.key) or 1.0
                     for track in self.tracks}
        total = sum(spent.values())
        return max(self.tracks, key=lambda track: (
            shares[track] * (total + ahead[track]) - spent[track] - ahead[track],
            -self.tracks.index(track)))


def _normalised(values) -> list[float]:
    total = float(sum(values))
    return [float(value) / total for value in values]
