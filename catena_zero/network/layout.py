"""Where the cells of each hex board sit in the square grid the net convolves over.

A side-n board is the hexagon of cells (col, row), 0 <= col, row <= 2n - 2, |col - row| <= n - 1,
in an H x H grid, H = 2n - 1, cell i at flat position row * H + col, cells ordered by (col, row)
(the order of `catena_zero.rules.Board`; the network does not import the rules, so the few
lines of geometry are repeated here and checked against the rules by the tests).

A padded batch mixes sides: every position's H x H planes sit at the top-left of one G x G grid
(G >= 2 * largest side - 1), the rest zero. Hex adjacency in these axial coordinates is a
translation-invariant set of offsets, so the top-left placement keeps each board's geometry;
the net masks every layer with each position's own board.

Example::

    from catena_zero.network.layout import hex_cell_grid_index, pad_planes, padded_action_index
    hex_cell_grid_index(4)            # int64 [37] flat positions in the 7 x 7 grid
    hex_cell_grid_index(4, 19)        # the same cells in a 19 x 19 grid
    padded_action_index(4, 19)        # [38]: those positions, then 361 for the button
    pad_planes(planes, 19)            # [B, P, 7, 7] -> [B, P, 19, 19], top-left
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from torch import nn

MIN_SIDE = 2
MAX_SIDE = 10


def check_side(side) -> int:
    if isinstance(side, bool) or not isinstance(side, int | np.integer):
        raise ValueError(f"board side must be an integer from {MIN_SIDE} to {MAX_SIDE}, "
                         f"got {side!r}")
    if not MIN_SIDE <= int(side) <= MAX_SIDE:
        raise ValueError(f"board side must be from {MIN_SIDE} to {MAX_SIDE}, got {side}")
    return int(side)


def num_cells_of_side(side: int) -> int:
    """Cells of the side-n hexagon: 3n(n - 1) + 1."""
    return 3 * side * (side - 1) + 1


def side_of_grid(grid_size: int) -> int | None:
    """The side n whose board fills an H x H grid (H = 2n - 1), or None for no board side."""
    if grid_size % 2 == 0 or not MIN_SIDE <= (grid_size + 1) // 2 <= MAX_SIDE:
        return None
    return (grid_size + 1) // 2


@functools.cache
def _cell_grid_index(side: int, grid_size: int) -> np.ndarray:
    native = 2 * side - 1
    cells = [(col, row) for col in range(native) for row in range(native)
             if abs(col - row) <= side - 1]
    index = np.array([row * grid_size + col for col, row in cells], dtype=np.int64)
    index.flags.writeable = False
    return index


def hex_cell_grid_index(side: int, grid_size: int | None = None) -> np.ndarray:
    """int64 [C]: flat position row * G + col of each cell of the side-n board at the top-left
    of a G x G grid (G = 2n - 1 by default)."""
    side = check_side(side)
    grid_size = 2 * side - 1 if grid_size is None else int(grid_size)
    if grid_size < 2 * side - 1:
        raise ValueError(f"a {grid_size}x{grid_size} grid cannot hold the side-{side} board "
                         f"(needs {2 * side - 1})")
    return _cell_grid_index(side, grid_size).copy()


def padded_action_index(side: int, grid_size: int) -> np.ndarray:
    """int64 [A] = [C + 1]: where each action of the side-n board sits in a padded policy row
    [G * G + 1] (cells at their grid positions, the button last, at G * G)."""
    return np.append(hex_cell_grid_index(side, grid_size), grid_size * grid_size)


def pad_planes(planes, grid_size: int):
    """[B, P, H, H] -> [B, P, G, G] with the planes at the top-left and zeros elsewhere
    (numpy arrays stay numpy and keep their dtype, tensors stay tensors)."""
    size = planes.shape[-1]
    if size > grid_size:
        raise ValueError(f"cannot pad a {size}x{size} grid into a {grid_size}x{grid_size} one")
    if size == grid_size:
        return planes
    extra = grid_size - size
    if isinstance(planes, torch.Tensor):
        return nn.functional.pad(planes, (0, extra, 0, extra))
    return np.pad(planes, ((0, 0), (0, 0), (0, extra), (0, extra)))


class HexLayouts(nn.Module):
    """Every side's board mask and cell index as (non-persistent) buffers, so they move with
    the net (`.to`), are copied with it and are never part of its weights.

    `mask(side)` [1, 1, H, H] float, `cell_index(side)` int64 [C]; `padded(sides, G)` gives the
    per-position masks [B, 1, G, G] and cell counts [B, 1] of a padded batch.
    """

    def __init__(self) -> None:
        super().__init__()
        for side in range(MIN_SIDE, MAX_SIDE + 1):
            size = 2 * side - 1
            index = torch.from_numpy(hex_cell_grid_index(side).copy())
            mask = torch.zeros(size * size)
            mask[index] = 1.0
            self.register_buffer(f"index_{side}", index, persistent=False)
            self.register_buffer(f"mask_{side}", mask.view(1, 1, size, size), persistent=False)
        self._padded_cache: dict = {}

    def mask(self, side: int) -> torch.Tensor:
        return getattr(self, f"mask_{side}")

    def cell_index(self, side: int) -> torch.Tensor:
        return getattr(self, f"index_{side}")

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_padded_cache"] = {}
        return state

    def padded(self, sides: torch.Tensor, grid_size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(masks float [B, 1, G, G], cell counts float [B, 1]) for int64 `sides` [B] (on any
        device) placed at the top-left of a G x G grid."""
        device = self.mask_2.device
        key = (grid_size, device)
        table = self._padded_cache.get(key)
        if table is None:
            # Ordinary tensors even when first asked under inference_mode: a training step may
            # use the same table later and autograd cannot save inference tensors.
            with torch.inference_mode(False), torch.no_grad():
                largest = min(MAX_SIDE, (grid_size + 1) // 2)
                masks = torch.zeros(largest + 1, 1, grid_size, grid_size, device=device)
                counts = torch.zeros(largest + 1, 1, device=device)
                for side in range(MIN_SIDE, largest + 1):
                    native = self.mask(side)
                    size = native.shape[-1]
                    masks[side, :, :size, :size] = native[0]
                    counts[side] = float(num_cells_of_side(side))
            table = (masks, counts)
            self._padded_cache[key] = table
        masks, counts = table
        sides = sides.to(device)
        return masks[sides], counts[sides]
