"""The models shipped inside the package (`catena_zero/play/models/`), and which model plays
which board.

`gtp`, `play` and `serve` use a bundled model when no model file is given, so a fresh
install plays a trained opponent. `ModelLibrary` resolves a board side to a loaded model
file:

- one fixed file (`--model FILE`): it plays every side 2..10 and variant, whatever it was
  trained on (a network's weights have no grid-dependent tensor);
- else, for each track (side x variant), the bundled model chosen by its recorded ratings
  on that track in `models/ratings.json` (`catena_zero.play.bundled_ratings`): where some
  bundled file has an Elo against the anchor players (uct:N, uct:200 = 0), the track's
  recorded player stays unless another file's lead over it is significant (the
  replacement rule, `catena_zero.play.replacement`); elsewhere, the highest Elo against
  the one-ply greedy player. A model bundled for a few tracks plays exactly those where it
  is the strongest;
- on a track no bundled model is rated on: the size-general `general.pt` when installed
  (it plays every side), else the per-side champion `side<N>.pt` of the side; a bundled file
  of any other name plays only where it is rated best (an earlier model kept for the tracks
  where it still is the strongest).

Models are loaded on first use and kept. `get(rules)` picks by track; `get(side)` means the
side's komi/standard track.

A board and variant outside the tracks the model was trained on still plays; `note(rules)`
says so in one line (GTP writes it on stderr, the web page and the terminal show it).
Loading never unpickles or runs anything from a file (catena_zero.export.model_file), so
`--model` may name a downloaded file.
"""

from __future__ import annotations

import threading
from pathlib import Path

from catena_zero.arena.anchored_elo import FIXED_ANCHOR
from catena_zero.data.file_history import file_sha256
from catena_zero.export.model_file import ModelFile, ModelFileError, load_model_file
from catena_zero.play.bundled_ratings import RATINGS_NAME, BundledRatings, read_bundled_ratings
from catena_zero.rules import Rules, Track

BUNDLED_DIRECTORY = Path(__file__).resolve().parent / "models"
GENERAL_MODEL_NAME = "general.pt"
ALL_SIDES = list(range(2, 11))
# The files that also play the tracks no bundled model is rated on, in the library's order.
FALLBACK_MODEL_NAMES = (GENERAL_MODEL_NAME, *(f"side{side}.pt" for side in ALL_SIDES))
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


def choose_model(track: Track, ratings: BundledRatings | None, available: list[str],
                 ) -> str | None:
    """The file name (of `available`) that plays `track`: the one its ratings choose
    (anchored where any of them is, else by greedy Elo), else general.pt, else side<N>.pt
    of its side; None when none plays it."""
    best = ratings.choice(track, available) if ratings is not None else None
    if best is not None:
        return best
    if GENERAL_MODEL_NAME in available:
        return GENERAL_MODEL_NAME
    own = f"side{track.side}.pt"
    return own if own in available else None


def _as_track(side_or_rules) -> Track:
    """A Track from a side (its komi/standard track), Rules, Track or "6/komi/standard"."""
    if isinstance(side_or_rules, bool):
        raise ValueError(f"board side must be an int in 2..10, got {side_or_rules!r}")
    if isinstance(side_or_rules, int):
        if side_or_rules not in ALL_SIDES:
            raise ValueError(f"board side must be an int in 2..10, got {side_or_rules!r}")
        return Track(side_or_rules, "komi", "standard")
    return Track.parse(side_or_rules)


