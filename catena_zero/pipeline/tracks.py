"""The mix of a training run: which tracks (board side x variant) it plays and trains on, in
what shares, and how the shares move as training goes.

One network learns every track of the mix. Each iteration plays one track's games: the track
whose share of the iterations played so far lags its target share the most (deficit
round-robin, so the mix holds exactly, deterministically, and resumes where it left off).
Its games fill one shard whose meta names the track; the replay window draws each training
batch across tracks by the same shares. Each track keeps its own fair-komi estimate, which
its komi draws centre on.

    mix = TrackMix(MixConfig(tracks=("4/komi/standard", "6/komi/standard"),
                             shares=(3.0, 1.0), final_shares=(1.0, 3.0),
                             schedule_iterations=200), default=Rules(6))
    mix.shares_at(100)                        # {4/komi/standard: 0.5, 6/komi/standard: 0.5}
    track = mix.next_track(100, {"side4-komi-standard": 60, "side6-komi-standard": 40})

Playing one track per iteration keeps every network call as large as a one-track run's
(padding a mixed batch into the largest board's grid costs about the extra area on a CPU:
benchmarks/bench_padding.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from catena_zero.rules import Rules, Track


@dataclass(frozen=True)
class MixConfig:
    """The tracks of a run and their shares (the `mix` group of `catena-zero train`)."""

    # tracks as "side/game_type/scoring", e.g. [4/komi/standard, 6/komi/standard]; empty =
    # the run's own board and rules alone (a one-track run, as the per-side presets are)
    tracks: tuple[str, ...] = ()
    shares: tuple[float, ...] = ()  # relative share of each track at the start (empty = equal)
    final_shares: tuple[float, ...] = ()  # shares once the schedule has run (empty = shares)
    # iterations over which shares move linearly to final_shares (0 = fixed at shares)
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
        if self.schedule_iterations < 0:
            raise ValueError(f"mix.schedule_iterations must be >= 0, "
                             f"got {self.schedule_iterations}")

    @property
    def is_mixed(self) -> bool:
        """Whether the run names its tracks (and so trains the size-general network)."""
        return bool(self.tracks)


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

    def shares_at(self, iteration: int) -> dict[Track, float]:
        """Each track's share at `iteration` (summing to 1)."""
        span = self.config.schedule_iterations
        progress = min(1.0, iteration / span) if span else 0.0
        shares = [a + (b - a) * progress for a, b in zip(self.start, self.end, strict=True)]
        return dict(zip(self.tracks, _normalised(shares), strict=True))

    def next_track(self, iteration: int, played: Mapping[str, int]) -> Track:
        """The track iteration `iteration` plays: the one furthest below its share of the
        iterations played so far (`played`: Track.key -> iterations), the earlier-listed
        track on a tie."""
        shares = self.shares_at(iteration)
        total = sum(played.get(track.key, 0) for track in self.tracks) + 1
        return max(self.tracks, key=lambda track: (
            shares[track] * total - played.get(track.key, 0), -self.tracks.index(track)))


def _normalised(values) -> list[float]:
    total = float(sum(values))
    return [float(value) / total for value in values]
