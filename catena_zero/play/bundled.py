"""The models shipped inside the package (`catena_zero/play/models/`), and which model plays
which board.

`gtp`, `play` and `serve` use a bundled model when no model file is given, so a fresh
install plays a trained opponent. `ModelLibrary` resolves a board side to a loaded model
file:

- one fixed file (`--model FILE`): it plays every side 2..10, whatever it was trained on
  (a network's weights have no grid-dependent tensor);
- else the bundled size-general model `general.pt`, when installed: every side;
- else the bundled per-side champion `side<N>.pt` of the side (loaded on first use).

A board and variant outside the tracks the model was trained on still plays; `note(rules)`
says so in one line (GTP writes it on stderr, the web page and the terminal show it).
Loading never unpickles or runs anything from a file (catena_zero.export.model_file), so
`--model` may name a downloaded file.
"""

from __future__ import annotations

import threading
from pathlib import Path

from catena_zero.export.model_file import ModelFile, ModelFileError, load_model_file
from catena_zero.rules import Rules, Track

BUNDLED_DIRECTORY = Path(__file__).resolve().parent / "models"
GENERAL_MODEL_NAME = "general.pt"
ALL_SIDES = list(range(2, 11))
NOTE_TRACKS = 4  # a note names at most this many of the model's tracks


def bundled_model_path(side: int) -> Path:
    """Where the bundled champion of `side` lives (whether or not it exists)."""
    if not isinstance(side, int) or not 2 <= side <= 10:
        raise ValueError(f"board side must be an int in 2..10, got {side!r}")
    return BUNDLED_DIRECTORY / f"side{side}.pt"


def bundled_general_path() -> Path:
    """Where the bundled size-general model lives (whether or not it exists)."""
    return BUNDLED_DIRECTORY / GENERAL_MODEL_NAME


def default_side(library: ModelLibrary | None = None, preferred: int = 6) -> int:
    """The side to play when none is given: the fixed model's first track's, else
    `preferred` if the library plays it (or the bundled champions have it), else the
    largest side with a model, else `preferred`."""
    fixed = getattr(library, "fixed", None)
    if fixed is not None:
        return fixed.metadata.side
    sides = library.sides() if library is not None else bundled_sides()
    return preferred if preferred in sides or not sides else max(sides)


def bundled_sides() -> list[int]:
    """The board sides that have a bundled per-side champion."""
    return [side for side in ALL_SIDES if bundled_model_path(side).is_file()]


class ModelLibrary:
    """Side -> loaded model file: one fixed file, the bundled general model, or the bundled
    per-side champions (lazily, cached); see the module docstring."""

    def __init__(self, model_path: str | Path | None = None) -> None:
        self._lock = threading.Lock()
        self._cache: dict[int, ModelFile] = {}
        self._general: ModelFile | None = None
        self.fixed: ModelFile | None = None
        if model_path is not None and str(model_path) != "":
            self.fixed = load_model_file(model_path)

    def plays_every_side(self) -> bool:
        """Whether one model plays every side (a fixed file or the bundled general model)."""
        return self.fixed is not None or bundled_general_path().is_file()

    def sides(self) -> list[int]:
        """The sides this library can play."""
        return list(ALL_SIDES) if self.plays_every_side() else bundled_sides()

    def describe(self, side: int) -> str:
        """A one-line description of the model that plays `side`."""
        model = self.get(side)
        meta = model.metadata
        steps = "" if meta.training_steps is None else f", {meta.training_steps} steps"
        if len(meta.tracks) == 1:
            elo = "unrated" if meta.elo is None else f"Elo {meta.elo:.0f}"
            return f"side {meta.side} {meta.game_type}/{meta.scoring} model ({elo}{steps})"
        rated = [track for track in meta.tracks if track.elo is not None]
        # The Elo of the side asked about when the file rates it (its first listed track).
        rated = [track for track in rated if track.side == side] + rated
        elo = (f"Elo {rated[0].elo:.0f} on {rated[0]}" if rated else "unrated")
        kind = "size-general" if meta.is_general else f"side-{meta.home_side}"
        return (f"{kind} model {model.path.name} ({len(meta.tracks)} tracks from "
                f"{meta.tracks[0]}; {elo}{steps})")

    def note(self, rules: Rules) -> str | None:
        """One line when `rules` are outside the tracks the model of their side was trained
        on (it plays them, untested); None when they are on a track, or no model plays the
        side (getting it says why)."""
        try:
            model = self.get(rules.side)
        except ModelFileError:
            return None
        track = Track.parse(rules)
        tracks = model.metadata.tracks
        if model.metadata.track_of(track) is not None:
            return None
        named = ", ".join(str(item) for item in tracks[:NOTE_TRACKS])
        more = f" and {len(tracks) - NOTE_TRACKS} more" if len(tracks) > NOTE_TRACKS else ""
        return (f"note: {track} is outside the training of the model {model.path.name} "
                f"(trained on {named}{more}); it plays, but its strength there is unmeasured")

    def trained_tracks(self) -> list[str]:
        """The tracks ("6/komi/standard") the library's models were trained on, in order."""
        tracks: list[str] = []
        for side in self.sides():
            for track in map(str, self.get(side).metadata.tracks):
                if track not in tracks:
                    tracks.append(track)
            if self.plays_every_side():  # one model: its tracks are all there are
                break
        return tracks

    def get(self, side: int) -> ModelFile:
        """The model for `side`; ModelFileError with a clear message when there is none."""
        if isinstance(side, bool) or not isinstance(side, int) or side not in ALL_SIDES:
            raise ValueError(f"board side must be an int in 2..10, got {side!r}")
        with self._lock:
            if self.fixed is not None:
                return self.fixed
            general = bundled_general_path()
            if self._general is not None or general.is_file():
                if self._general is None:
                    self._general = load_model_file(general)
                return self._general
            if side in self._cache:
                return self._cache[side]
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
