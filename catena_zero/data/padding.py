"""Samples of several board sides laid out in one grid, for one network call (training on
mixed boards, as KataGo trains one net on many board sizes).

A side-n sample's planes [P, 2n-1, 2n-1] go to the top-left of the batch's G x G grid
(G = 2 * largest side - 1, zeros elsewhere); its policy target and legal mask to the grid
positions row * G + col of its cells with the button last ([G*G + 1]); its ownership target
to [G*G]. Off-board entries are 0 / illegal, so the losses read each sample's own cells
(`cell_mask`), and the net masks each position with its own board (`sides`).

Example::

    from catena_zero.data import MixedBatch
    from catena_zero.data.padding import pad_samples
    padded = pad_samples(MixedBatch([side3_samples, side6_samples]))
    padded.samples.planes.shape          # [N, P, 11, 11]
    padded.samples.policy_target.shape   # [N, 122]
    padded.sides                         # int64 [N]: 3, ..., 3, 6, ..., 6
    padded.cell_mask()                   # bool [N, 121]: each row's own cells
    padded.part(3).equals(side3_samples) # True: the layout is lossless
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from catena_zero.data.samples import FIELDS, MixedBatch, Samples
from catena_zero.rules import get_board

_SCALAR_FIELDS = ("globals", "value_target", "score_target", "weight")


def padded_cell_index(side: int, grid_size: int) -> np.ndarray:
    """int64 [C]: grid positions row * G + col of the side-n board's cells in a G x G grid."""
    board = get_board(side)
    if grid_size < board.grid_size:
        raise ValueError(f"a {grid_size}x{grid_size} grid cannot hold the side-{side} board")
    return board.coords[:, 1] * grid_size + board.coords[:, 0]


@dataclass
class PaddedSamples:
    """Samples of several board sides in one G x G grid layout (see the module docstring).

    `samples` is a Samples whose cells are the G * G grid positions (planes [N, P, G, G],
    policy_target / legal_mask [N, G*G + 1], ownership_target [N, G*G]); `sides` int64 [N] is
    each row's board side.
    """

    samples: Samples
    sides: np.ndarray

    def __post_init__(self) -> None:
        self.sides = np.asarray(self.sides, dtype=np.int64)
        if self.sides.shape != (len(self.samples),):
            raise ValueError(f"PaddedSamples needs one side per sample: {self.sides.shape} "
                             f"for {len(self.samples)} samples")
        grid = self.grid_size
        if self.samples.num_cells != grid * grid:
            raise ValueError(f"padded samples must hold {grid * grid} grid cells, "
                             f"got {self.samples.num_cells}")
        if self.sides.size and (self.sides.min() < 2 or 2 * self.sides.max() - 1 > grid):
            raise ValueError(f"sides {self.sides.min()}..{self.sides.max()} do not fit the "
                             f"{grid}x{grid} grid")

    def __len__(self) -> int:
        return len(self.samples)

    @property
    def grid_size(self) -> int:
        return int(self.samples.planes.shape[2])

    def cell_mask(self) -> np.ndarray:
        """bool [N, G*G]: the grid positions of each row's own board."""
        grid = self.grid_size
        mask = np.zeros((len(self), grid * grid), dtype=bool)
        for side in np.unique(self.sides):
            rows = np.flatnonzero(self.sides == side)
            mask[np.ix_(rows, padded_cell_index(int(side), grid))] = True
        return mask

    def take(self, index) -> PaddedSamples:
        return PaddedSamples(self.samples.take(index), self.sides[index])

    def part(self, side: int) -> Samples:
        """The rows of side `side`, back in their own board's layout."""
        rows = np.flatnonzero(self.sides == side)
        samples = self.samples.take(rows)
        board = get_board(side)
        cells = padded_cell_index(side, self.grid_size)
        actions = np.append(cells, self.grid_size ** 2)
        size = board.grid_size
        return Samples(
            planes=np.ascontiguousarray(samples.planes[:, :, :size, :size]),
            policy_target=samples.policy_target[:, actions],
            legal_mask=samples.legal_mask[:, actions],
            ownership_target=samples.ownership_target[:, cells],
            **{name: getattr(samples, name) for name in _SCALAR_FIELDS},
        )


def pad_samples(parts: MixedBatch | Sequence[Samples],
                grid_size: int | None = None) -> PaddedSamples:
    """Lay out parts of (possibly) different board sides in one grid, in their order.

    `grid_size` G defaults to the largest part's grid. Every part must lie on its own board
    (`Samples.side`) and hold as many planes and globals as the others.
    """
    parts = parts.parts if isinstance(parts, MixedBatch) else list(parts)
    if not parts:
        raise ValueError("pad_samples needs at least one Samples")
    sides = [part.side for part in parts]
    grid = 2 * max(sides) - 1 if grid_size is None else int(grid_size)
    first = parts[0]
    for position, part in enumerate(parts[1:], start=1):
        for name, axis in (("planes", 1), ("globals", 1)):
            if getattr(part, name).shape[axis] != getattr(first, name).shape[axis]:
                raise ValueError(f"pad_samples: part {position} has {name} shape "
                                 f"{getattr(part, name).shape[1:]}, part 0 has "
                                 f"{getattr(first, name).shape[1:]}")
    padded = [_pad_part(part, side, grid) for part, side in zip(parts, sides, strict=True)]
    joined = {name: np.concatenate([getattr(part, name) for part in padded]) for name in FIELDS}
    row_sides = np.repeat(np.asarray(sides, dtype=np.int64), [len(part) for part in parts])
    return PaddedSamples(Samples(**joined), row_sides)


def _pad_part(part: Samples, side: int, grid: int) -> Samples:
    cells = padded_cell_index(side, grid)
    count, num_planes, size, _ = part.planes.shape
    planes = np.zeros((count, num_planes, grid, grid), dtype=part.planes.dtype)
    planes[:, :, :size, :size] = part.planes
    actions = np.append(cells, grid * grid)

    def scatter(values: np.ndarray, columns: np.ndarray, width: int) -> np.ndarray:
        out = np.zeros((count, width), dtype=values.dtype)
        out[:, columns] = values
        return out

    return Samples(
        planes=planes,
        policy_target=scatter(part.policy_target, actions, grid * grid + 1),
        legal_mask=scatter(part.legal_mask, actions, grid * grid + 1),
        ownership_target=scatter(part.ownership_target, cells, grid * grid),
        **{name: getattr(part, name) for name in _SCALAR_FIELDS},
    )
