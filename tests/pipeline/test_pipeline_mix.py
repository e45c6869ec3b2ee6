"""A run over a mix of tracks: shares, the schedule, per-track fair komi, shards that name their
track, one size-general network, exact resumption."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import torch

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.data import list_shards, read_shard_meta
from catena_zero.pipeline.inline import train_loop
from catena_zero.pipeline.steps import MAX_GAMES_SCALE, track_games
from catena_zero.pipeline.tracks import MixConfig, TrackClock, TrackMix
from catena_zero.rules import Rules, Track
from catena_zero.train import build_network, latest_checkpoint, load_checkpoint

MIX = "mix.tracks=[2/komi/standard,3/nokomi/standard,3/double/longest]"


def _config(run_dir: Path, *overrides: str):
    return build_config(compose("train", ["preset=tiny", f"run_dir={run_dir}",
                                          "tensorboard=false", MIX, "mix.shares=[1,1,2]",
                                          "mix.clock=iterations", *overrides]))


def test_shares_follow_the_schedule_and_iterations_follow_the_shares() -> None:
    mix = TrackMix(MixConfig(tracks=("4/komi/standard", "6/komi/standard"), shares=(3, 1),
                             final_shares=(1, 3), clock="iterations",
                             schedule_iterations=100), Rules(6))
    four, six = mix.tracks
    assert mix.shares_at(0) == {four: 0.75, six: 0.25}
    assert mix.shares_at(50) == {four: 0.5, six: 0.5}
    assert mix.shares_at(100) == mix.shares_at(1000) == {four: 0.25, six: 0.75}
    played: Counter = Counter()
    for _ in range(400):
        played[mix.next_track(played).key] += 1
    # on the iteration clock the schedule runs as they are played: 400 iterations end it
    assert played[four.key] + played[six.key] == 400
    fixed_start = TrackMix(MixConfig(tracks=("4/komi/standard", "6/komi/standard"),
                                     shares=(3, 1), clock="iterations"), Rules(6))
    played = Counter()
    for _ in range(400):
        played[fixed_start.next_track(played).key] += 1
    assert played == {four.key: 300, six.key: 100}  # exactly the shares, never drifting
    fixed = TrackMix(MixConfig(tracks=("4/komi/standard", "6/komi/standard"),
                               final_shares=(0, 1)), Rules(6))
    assert fixed.shares_at(10**6)[four] == 0.5  # no schedule: the starting shares hold


COSTS = {"side4-komi-standard": 1.0, "side6-komi-standard": 6.0, "side10-komi-standard": 25.0}


def _play_by_time(mix: TrackMix, iterations: int, costs=COSTS) -> TrackClock:
    clock = TrackClock()
    for _ in range(iterations):
        track = mix.next_track(clock)
        clock.add(track.key, costs[track.key])
    return clock


def test_on_the_seconds_clock_shares_are_shares_of_self_play_time() -> None:
    mix = TrackMix(MixConfig(tracks=("4/komi/standard", "6/komi/standard",
                                     "10/komi/standard"), shares=(1, 2, 1)), Rules(6))
    clock = _play_by_time(mix, 600)
    shares = clock.time_shares()
    assert shares["side4-komi-standard"] == pytest.approx(0.25, abs=0.02)
    assert shares["side6-komi-standard"] == pytest.approx(0.50, abs=0.02)
    assert shares["side10-komi-standard"] == pytest.approx(0.25, abs=0.03)
    # of iterations, the cheap board plays by far the most
    assert clock.iterations["side4-komi-standard"] > 10 * clock.iterations[
        "side10-komi-standard"]


@pytest.mark.parametrize("seed", range(20))
def test_time_shares_hold_whatever_the_costs(seed) -> None:
    """Property: with any positive costs per iteration (noisy from one iteration to the
    next), the realised time shares approach the target shares."""
    import numpy as np
    generator = np.random.default_rng(seed)
    tracks = ("3/komi/standard", "6/komi/standard", "8/nokomi/longest", "10/double/standard")
    targets = generator.uniform(0.5, 3.0, size=len(tracks))
    mix = TrackMix(MixConfig(tracks=tracks, shares=tuple(targets)), Rules(6))
    base = {Track.parse(text).key: generator.uniform(0.5, 30.0) for text in tracks}
    clock = TrackClock()
    for _ in range(3000):
        track = mix.next_track(clock)
        clock.add(track.key, base[track.key] * generator.uniform(0.8, 1.25))
    shares = clock.time_shares()
    wanted = targets / targets.sum()
    for text, share in zip(tracks, wanted, strict=True):
        assert shares[Track.parse(text).key] == pytest.approx(share, abs=0.03)


def test_the_schedule_runs_on_minutes_of_self_play() -> None:
    mix = TrackMix(MixConfig(tracks=("4/komi/standard", "6/komi/standard"), shares=(3, 1),
                             final_shares=(1, 3), schedule_minutes=10), Rules(6))
    four, six = mix.tracks
    assert mix.shares_at(seconds=0) == {four: 0.75, six: 0.25}
    assert mix.shares_at(iteration=10**6, seconds=300) == {four: 0.5, six: 0.5}
    assert mix.shares_at(seconds=600) == mix.shares_at(seconds=6000) == {four: 0.25, six: 0.75}
    clock = TrackClock(iterations={four.key: 10}, seconds={four.key: 600.0})
    assert mix.shares_of(clock) == {four: 0.25, six: 0.75}
    assert mix.next_track(clock) == six


def test_on_the_seconds_clock_the_largest_share_plays_first() -> None:
    mix = TrackMix(MixConfig(tracks=("3/komi/standard", "4/komi/standard"), shares=(1, 3)),
                   Rules(6))
    assert mix.next_track(TrackClock()) == mix.tracks[1]


def test_a_track_clock_knows_its_means() -> None:
    clock = TrackClock()
    assert clock.seconds_per_iteration("a") == 0.0 and clock.time_shares() == {}
    clock.add("a", 3.0)
    clock.add("a", 5.0)
    clock.add("b", 8.0)
    assert clock.seconds_per_iteration("a") == 4.0
    assert clock.seconds_per_iteration("c") == pytest.approx(16.0 / 3)  # the mean of all
    assert clock.time_shares() == {"a": 0.5, "b": 0.5}
    assert clock.total_iterations == 3 and clock.total_seconds == 16.0


def test_a_clock_counts_the_tasks_in_flight_ahead_on_a_copy() -> None:
    clock = TrackClock(iterations={"a": 2, "b": 1}, seconds={"a": 6.0, "b": 9.0})
    ahead = clock.ahead(["a", "a", "c"])
    assert clock.iterations == {"a": 2, "b": 1} and clock.seconds == {"a": 6.0, "b": 9.0}
    assert ahead.iterations == {"a": 4, "b": 1, "c": 1}
    # a's mean is 3 s; c has none, so it counts the mean of all so far (21 s over 5)
    assert ahead.seconds == {"a": 12.0, "b": 9.0, "c": pytest.approx(21.0 / 5)}
    # before any play each task counts one unit, so the next task goes to the other track
    mix = TrackMix(MixConfig(tracks=("3/komi/standard", "4/komi/standard"), shares=(1, 1)),
                   Rules(6))
    first = mix.next_track(TrackClock())
    second = mix.next_track(TrackClock().ahead([first.key]))
    assert {first, second} == set(mix.tracks)


@pytest.mark.parametrize("workers", [2, 3, 8])
def test_planning_past_the_tasks_in_flight_keeps_the_time_shares(workers) -> None:
    """Property: with several workers, each new task planned on the clock with the tasks in
    flight counted ahead, and tasks finishing in any order, the time shares still approach
    the targets."""
    import numpy as np
    generator = np.random.default_rng(workers)
    tracks = ("3/komi/standard", "6/komi/standard", "10/komi/standard")
    mix = TrackMix(MixConfig(tracks=tracks, shares=(1, 3, 2)), Rules(6))
    cost = {"side3-komi-standard": 1.0, "side6-komi-standard": 8.0,
            "side10-komi-standard": 40.0}
    clock = TrackClock()
    in_flight = []
    for _ in range(3000):
        while len(in_flight) < workers:
            in_flight.append(mix.next_track(clock.ahead(in_flight)).key)
        done = in_flight.pop(int(generator.integers(len(in_flight))))
        clock.add(done, cost[done] * generator.uniform(0.8, 1.25))
    shares = clock.time_shares()
    assert shares["side3-komi-standard"] == pytest.approx(1 / 6, abs=0.03)
    assert shares["side6-komi-standard"] == pytest.approx(3 / 6, abs=0.03)
    assert shares["side10-komi-standard"] == pytest.approx(2 / 6, abs=0.04)


def test_an_empty_mix_is_the_run_s_own_rules() -> None:
    mix = TrackMix(MixConfig(), Rules(5, "nokomi", "longest"))
    assert mix.tracks == [Track(5, "nokomi", "longest")]
    assert mix.next_track({}) == mix.tracks[0]
    assert mix.next_track(TrackClock()) == mix.tracks[0]


@pytest.mark.parametrize("values, message", [
    ({"tracks": ("4/komi/standard", "4/komi/standard")}, "twice"),
    ({"tracks": ("11/komi/standard",)}, "side"),
    ({"tracks": ("4/komi",)}, "side/game_type/scoring"),
    ({"tracks": ("4/komi/fancy",)}, "scoring"),
    ({"tracks": ("4/komi/standard",), "shares": (1, 2)}, "one share per track"),
    ({"tracks": ("4/komi/standard",), "shares": (-1,)}, ">= 0"),
    ({"tracks": ("4/komi/standard", "5/komi/standard"), "final_shares": (0, 0)}, "all be 0"),
    ({"schedule_iterations": -1, "clock": "iterations"}, "schedule_iterations"),
    ({"schedule_minutes": -1.0}, "schedule_minutes"),
    ({"schedule_minutes": float("nan")}, "schedule_minutes"),
    ({"clock": "moves"}, "mix.clock"),
    ({"schedule_iterations": 10}, "mix.schedule_minutes with mix.clock=seconds"),
    ({"clock": "iterations", "schedule_minutes": 5.0}, "mix.schedule_iterations with"),
])
def test_bad_mixes_are_refused_naming_the_field(values, message) -> None:
    with pytest.raises(ValueError, match=message):
        MixConfig(**values)


def test_a_mixed_run_plays_each_track_by_its_share_with_its_own_fair_komi(tmp_path) -> None:
    events = []
    config = _config(tmp_path / "run", "iterations=8", "checkpoint_every=4")
    summary = train_loop(config, on_checkpoint=events.append)
    tracks = [read_shard_meta(path).track for path in list_shards(tmp_path / "run" / "shards")]
    counts = Counter(str(track) for track in tracks)
    assert counts == {"2/komi/standard": 2, "3/nokomi/standard": 2, "3/double/longest": 4}
    assert summary["track_iterations"] == {"side2-komi-standard": 2, "side3-nokomi-standard": 2,
                                           "side3-double-longest": 4}
    assert set(summary["fair_komis"]) == set(summary["track_iterations"])
    assert summary["fair_komis"]["side3-nokomi-standard"] == 0.0  # no komi in nokomi
    checkpoint = load_checkpoint(latest_checkpoint(tmp_path / "run" / "checkpoints"))
    assert checkpoint.extra["tracks"] == ["2/komi/standard", "3/nokomi/standard",
                                          "3/double/longest"]
    assert checkpoint.extra["fair_komis"] == summary["fair_komis"]
    assert build_network(checkpoint).side is None  # the size-general net: no home board
    assert [event.counters.iteration for event in events] == [4, 8]
    assert events[-1].tracks == tuple(Track.parse(t) for t in checkpoint.extra["tracks"])
    assert events[-1].fair_komis == summary["fair_komis"]


def test_a_resumed_mixed_run_continues_exactly(tmp_path) -> None:
    straight = _config(tmp_path / "straight", "iterations=6", "checkpoint_every=1")
    train_loop(straight)
    first = _config(tmp_path / "split", "iterations=3", "checkpoint_every=1")
    train_loop(first)
    resumed = _config(tmp_path / "split", "iterations=6", "checkpoint_every=1", "resume=true")
    summary = train_loop(resumed)
    assert summary["resumed_from_iteration"] == 3
    names = [[read_shard_meta(p).track for p in list_shards(tmp_path / run / "shards")]
             for run in ("straight", "split")]
    assert names[0] == names[1]
    weights = [load_checkpoint(latest_checkpoint(tmp_path / run / "checkpoints")).model_state
               for run in ("straight", "split")]
    for key in weights[0]:
        assert torch.equal(weights[0][key], weights[1][key]), key


def test_batch_cells_gives_small_boards_more_games_at_once_within_bounds(tmp_path) -> None:
    config = _config(tmp_path / "run", "games_per_iteration=4", "selfplay.games_in_batch=2",
                     "batch_cells=76")
    cells = {side: Rules(side).board.num_cells for side in (2, 3, 6)}  # 7, 19, 91
    assert track_games(config, cells[6]) == (4, 2)  # 2 x 91 cells already exceed 76
    assert track_games(config, cells[3]) == (8, 4)  # scale 76 / (2 x 19) = 2
    assert track_games(config, 1) == (4 * MAX_GAMES_SCALE, 2 * MAX_GAMES_SCALE)  # the bound
    plain = _config(tmp_path / "plain", "games_per_iteration=4", "selfplay.games_in_batch=2")
    assert track_games(plain, cells[2]) == (4, 2)  # 0 = the same games on every board
    with pytest.raises(ValueError, match="batch_cells"):
        _config(tmp_path / "bad", "batch_cells=-1")


def test_a_mixed_run_with_batch_cells_writes_more_games_for_the_smaller_board(tmp_path) -> None:
    config = _config(tmp_path / "run", "iterations=4", "checkpoint_every=4",
                     "games_per_iteration=2", "selfplay.games_in_batch=2", "batch_cells=76")
    train_loop(config)
    games = {str(meta.track): meta.num_games
             for meta in map(read_shard_meta, list_shards(tmp_path / "run" / "shards"))}
    # side 2 (7 cells): 76 / (2 x 7) = 5.4 -> 11 games; side 3 (19 cells): 2 -> 4 games
    assert games == {"2/komi/standard": 11, "3/nokomi/standard": 4, "3/double/longest": 4}


def test_a_run_on_the_seconds_clock_keeps_each_track_s_time_across_a_resume(
        tmp_path, capsys) -> None:
    first = _config(tmp_path / "run", "iterations=3", "checkpoint_every=1", "mix.clock=seconds")
    summary = train_loop(first)
    seconds = summary["track_seconds"]
    assert set(seconds) <= set(summary["track_iterations"]) and len(seconds) >= 2
    assert all(value > 0 for value in seconds.values())
    checkpoint = load_checkpoint(latest_checkpoint(tmp_path / "run" / "checkpoints"))
    assert checkpoint.extra["track_seconds"] == seconds
    resumed = _config(tmp_path / "run", "iterations=5", "checkpoint_every=1",
                      "mix.clock=seconds", "resume=true")
    capsys.readouterr()
    again = train_loop(resumed)
    header = capsys.readouterr().err
    assert "shares of self-play time" in header and "so far by side" in header
    assert sum(again["track_iterations"].values()) == 5
    for key, value in seconds.items():  # the clock went on from where it stood
        assert again["track_seconds"][key] >= value
    assert sum(again["track_seconds"].values()) > sum(seconds.values())


def test_a_checkpoint_without_track_seconds_starts_the_clock_at_zero() -> None:
    from catena_zero.pipeline.resume import loop_state_of

    class Old:
        counters = None
        extra = {"fair_komis": {}, "track_iterations": {"side4-komi-standard": 3}}

    state = loop_state_of(Old())
    assert state.track_iterations == {"side4-komi-standard": 3} and state.track_seconds == {}
    state.clock.add("side4-komi-standard", 2.5)
    assert state.track_iterations["side4-komi-standard"] == 4
    assert state.track_seconds == {"side4-komi-standard": 2.5}
