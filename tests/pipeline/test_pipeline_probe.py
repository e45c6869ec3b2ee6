"""The strength probe: a few games against baselines on each track, at its fair komi."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.pipeline.config import LoopConfig, ProbeConfig
from catena_zero.pipeline.probe import probe_due, probed_tracks, run_probe
from catena_zero.pipeline.steps import TrackPlayers, build_fresh_network, run_tracks
from catena_zero.rules import Track

torch.set_num_threads(1)


def test_the_probe_plays_each_track_against_each_baseline_at_its_fair_komi(tmp_path) -> None:
    config = build_config(compose("train", ["preset=tiny", f"run_dir={tmp_path}"]))
    torch.manual_seed(0)
    players = TrackPlayers(config, build_fresh_network(config), "cpu")
    probe = ProbeConfig(every=1, games=2, baselines=("random", "uct:2"), simulations=2)
    scalars = run_probe(players, run_tracks(config), {"side3-komi-standard": 10.6},
                        config.search, probe, seed=3)
    assert set(scalars) == {"probe/side3-komi-standard/random/win_rate",
                            "probe/side3-komi-standard/uct2/win_rate",
                            "probe/side3-komi-standard/komi", "probe/seconds"}
    assert scalars["probe/side3-komi-standard/komi"] == 11.0  # 10.6 rounded, not komi 0
    assert all(0.0 <= scalars[name] <= 1.0 for name in scalars if name.endswith("win_rate"))
    again = run_probe(players, run_tracks(config), {"side3-komi-standard": 10.6},
                      config.search, probe, seed=3)
    assert {k: v for k, v in again.items() if k != "probe/seconds"} == {
        k: v for k, v in scalars.items() if k != "probe/seconds"}  # seeded


def test_the_probe_is_due_every_k_iterations_and_after_the_last() -> None:
    loop = LoopConfig(probe=ProbeConfig(every=5))
    assert [i for i in range(1, 13) if probe_due(loop, i)] == [5, 10]
    assert probe_due(loop, 12, last=True)
    assert not probe_due(LoopConfig(), 12, last=True)  # off by default


def test_probe_tracks_choose_among_the_run_tracks() -> None:
    tracks = [Track.parse("4/komi/standard"), Track.parse("6/komi/standard"),
              Track.parse("8/komi/standard")]
    chosen = probed_tracks(tracks, ProbeConfig(tracks=("6/komi/standard", "4/komi/standard")))
    assert chosen == tracks[:2]


@pytest.mark.parametrize("settings, message", [
    ({"games": 3}, "probe.games must be an even number"),
    ({"baselines": ("checkpoint:x.pt",)}, "is not a fixed baseline"),
    ({"baselines": ("uct:0",)}, "uct:N with N >= 1"),
    ({"every": -1}, "probe.every must be >= 0"),
    ({"tracks": ("11/komi/standard",)}, "side"),
])
def test_bad_probe_settings_are_refused_in_one_line(settings, message) -> None:
    with pytest.raises(ValueError, match=message):
        ProbeConfig(**settings)


def test_the_presets_probe_cheaply_and_tiny_does_not(tmp_path) -> None:
    def probe_of(preset: str) -> ProbeConfig:
        return build_config(compose("train", [f"preset={preset}",
                                              f"run_dir={tmp_path}"])).loop.probe

    assert probe_of("tiny").every == 0
    general = probe_of("general")
    assert general.every == 5 and general.tracks == ("4/komi/standard", "6/komi/standard")
    assert dataclasses.replace(probe_of("side4"), every=0) == ProbeConfig()