class ModelLibrary:
    """Track -> loaded model file: one fixed file, or the bundled model rated best on the
    track (general.pt or the side's champion where none is rated); see the module
    docstring. `directory` holds the bundled models (default: the package's)."""

    def __init__(self, model_path: str | Path | None = None,
                 directory: str | Path | None = None) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, ModelFile] = {}
        self.directory = Path(directory) if directory is not None else None
        self.fixed: ModelFile | None = None
        if model_path is not None and str(model_path) != "":
            self.fixed = load_model_file(model_path)
        self._ratings: BundledRatings | None = None
        self._ratings_read = False

    # -- the bundled files and their ratings ---------------------------------------------

    def bundled_directory(self) -> Path:
        return self.directory if self.directory is not None else BUNDLED_DIRECTORY

    def available(self) -> list[str]:
        """The bundled model files present: general.pt, side<N>.pt by side, then any other
        `.pt` file by name, which plays only the tracks the ratings table rates it strictly
        best on (a model kept for a few tracks where it is still the strongest; a tie of
        greedy Elos goes to the file listed first, one of anchored Elos by the replacement
        rule). Hidden files (a write in progress) are not models."""
        directory = self.bundled_directory()  # a missing directory globs to nothing
        present = {path.name for path in directory.glob("*.pt")
                   if path.is_file() and not path.name.startswith(".")}
        return [name for name in FALLBACK_MODEL_NAMES if name in present] + \
            sorted(present - set(FALLBACK_MODEL_NAMES))

    def ratings(self) -> BundledRatings | None:
        """The bundled ratings table (None when there is none; a damaged one is an error
        naming the file, ModelFileError)."""
        if not self._ratings_read:
            self._ratings = read_bundled_ratings(self.bundled_directory() / RATINGS_NAME)
            self._ratings_read = True
        return self._ratings

    def choice(self, side_or_rules) -> str | None:
        """The bundled file name that plays a track (None: a fixed model plays, or none)."""
        if self.fixed is not None:
            return None
        return choose_model(_as_track(side_or_rules), self.ratings(), self.available())

    def komi_standard_players(self) -> dict[int, dict]:
        """The bundled file that plays each side's komi/standard track, {side: {"name",
        "sha256"}} (the komi atlas's designer page names today's player; empty with a
        fixed model or no bundled file)."""
        if self.fixed is not None:
            return {}
        names = {side: self.choice(side) for side in ALL_SIDES}
        # one file plays several sides: each is hashed once
        hashes = {name: file_sha256(self.bundled_directory() / name)
                  for name in set(names.values()) if name is not None}
        return {side: {"name": name, "sha256": hashes[name]} for side, name in names.items()
                if name is not None}

    # -- what the library plays ----------------------------------------------------------

    def plays_every_side(self) -> bool:
        """Whether one model plays every side (a fixed file or the bundled general model)."""
        return self.fixed is not None or GENERAL_MODEL_NAME in self.available()

    def sides(self) -> list[int]:
        """The sides this library can play."""
        if self.plays_every_side():
            return list(ALL_SIDES)
        available = self.available()
        return [side for side in ALL_SIDES if f"side{side}.pt" in available]

    def describe(self, side_or_rules) -> str:
        """A one-line description of the model that plays a side (its komi/standard track)
        or a track (Rules): which file, and its rating there."""
        track = _as_track(side_or_rules)
        model = self.get(track)
        meta = model.metadata
        steps = "" if meta.training_steps is None else f", {meta.training_steps} steps"
        table = self.ratings() if self.fixed is None else None
        anchored = table.anchored_elo(model.path.name, track) if table is not None else None
        rating = table.elo(model.path.name, track) if table is not None else None
        if anchored is not None and table.decide(track, self.available()) is not None:
            value, low, high = anchored
            elo = f"Elo {value:.0f} [{low:.0f}, {high:.0f}] on {track} ({FIXED_ANCHOR} = 0)"
        elif rating is not None:
            elo = f"Elo {rating:.0f} on {track} ({table.short_reference})"
        elif len(meta.tracks) == 1:
            elo = "unrated" if meta.elo is None else f"Elo {meta.elo:.0f}"
        else:
            rated = [item for item in meta.tracks if item.elo is not None]
            # The Elo of the track asked about, else of its side, else the first listed.
            rated = ([item for item in rated if item.track == track]
                     + [item for item in rated if item.side == track.side] + rated)
            elo = (f"Elo {rated[0].elo:.0f} on {rated[0]}" if rated else "unrated")
        if len(meta.tracks) == 1:
            return (f"side {meta.side} {meta.game_type}/{meta.scoring} model "
                    f"{model.path.name} ({elo}{steps})")
        kind = "size-general" if meta.is_general else f"side-{meta.home_side}"
        return (f"{kind} model {model.path.name} ({len(meta.tracks)} tracks from "
                f"{meta.tracks[0]}; {elo}{steps})")

    def note(self, rules: Rules) -> str | None:
        """One line when `rules` are outside the tracks the model that plays them was trained
        on (it plays them, untested); None when they are on a track, or no model plays the
        side (getting it says why)."""
        try:
            model = self.get(rules)
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
        models = [self.fixed] if self.fixed is not None else [
            self._load(name) for name in self.available()]
        for model in models:
            for track in map(str, model.metadata.tracks):
                if track not in tracks:
                    tracks.append(track)
        return tracks

    def get(self, side_or_rules) -> ModelFile:
        """The model that plays a side (its komi/standard track) or a track (Rules, Track);
        ModelFileError with a clear message when there is none."""
        track = _as_track(side_or_rules)
        if self.fixed is not None:
            return self.fixed
        name = self.choice(track)
        if name is None:
            sides = ", ".join(str(side) for side in self.sides()) or "none"
            raise ModelFileError(
                f"no bundled champion for side {track.side} (bundled sides: {sides}); "
                f"pass --model FILE (see `catena-zero export`)")
        return self._load(name)

    def _load(self, name: str) -> ModelFile:
        with self._lock:
            if name not in self._cache:
                self._cache[name] = load_model_file(self.bundled_directory() / name)
            return self._cache[name]
