"""Training samples: a dataclass of batch-first numpy arrays, and symmetry augmentation.

Everything is from the side to move's view. Planes are 0/1 and stored as uint8
(8x smaller than float32; shards pack them further into bits).

Example::

    import numpy as np
    from catena_zero.data import Samples, augment_with_symmetries, wdl_from_outcome

    planes, globals_ = observe(engine, states)               # float32 [B, P, H, W], [B, G]
    samples = Samples.create(
        planes=planes, globals=globals_,
        policy_target=search_output.policy_target,           # [B, A], rows sum to 1
        value_target=wdl_from_outcome(outcome),              # outcome [B] in {1, 0, -1}
        score_target=margin_for_mover,                       # [B] points
        ownership_target=ownership,                          # int8 [B, C] in {1, 0, -1}
        weight=np.where(full_search, 1.0, 0.0),              # playout cap: cheap searches 0
        legal_mask=engine.legal_actions(states),             # bool [B, A]
    )
    samples = augment_with_symmetries(samples, board, range(12))   # 12x the samples
    everything = Samples.concatenate([samples_a, samples_b])

    # Samples of several boards train together: one part per board, each in its own layout,
    # padded for the net by `catena_zero.data.padding.pad_samples` (the Trainer does it).
    batch = MixedBatch([side4_samples, side6_samples])
    batch = random_symmetries(batch, None, rng)      # each part under its own board's symmetries
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from catena_zero.rules import get_board

FIELDS = (
    "planes",
    "globals",
    "policy_target",
    "value_target",
    "score_target",
    "ownership_target",
    "weight",
    "legal_mask",
)
DTYPES = {
    "planes": np.uint8,
    "globals": np.float32,
    "policy_target": np.float32,
    "value_target": np.float32,
    "score_target": np.float32,
    "ownership_target": np.int8,
    "weight": np.float32,
    "legal_mask": np.bool_,
}


def wdl_from_outcome(outcome) -> np.ndarray:
    """Outcome [N] from the side to move's view (1 win, 0 draw, -1 loss) -> one-hot [N, 3]
    in the order win / draw / loss (the network's value logits order)."""
    outcome = np.asarray(outcome)
    if outcome.ndim != 1 or not np.isin(outcome, (-1, 0, 1)).all():
        bad = outcome[~np.isin(outcome, (-1, 0, 1))] if outcome.ndim == 1 else outcome.shape
        raise ValueError(f"outcome must be a [N] array of 1/0/-1, got {bad!r}")
    index = np.where(outcome > 0, 0, np.where(outcome == 0, 1, 2))
    return np.eye(3, dtype=np.float32)[index]


@dataclass
class Samples:
    """Training samples, batch first (N samples, A = C + 1 actions).

    Use `Samples.create(...)` to convert dtypes and validate; the constructor validates
    shapes and dtypes only.
    """

    planes: np.ndarray  # uint8 [N, P, H, W] 0/1 input planes
    globals: np.ndarray  # float32 [N, G] global inputs
    policy_target: np.ndarray  # float32 [N, A] search policy, sums to 1, 0 on illegal actions
    value_target: np.ndarray  # float32 [N, 3] win/draw/loss distribution of the side to move
    score_target: np.ndarray  # float32 [N] final margin in points, side to move's view
    ownership_target: np.ndarray  # int8 [N, C] final owner: +1 side to move, -1 opponent, 0 empty
    weight: np.ndarray  # float32 [N] training weight (full search 1, cheap search 0)
    legal_mask: np.ndarray  # bool [N, A] legal actions

    def __post_init__(self) -> None:
        self._check_shapes()

    @classmethod
    def create(
        cls,
        planes,
        globals,
        policy_target,
        value_target,
        score_target,
        ownership_target,
        weight=None,
        legal_mask=None,
    ) -> Samples:
        """Build from any numeric arrays: converts dtypes, checks values, defaults weight to 1
        and legal_mask to policy_target > 0."""
        planes = np.asarray(planes)
        if planes.size and not np.isin(planes, (0, 1)).all():
            bad = np.unique(planes[~np.isin(planes, (0, 1))])[:5]
            raise ValueError(f"planes must be 0/1 (stored as uint8), found values {bad}")
        policy_target = np.asarray(policy_target, dtype=np.float32)
        count = len(planes)
        if weight is None:
            weight = np.ones(count, np.float32)
        if legal_mask is None:
            legal_mask = policy_target > 0
        ownership = np.asarray(ownership_target)
        if ownership.size and not np.isin(ownership, (-1, 0, 1)).all():
            bad = np.unique(ownership[~np.isin(ownership, (-1, 0, 1))])[:5]
            raise ValueError(f"ownership_target must be -1/0/1, found values {bad}")
        samples = cls(
            planes=planes.astype(np.uint8),
            globals=np.asarray(globals, dtype=np.float32),
            policy_target=policy_target,
            value_target=np.asarray(value_target, dtype=np.float32),
            score_target=np.asarray(score_target, dtype=np.float32),
            ownership_target=ownership.astype(np.int8),
            weight=np.asarray(weight, dtype=np.float32),
            legal_mask=np.asarray(legal_mask, dtype=bool),
        )
        samples.check_values()
        return samples

    def _check_shapes(self) -> None:
        for name in FIELDS:
            value = getattr(self, name)
            if not isinstance(value, np.ndarray):
                raise ValueError(
                    f"Samples.{name} must be a numpy array, got {type(value).__name__}"
                )
            if value.dtype != DTYPES[name]:
                raise ValueError(
                    f"Samples.{name} must have dtype {np.dtype(DTYPES[name])}, got {value.dtype}"
                    " (use Samples.create to convert)"
                )
        count = len(self.planes)
        expected_dims = {
            "planes": 4, "globals": 2, "policy_target": 2, "value_target": 2,
            "score_target": 1, "ownership_target": 2, "weight": 1, "legal_mask": 2,
        }
        for name, dims in expected_dims.items():
            value = getattr(self, name)
            if value.ndim != dims or value.shape[0] != count:
                raise ValueError(
                    f"Samples.{name} must be {dims}-d with {count} rows, got shape {value.shape}"
                )
        if self.value_target.shape[1] != 3:
            raise ValueError(f"Samples.value_target must be [N, 3], got {self.value_target.shape}")
        actions = self.policy_target.shape[1]
        if self.legal_mask.shape[1] != actions:
            raise ValueError(
                f"Samples.legal_mask {self.legal_mask.shape} does not match policy_target"
                f" {self.policy_target.shape}"
            )
        if self.ownership_target.shape[1] != actions - 1:
            raise ValueError(
                f"Samples.ownership_target has {self.ownership_target.shape[1]} cells but"
                f" policy_target has {actions} actions (expected cells + 1)"
            )
        if self.planes.shape[2] != self.planes.shape[3]:
            raise ValueError(f"Samples.planes grid must be square, got {self.planes.shape}")

    def check_values(self, tolerance: float = 1e-3) -> None:
        """Value checks (slower than the shape checks): distributions sum to 1, finite, ..."""
        for name in ("globals", "policy_target", "value_target", "score_target", "weight"):
            if not np.isfinite(getattr(self, name)).all():
                raise ValueError(f"Samples.{name} has non-finite values")
        if (self.policy_target < 0).any() or (self.value_target < 0).any():
            raise ValueError("Samples.policy_target and value_target must be >= 0")
        if (self.weight < 0).any():
            raise ValueError("Samples.weight must be >= 0")
        trained = self.weight > 0
        policy_sums = self.policy_target[trained].sum(axis=1)
        bad = np.flatnonzero(np.abs(policy_sums - 1) > tolerance)
        if bad.size:
            row = np.flatnonzero(trained)[bad[0]]
            raise ValueError(
                f"Samples.policy_target row {row} sums to {policy_sums[bad[0]]:.4f}, not 1"
            )
        value_sums = self.value_target.sum(axis=1)
        bad = np.flatnonzero(np.abs(value_sums - 1) > tolerance)
        if bad.size:
            raise ValueError(
                f"Samples.value_target row {bad[0]} sums to {value_sums[bad[0]]:.4f}, not 1"
            )
        illegal_mass = np.where(self.legal_mask, 0.0, self.policy_target).sum(axis=1)
        bad = np.flatnonzero(illegal_mass > tolerance)
        if bad.size:
            raise ValueError(f"Samples.policy_target row {bad[0]} puts mass on illegal actions")

    def __len__(self) -> int:
        return len(self.planes)

    @property
    def num_samples(self) -> int:
        return len(self.planes)

    @property
    def num_cells(self) -> int:
        return self.ownership_target.shape[1]

    @property
    def side(self) -> int:
        """Board side n of samples laid out on their own board: planes on the (2n - 1)-grid and
        3n(n - 1) + 1 cells. ValueError for any other layout (e.g. a padded grid)."""
        size = self.planes.shape[2]
        side = (size + 1) // 2
        if size % 2 == 0 or self.num_cells != 3 * side * (side - 1) + 1:
            raise ValueError(f"samples with {self.num_cells} cells on a {size}x{size} grid are "
                             "not laid out on one board of their own")
        return side

    def take(self, index) -> Samples:
        """Subset/gather along the batch axis (int index array or bool mask)."""
        return Samples(**{name: getattr(self, name)[index] for name in FIELDS})

    def first_planes(self, count: int) -> Samples:
        """The same samples with only the first `count` input planes (for a net trained on an
        older, shorter observation: planes are append-only). ValueError if fewer are held."""
        held = self.planes.shape[1]
        if count > held:
            raise ValueError(f"samples hold {held} input planes, {count} are needed")
        if count == held:
            return self
        values = {name: getattr(self, name) for name in FIELDS}
        values["planes"] = np.ascontiguousarray(self.planes[:, :count])
        return Samples(**values)

    def trained_only(self) -> Samples:
        """The samples with weight > 0 (drops the cheap-search positions)."""
        return self.take(np.flatnonzero(self.weight > 0))

    def planes_float(self) -> np.ndarray:
        """float32 [N, P, H, W] for the network."""
        return self.planes.astype(np.float32)

    @staticmethod
    def concatenate(parts: Iterable[Samples]) -> Samples:
        """Join along the batch axis; all parts must have the same per-sample shapes."""
        parts = list(parts)
        if not parts:
            raise ValueError("Samples.concatenate needs at least one Samples")
        first = parts[0]
        for position, part in enumerate(parts[1:], start=1):
            for name in FIELDS:
                if getattr(part, name).shape[1:] != getattr(first, name).shape[1:]:
                    raise ValueError(
                        f"Samples.concatenate: part {position} has {name} shape"
                        f" {getattr(part, name).shape[1:]}, part 0 has"
                        f" {getattr(first, name).shape[1:]}"
                    )
        joined = {name: np.concatenate([getattr(p, name) for p in parts]) for name in FIELDS}
        return Samples(**joined)

    def equals(self, other: Samples) -> bool:
        return all(np.array_equal(getattr(self, n), getattr(other, n)) for n in FIELDS)

    def replace(self, **changes) -> Samples:
        return dataclasses.replace(self, **changes)


@dataclass
class MixedBatch:
    """One minibatch of several boards or variants: a Samples per part, each on its own board
    (`Samples.side`), in their order. `labels` optionally names each part's source (e.g. the
    replay window's `Track`). `pad_samples` lays them out in one grid for the net.
    """

    parts: list[Samples]
    labels: list | None = None

    def __post_init__(self) -> None:
        self.parts = list(self.parts)
        if not self.parts or not all(isinstance(part, Samples) for part in self.parts):
            raise ValueError("MixedBatch needs a non-empty list of Samples parts")
        for part in self.parts:
            _ = part.side  # each part must lie on one board of its own
        if self.labels is not None and len(self.labels) != len(self.parts):
            raise ValueError(f"MixedBatch has {len(self.parts)} parts but "
                             f"{len(self.labels)} labels")

    def __len__(self) -> int:
        return sum(len(part) for part in self.parts)

    @property
    def sides(self) -> list[int]:
        """Board side of each part."""
        return [part.side for part in self.parts]


def augment_with_symmetries(samples: Samples, board, symmetries: Sequence[int]) -> Samples:
    """Images of `samples` under each board symmetry in `symmetries` (k in 0..11, k = 0 the
    identity), concatenated in that order: k-major, so the result has len(symmetries) * N rows.

    `board` provides `symmetries` [12, C], `action_symmetries` [12, A], `grid_size` and
    `cell_grid_index` [C] (the `catena_zero.rules.Board`). Globals are symmetry invariant.
    """
    symmetries = np.asarray([int(k) for k in symmetries], dtype=np.int64)
    if not symmetries.size:
        raise ValueError("augment_with_symmetries needs at least one symmetry index")
    count = len(samples)
    rows = np.tile(np.arange(count), symmetries.size)
    return symmetry_images(samples.take(rows), board, np.repeat(symmetries, count))


def random_symmetries(samples: Samples | MixedBatch, board,
                      rng: np.random.Generator) -> Samples | MixedBatch:
    """Each sample under its own uniformly drawn board symmetry (training-time augmentation:
    a sample drawn again from the replay window is seen under a fresh image).

    `board`: the samples' board, or None to take it from their side. A MixedBatch maps each
    part with its own board's symmetry tables (`board` is not needed), before any padding.
    """
    if isinstance(samples, MixedBatch):
        parts = [random_symmetries(part, get_board(part.side), rng) for part in samples.parts]
        return MixedBatch(parts, samples.labels)
    if board is None:
        board = get_board(samples.side)
    num_symmetries = np.asarray(board.symmetries).shape[0]
    return symmetry_images(samples, board, rng.integers(0, num_symmetries, size=len(samples)))


def symmetry_images(samples: Samples, board, which: np.ndarray) -> Samples:
    """Row i of `samples` under board symmetry `which[i]`.  # which [N] int in 0..11

    Planes move with the board's cells inside the grid, policy and legal mask by
    `action_symmetries` (the button stays), ownership by `symmetries`; globals and scalar
    targets are symmetry invariant.
    """
    symmetry_table = np.asarray(board.symmetries)  # [12, C]
    action_table = np.asarray(board.action_symmetries)  # [12, A]
    which = np.asarray(which, dtype=np.int64)
    if which.shape != (len(samples),):
        raise ValueError(f"symmetry_images needs one symmetry per sample: got shape "
                         f"{which.shape} for {len(samples)} samples")
    if which.size and not (0 <= which.min() and which.max() < len(symmetry_table)):
        bad = int(which[(which < 0) | (which >= len(symmetry_table))][0])
        raise ValueError(f"symmetry index {bad} out of range 0..{len(symmetry_table) - 1}")
    cells = symmetry_table.shape[1]
    if samples.num_cells != cells or samples.planes.shape[2] != board.grid_size:
        raise ValueError(
            f"samples have {samples.num_cells} cells on a {samples.planes.shape[2]}-grid, the board"
            f" has {cells} cells on a {board.grid_size}-grid"
        )
    # y[..., table[k]] = x  <=>  y = x[..., inverse[k]]: gather with the inverse permutation.
    inverse_cells = np.argsort(symmetry_table, axis=1)[which]  # [N, C]
    inverse_actions = np.argsort(action_table, axis=1)[which]  # [N, A]
    count, num_planes, size, _ = samples.planes.shape
    planes = samples.planes.reshape(count, num_planes, size * size).copy()
    grid_index = np.asarray(board.cell_grid_index)  # [C]
    planes[:, :, grid_index] = np.take_along_axis(planes[:, :, grid_index],
                                                  inverse_cells[:, None, :], axis=2)
    return Samples(
        planes=planes.reshape(count, num_planes, size, size),
        globals=samples.globals.copy(),
        policy_target=np.take_along_axis(samples.policy_target, inverse_actions, axis=1),
        value_target=samples.value_target.copy(),
        score_target=samples.score_target.copy(),
        ownership_target=np.take_along_axis(samples.ownership_target, inverse_cells, axis=1),
        weight=samples.weight.copy(),
        legal_mask=np.take_along_axis(samples.legal_mask, inverse_actions, axis=1),
    )
