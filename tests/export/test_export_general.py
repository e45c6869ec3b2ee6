"""Format version 3: a size-general network listing several tracks plays every side; its
metadata is checked like version 2's; version-2 files keep loading."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.export.model_file import (
    FORMAT_VERSION,
    METADATA_MEMBER,
    ModelFileError,
    ModelTrack,
    load_model_file,
    metadata_for,
    read_metadata,
    save_model_file,
)
from catena_zero.rules import Engine, Rules, Track, observe
from tests.export.archives import rewrite_metadata
from tests.export.tiny_model import (
    GENERAL_TRACKS,
    tiny_general_model_file,
    tiny_general_network,
    tiny_model_file,
    tiny_network,
)


@pytest.fixture(scope="module")
def general_path() -> Path:
    torch.set_num_threads(1)
    return tiny_general_model_file(program=False)


def _observations(side: int, count: int = 3, seed: int = 0):
    engine = Engine(Rules(side=side))
    states = engine.new_games(count, komi=np.arange(count))
    engine.step(states, engine.random_actions(states, np.random.default_rng(seed)))
    return observe(engine, states)


def test_a_general_file_lists_its_tracks_and_has_no_home_board(general_path: Path) -> None:
    with zipfile.ZipFile(general_path) as archive:
        values = json.loads(archive.read(METADATA_MEMBER))
    assert values["format_version"] == FORMAT_VERSION == 3
    assert not {"grid_size", "num_cells", "num_actions"} & set(values)
    assert [(t["side"], t["game_type"], t["elo"], t["fair_komi"]) for t in values["tracks"]] == [
        (3, "komi", 120.0, 4.5), (4, "nokomi", None, None)]
    meta = read_metadata(general_path)
    assert meta.is_general and meta.home_side is None and meta.side == 3
    assert [str(track) for track in meta.tracks] == list(GENERAL_TRACKS)
    assert meta.track_of("4/nokomi/standard").komi_range == (0, 0)
    assert meta.track_of(Rules(side=7)) is None and meta.track_of(Track(4, "komi",
                                                                        "standard")) is None


def test_a_general_file_plays_every_side_as_the_network_does(general_path: Path) -> None:
    model = load_model_file(general_path)
    assert model.network.side is None
    net = tiny_general_network()
    for side in range(2, 11):
        planes, globals_ = _observations(side)
        out = model.run(planes, globals_)
        cells = 3 * side * (side - 1) + 1
        assert out["policy_logits"].shape == (3, cells + 1)
        assert out["ownership"].shape == (3, cells)
        with torch.no_grad():
            expected = net(torch.from_numpy(planes), torch.from_numpy(globals_))
        np.testing.assert_allclose(out["policy_logits"], expected.policy_logits.numpy(),
                                   atol=1e-5)
        np.testing.assert_allclose(out["value_logits"], expected.value_logits.numpy(),
                                   atol=1e-5)


def test_a_per_side_file_plays_other_sides_too() -> None:
    """Version-2 files load as before, and their network reads planes of any grid."""
    model = load_model_file(tiny_model_file(3, program=False))
    assert model.metadata.format_version == 2 and model.metadata.home_side == 3
    planes, globals_ = _observations(6)
    with torch.no_grad():
        expected = tiny_network(3)(torch.from_numpy(planes), torch.from_numpy(globals_))
    np.testing.assert_allclose(model.run(planes, globals_)["policy_logits"],
                               expected.policy_logits.numpy(), atol=1e-5)


def test_a_general_program_takes_the_first_tracks_board() -> None:
    model = load_model_file(tiny_general_model_file(), trust_program=True)
    assert model.metadata.program_grid_size == 5  # side 3, the first track
    planes, globals_ = (torch.from_numpy(array) for array in _observations(3))
    with torch.no_grad():
        for want, have in zip(model.network.forward_tuple(planes, globals_)[:4],
                              model.program(planes, globals_), strict=True):
            torch.testing.assert_close(have, want, atol=1e-5, rtol=1e-5)


def test_a_per_side_network_with_several_tracks_is_version_3(tmp_path: Path) -> None:
    net = tiny_network(3, seed=2)
    tracks = [ModelTrack.of("5/komi/quadratic", elo=50.0), ModelTrack.of(Rules(side=3))]
    metadata = metadata_for(net, tracks, network_config=net.config.to_dict())
    assert metadata.format_version == 3 and metadata.grid_size == 5
    save_model_file(net, metadata, tmp_path / "m.pt", program=False)
    model = load_model_file(tmp_path / "m.pt")
    assert model.metadata == metadata and model.metadata.home_side == 3
    assert model.metadata.side == 5 and model.metadata.komi_range == (0, 1000)
    assert model.run(*_observations(5))["policy_logits"].shape == (3, 62)
    # One track that is not the home board's needs version 3 as well.
    other = metadata_for(net, "4/komi/standard", network_config=net.config.to_dict())
    assert other.format_version == 3 and other.grid_size == 5
    with pytest.raises(ValueError, match="give each its Elo"):
        metadata_for(net, ["3/komi/standard", "4/komi/standard"],
                     network_config=net.config.to_dict(), elo=1.0)


def _three_grid_fields(values: dict) -> None:
    values.update(grid_size=5, num_cells=19, num_actions=20)


def _duplicate_first_track(values: dict) -> None:
    values["tracks"].append(dict(values["tracks"][0]))


GENERAL_HOSTILE_METADATA = {
    "no tracks": (lambda values: values.update(tracks=[]), "holds 1..81 tracks"),
    "a repeated track": (_duplicate_first_track, "track 3/komi/standard is listed twice"),
    "82 tracks": (lambda values: values.update(tracks=values["tracks"] * 41),
                  "holds 1..81 tracks"),
    "a track of no rule set": (lambda values: values["tracks"][1].update(scoring="area"),
                               "not a valid rule set"),
    "a track not an object": (lambda values: values["tracks"].append([4, "komi"]),
                              "a track must be an object"),
    "half a home board": (lambda values: values.update(grid_size=5),
                          "gives grid_size but not num_cells, num_actions"),
    "a grid of no side": (lambda values: _three_grid_fields(values) or values.update(
        grid_size=6), "grid_size 6 is not 2n - 1"),
    "cells of another side": (lambda values: _three_grid_fields(values) or values.update(
        grid_size=7), "do not fit side 4"),
    "elo not finite": (lambda values: values["tracks"][0].update(elo="inf"),
                       "elo must be number"),
    "version 2 with two tracks": (lambda values: _three_grid_fields(values) or values.update(
        format_version=2), "format version 2 holds exactly one track"),
    "version 2 without a board": (lambda values: values.update(
        format_version=2, tracks=values["tracks"][:1]), "metadata lacks grid_size"),
}


@pytest.mark.parametrize("case", list(GENERAL_HOSTILE_METADATA))
def test_hostile_version_3_metadata_is_refused(general_path: Path, tmp_path: Path,
                                               case: str) -> None:
    change, message = GENERAL_HOSTILE_METADATA[case]
    damaged = tmp_path / "hostile.pt"
    rewrite_metadata(general_path, damaged, change)
    with pytest.raises(ModelFileError) as caught:
        load_model_file(damaged)
    text = str(caught.value)
    assert str(damaged) in text and "\n" not in text and message in text, text


def test_a_home_board_added_to_general_weights_changes_nothing(general_path: Path,
                                                               tmp_path: Path) -> None:
    """A valid home board stated for general weights is harmless: the weights fit the
    per-side network too (no grid-dependent tensor), which computes the same outputs."""
    changed = tmp_path / "with-board.pt"
    rewrite_metadata(general_path, changed, _three_grid_fields)
    model = load_model_file(changed)
    assert model.metadata.home_side == 3 and model.network.side == 3
    planes, globals_ = _observations(3)
    np.testing.assert_allclose(model.run(planes, globals_)["policy_logits"],
                               load_model_file(general_path).run(planes, globals_)[
                                   "policy_logits"], atol=1e-5)
