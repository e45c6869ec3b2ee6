"""Network calls of one fixed shape, so that an analysis answer does not depend on the
positions searched beside it.

    evaluate_fn = fixed_shape_evaluator(model_file, engine)   # an EvaluateFn, as usual

CPU convolution and matrix kernels pick their blocking by the batch size, and some by a
row's slot in the batch: one position evaluated in a batch of 1, 5 or 16, or in slot 0 or
slot 13, comes out different in the last bits of float32 (1e-7 to 1e-6 apart here). The
analysis engine searches the positions of whatever lines arrive together in one batch, so
with plain calls an answer would change in its sixth decimal, and where two moves are
nearly tied in its visits, with the queries read beside it.

`FixedShapeModel` runs its network only on batches of exactly `chunk` positions, the last
one filled up with copies of its last position (whose outputs are dropped), so every call
has the same shape; the kernels then compute each row from that row alone. Which `chunk`
does so is a property of the machine, checked when the model is first used for a board
(`steady_chunk`): the first of CHUNK_CANDIDATES at which a batch of copies of one position
comes out identical in every slot, else 1 (every position evaluated alone, always exact
but slower). A row's numbers then depend only on the position, the model and the machine
(CPU kind and thread count).
"""

from __future__ import annotations

import numpy as np

from catena_zero.export.evaluator import ModelFileEvaluator
from catena_zero.export.model_file import ModelFile
from catena_zero.rules import Engine, observe

# Chunk sizes tried, smallest first. Below 16 the kernels of a typical x86 CPU still treat
# slots differently (measured: 4 and 8 do, 16 does not); a larger chunk wastes more filler
# on a lone position.
CHUNK_CANDIDATES = (16, 32, 64)
PROBE_MOVES = 4  # the probe position: this many seeded random moves from the empty board


class FixedShapeModel:
    """A ModelFile (`run(planes, globals_)` -> outputs by name) whose network sees only
    batches of exactly `chunk` positions (see the module docstring)."""

    def __init__(self, model: ModelFile, chunk: int) -> None:
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
            raise ValueError(f"chunk must be an int >= 1, got {chunk!r}")
        self.model = model
        self.chunk = chunk
        self.metadata = model.metadata

    def run(self, planes: np.ndarray, globals_: np.ndarray) -> dict[str, np.ndarray]:
        """planes [B, P, H, W], globals [B, G] -> the model's outputs by name, batch B,
        computed `chunk` rows at a time."""
        count = int(planes.shape[0])
        if count == 0:
            return self.model.run(planes, globals_)
        pieces: list[dict[str, np.ndarray]] = []
        for start in range(0, count, self.chunk):
            stop = min(start + self.chunk, count)
            outputs = self.model.run(_filled(planes[start:stop], self.chunk),
                                     _filled(globals_[start:stop], self.chunk))
            pieces.append({name: value[: stop - start] for name, value in outputs.items()})
        if len(pieces) == 1:
            return pieces[0]
        return {name: np.concatenate([piece[name] for piece in pieces]) for name in pieces[0]}


def _filled(rows: np.ndarray, size: int) -> np.ndarray:
    """`rows` [k, ...] filled up to [size, ...] with copies of its last row."""
    missing = size - int(rows.shape[0])
    if missing == 0:
        return rows
    return np.concatenate([rows, np.repeat(rows[-1:], missing, axis=0)])


def steady_chunk(model: ModelFile, engine: Engine) -> int:
    """The first of CHUNK_CANDIDATES at which this machine computes a batch of copies of one
    position of `engine`'s board identically in every slot; 1 when none does."""
    rng = np.random.default_rng(0)
    state = engine.new_games(1, 0)
    for _ in range(PROBE_MOVES):
        if bool(state.terminal[0]):
            break
        engine.step(state, engine.random_actions(state, rng))
    planes, globals_ = observe(engine, state)  # [1, P, H, W], [1, G]
    for chunk in CHUNK_CANDIDATES:
        outputs = model.run(np.repeat(planes, chunk, axis=0), np.repeat(globals_, chunk, axis=0))
        if all(np.array_equal(value, np.broadcast_to(value[:1], value.shape))
               for value in outputs.values()):
            return chunk
    return 1


def fixed_shape_evaluator(model: ModelFile, engine: Engine,
                          chunk: int | None = None) -> ModelFileEvaluator:
    """The EvaluateFn of `model` on `engine`'s board whose every network call has one shape
    (`chunk` rows; default `steady_chunk`'s choice for this machine and board)."""
    chunk = steady_chunk(model, engine) if chunk is None else chunk
    return ModelFileEvaluator(FixedShapeModel(model, chunk), engine)
