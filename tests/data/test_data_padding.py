"""Mixed batches: padding samples of several sides into one grid, per-board symmetries."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.data import (
    MixedBatch,
    PaddedSamples,
    Samples,
    pad_samples,
    random_symmetries,
    symmetry_images,
)
from catena_zero.network import pad_planes, padded_action_index
from catena_zero.rules import get_board
from tests.data.test_data_samples import random_samples


def mixed_parts() -> list[Samples]:
    return [random_samples(3, 5, seed=1), random_samples(6, 4, seed=2),
            random_samples(4, 3, seed=3), random_samples(3, 2, seed=4)]


def test_padding_places_each_board_top_left_and_is_lossless() -> None:
    parts = mixed_parts()
    padded = pad_samples(MixedBatch(parts))
    grid = 11
    assert padded.grid_size == grid and len(padded) == sum(len(part) for part in parts)
    assert padded.sides.tolist() == [3] * 5 + [6] * 4 + [4] * 3 + [3] * 2
    samples = padded.samples
    assert samples.planes.shape == (14, 4, grid, grid)
    assert samples.policy_target.shape == samples.legal_mask.shape == (14, grid * grid + 1)
    assert samples.ownership_target.shape == (14, grid * grid)
    samples.check_values()  # still distributions, no mass off the board
    start = 0
    for part in parts:
        rows = slice(start, start + len(part))
        start += len(part)
        # The layout the net reads: its own padding helper and action index.
        np.testing.assert_array_equal(samples.planes[rows], pad_planes(part.planes, grid))
        actions = padded_action_index(part.side, grid)
        np.testing.assert_array_equal(samples.policy_target[rows][:, actions], part.policy_target)
        np.testing.assert_array_equal(samples.legal_mask[rows][:, actions], part.legal_mask)
        np.testing.assert_array_equal(samples.ownership_target[rows][:, actions[:-1]],
                                      part.ownership_target)
        cells = padded.cell_mask()[rows]
        assert cells.sum(axis=1).tolist() == [get_board(part.side).num_cells] * len(part)
        assert not samples.legal_mask[rows][:, :-1][~cells].any()
    assert padded.part(3).equals(Samples.concatenate([parts[0], parts[3]]))
    assert padded.part(6).equals(parts[1]) and padded.part(4).equals(parts[2])
    wider = pad_samples(parts[:1], grid_size=19)
    assert wider.grid_size == 19 and wider.part(3).equals(parts[0])
    assert padded.take(np.array([5, 0])).sides.tolist() == [6, 3]


def test_bad_mixed_batches_are_refused() -> None:
    parts = mixed_parts()
    with pytest.raises(ValueError, match="part 1 has planes"):
        pad_samples([parts[0], random_samples(4, 2, num_planes=5)])
    with pytest.raises(ValueError, match="cannot hold the side-6 board"):
        pad_samples(parts, grid_size=9)
    with pytest.raises(ValueError, match="not laid out on one board"):
        MixedBatch([pad_samples(parts).samples])
    with pytest.raises(ValueError, match="non-empty"):
        MixedBatch([])
    with pytest.raises(ValueError, match="labels"):
        MixedBatch(parts, labels=["a"])
    with pytest.raises(ValueError, match="one side per sample"):
        PaddedSamples(pad_samples(parts).samples, np.array([3]))
    assert random_samples(5, 1).side == 5


def test_symmetries_of_a_mixed_batch_use_each_boards_own_tables() -> None:
    """Each part under its own board's symmetries, drawn from the rng in part order, as if
    every part were augmented alone."""
    parts = mixed_parts()
    mixed = random_symmetries(MixedBatch(parts, labels=list("abcd")), None,
                              np.random.default_rng(7))
    assert isinstance(mixed, MixedBatch) and mixed.labels == list("abcd")
    rng = np.random.default_rng(7)
    for part, image in zip(parts, mixed.parts, strict=True):
        board = get_board(part.side)
        which = rng.integers(0, 12, size=len(part))
        assert image.equals(symmetry_images(part, board, which))
    # Padding after the symmetries keeps every image on its own board.
    padded = pad_samples(mixed)
    padded.samples.check_values()
    on_board = padded.cell_mask()
    assert not padded.samples.planes.reshape(len(padded), 4, -1)[~np.repeat(
        on_board[:, None], 4, axis=1)].any()
    alone = random_symmetries(parts[1], None, np.random.default_rng(3))
    assert alone.equals(random_symmetries(parts[1], get_board(6), np.random.default_rng(3)))
