"""The champions shipped inside the package (`catena_zero/play/models/side<N>.pt`).

`gtp`, `play` and `serve` use the bundled champion of the chosen board side when no model
file is given, so a fresh install plays a trained opponent. `ModelLibrary` resolves a side
to a loaded model file: either one fixed file (`--model FILE`, one side only) or the bundled
champion of each side, loaded on first use. Loading never unpickles or runs anything from
a file (catena_zero.export.model_file), so `--model` may name a downloaded file.
"""

from __future__ import annotations

import threading
from pathlib import Path

from catena_zero.export.model_file import ModelFile, ModelFileError, load_model_file

BUNDLED_DIRECTORY = Path(__file__).resolve().parent / "models"


def bundled_model_path(side: int) -> Path:
    """Where the bundled champion of `side` lives (whether or not it exists)."""
    if not isinstance(side, int) or not 2 <= side <= 10:
        raise ValueError(f"board side must be an int in 2..10, got {side!r}")
    return BUNDLED_DIRECTORY / f"side{side}.pt"


def default_side(library: ModelLibrary | None = None, preferred: int = 6) -> int:
    """The side to play when none is given: the fixed model's, else `preferred` if bundled,
    else the largest bundled side, else `preferred`."""
    if library is not None and library.fixed is not None:
        return library.fixed.metadata.side
    sides = bundled_sides()
    return preferred if preferred in sides or not sides else max(sides)


def bundled_sides() -> list[int]:
    """The board sides that have a bundled champion."""
    return [side for side in range(2, 11) if bundled_model_path(side).is_file()]


class ModelLibrary:
    """Side -> loaded model file: one fixed file, or the bundled champions (lazily, cached)."""

    def __init__(self, model_path: str | Path | None = None) -> None:
        self._lock = threading.Lock()
        self._cache: dict[int, ModelFile] = {}
        self.fixed: ModelFile | None = None
        if model_path is not None and str(model_path) != "":
            self.fixed = load_model_file(model_path)
            self._cache[self.fixed.metadata.side] = self.fixed

    def sides(self) -> list[int]:
        """The sides this library can play."""
        if self.fixed is not None:
            return [self.fixed.metadata.side]
        return bundled_sides()

    def describe(self, side: int) -> str:
        """A one-line description of the model that plays `side`."""
        meta = self.get(side).metadata
        elo = "unrated" if meta.elo is None else f"Elo {meta.elo:.0f}"
        steps = "" if meta.training_steps is None else f", {meta.training_steps} steps"
        return f"side {meta.side} {meta.game_type}/{meta.scoring} model ({elo}{steps})"

    def get(self, side: int) -> ModelFile:
        """The model for `side`; ModelFileError with a clear message when there is none."""
        with self._lock:
            if side in self._cache:
                return self._cache[side]
            if self.fixed is not None:
                raise ModelFileError(
                    f"the model {self.fixed.path} plays side {self.fixed.metadata.side}, "
                    f"not side {side}; pass a model for side {side} or use the bundled ones"
                )
            path = bundled_model_path(side)
            if not path.is_file():
                available = ", ".join(str(s) for s in bundled_sides()) or "none"
                raise ModelFileError(
                    f"no bundled champion for side {side} (bundled sides: {available}); "
                    f"pass --model FILE (see `catena-zero export`)"
                )
            model = load_model_file(path)
            self._cache[side] = model
            return model
