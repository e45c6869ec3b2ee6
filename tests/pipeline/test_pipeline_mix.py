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
from catena_zero.pipeline.tracks import MixConfig, TrackMix
from catena_zero.rules import Rules, Track
from catena_zero.train import build_network, latest_checkpoint, load_checkpoint

MIX = "mix.tracks=[2/komi/standard,3/nokomi/standard,3/double/longest]"


def _config(run_dir: Path, *overrides: str):
    return build_config(compose("train", ["preset=tiny", f"run_dir={run_dir}",
                                          "tensorboard=false", MIX, "mix.shares=[1,1,2]",
                                          *overrides]))


def test_shares_follow_the_schedule_and_iterations_follow_the_shares() -> None:
    mix = TrackMix(MixConfig(tracks=("4/komi/standard", "6/komi/standard"), shares=(3, 1),
                             final_shares=(1, 3), schedule_iterations=100), Rules(6))
    four, six = mix.tracks
    assert mix.shares_at(0) == {four: 0.75, six: 0.25}
    assert mix.shares_at(50) == {four: 0.5, six: 0.5}
    assert mix.shares_at(100) == mix.shares_at(1000) == {four: 0.25, six: 0.75}
    played: Counter = Counter()
    for _ in range(400):
        played[mix.next_track(0, played).key] += 1
    assert played == {four.key: 300, six.key: 100}  # exactly the shares, never drifting
    fixed = TrackMix(MixConfig(tracks=("4/komi/standard", "6/komi/standard"),
                               final_shares=(0, 1)), Rules(6))
    assert fixed.shares_at(10**6)[four] == 0.5  # no schedule: the starting shares hold


def test_an_empty_mix_is_the_run_s_own_rules() -> None:
    mix = TrackMix(MixConfig(), Rules(5, "nokomi", "longest"))
    assert mix.tracks == [Track(5, "nokomi", "longest")]
    assert mix.next_track(7, {}) == mix.tracks[0]


@pytest.mark.parametrize("values, message", [
    ({"tracks": ("4/komi/standard", "4/komi/standard")}, "twice"),
    ({"tracks": ("11/komi/standard",)}, "side"),
    ({"tracks": ("4/komi",)}, "side/game_type/scoring"),
    ({"tracks": ("4/komi/fancy",)}, "scoring"),
    ({"tracks": ("4/komi/standard",), "shares": (1, 2)}, "one share per track"),
    ({"tracks": ("4/komi/standard",), "shares": (-1,)}, ">= 0"),
    ({"tracks": ("4/komi/standard", "5/komi/standard"), "final_shares": (0, 0)}, "all be 0"),
    ({"schedule_iterations": -1}, "schedule_iterations"),
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
