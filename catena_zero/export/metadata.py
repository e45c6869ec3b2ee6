"""What a model file says about itself: `catena_model.json`, checked field by field.

    metadata = metadata_for(net, Rules(side=4), network_config=net.config.to_dict(), elo=680.0)
    metadata = metadata_for(general_net, [ModelTrack.of("6/komi/standard", elo=900.0),
                                          ModelTrack.of("4/nokomi/standard")], ...)
    metadata.side, metadata.elo, metadata.tracks[0].komi_range
    metadata.track_of(Rules(side=7))       # None: the model was not trained on that track
    PolicyValueNet.from_init_args(metadata.network_init_args())   # the net the weights fit

The network is described by data only: its architecture name, its NetworkConfig and its
input shapes; the project's own code rebuilds it (`network_init_args`). `tracks` lists the
(side, game type, scoring) the weights were trained and rated on, with the Elo and fair komi
measured on each; `side`, `elo`, ... read the first track. Every network plays every side
(its weights have no grid-dependent tensor); a track not in the list still plays, untested.

Two format versions are read; each file is written in the lowest one that holds it:

    version 2  one track, and a network with a home board: `grid_size`, `num_cells` and
               `num_actions` are those of the track's board (the per-side networks)
    version 3  one or more distinct tracks; `grid_size`, `num_cells` and `num_actions` are
               all absent for a size-general network (no home board) or all present,
               describing the home board of a per-side network (any side 2..10)

Every value is checked on reading (type, range, agreement with the rules' board), so a
damaged or hostile file is refused with one ModelFileError naming the file and the field.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from catena_zero.network import NetworkConfig
from catena_zero.network.layout import side_of_grid
from catena_zero.rules import NUM_GLOBALS, Rules, Track, get_board

FORMAT_NAME = "catena-zero-model"
FORMAT_VERSION = 3  # the newest version, written for size-general or many-track models
PER_SIDE_VERSION = 2  # written for one track of a network with that track's home board
READ_VERSIONS = (PER_SIDE_VERSION, FORMAT_VERSION)
ARCHITECTURE = "PolicyValueNet"
OUTPUT_NAMES = ("policy_logits", "value_logits", "score", "ownership")
# Bounds on the input shapes a file may state (the board and planes are far smaller).
MAX_INPUTS = 4096
# Distinct tracks there are: 9 board sides x 3 game types x 3 scorings.
MAX_TRACKS = 81
GRID_FIELDS = ("grid_size", "num_cells", "num_actions")


class ModelFileError(ValueError):
    """A model file is missing, truncated, corrupt, of another format or format version."""


@dataclass(frozen=True)
class ModelTrack:
    """The rules a model plays, and what was measured on them."""

    side: int  # board side n
    game_type: str  # "komi" | "nokomi" | "double"
    scoring: str  # "standard" | "longest" | "quadratic"
    komi_range: tuple[int, int]  # (lo, hi) komi the rules allow
    elo: float | None = None  # Elo when exported (None = not measured)
    elo_reference: str | None = None  # what the Elo is measured against
    fair_komi: float | None = None  # estimated fair komi (None = not estimated)

    @classmethod
    def of(cls, track, *, elo: float | None = None, elo_reference: str | None = None,
           fair_komi: float | None = None) -> ModelTrack:
        """The ModelTrack of a Track, a Rules, "6/komi/standard" or "side6-komi-standard"
        (the komi range is the rules')."""
        track = Track.parse(track)
        lo, hi = track.rules().komi_range
        return cls(side=track.side, game_type=track.game_type, scoring=track.scoring,
                   komi_range=(int(lo), int(hi)), elo=None if elo is None else float(elo),
                   elo_reference=elo_reference,
                   fair_komi=None if fair_komi is None else float(fair_komi))

    @property
    def track(self):
        """The `catena_zero.rules.Track` of this track."""
        return Track(self.side, self.game_type, self.scoring)

    def __str__(self) -> str:
        return f"{self.side}/{self.game_type}/{self.scoring}"

    def rules(self):
        """The `catena_zero.rules.Rules` of this track."""
        return Rules(side=self.side, game_type=self.game_type, scoring=self.scoring)


@dataclass(frozen=True)
class ModelMetadata:
    """The metadata of a model file (JSON inside the archive)."""

    tracks: tuple[ModelTrack, ...]  # what the model was trained and rated on (first: its own)
    network: dict[str, Any]  # NetworkConfig as a dict (architecture description)
    num_planes: int  # P of the input planes [B, P, H, W]
    num_globals: int  # G of the global inputs [B, G]
    grid_size: int | None = None  # H = W of the home board (2n - 1); None: no home board
    num_cells: int | None = None  # C of the home board (its ownership width); None: none
    num_actions: int | None = None  # A = C + 1 of the home board; None: none
    training_steps: int | None = None  # optimiser steps of the checkpoint (None = unknown)
    source: str = ""  # the checkpoint path or champion track it came from
    created_utc: str = ""  # ISO time of export
    torch_version: str = ""  # torch that wrote the file
    architecture: str = ARCHITECTURE  # the network class the weights belong to
    format: str = FORMAT_NAME  # file format name
    format_version: int = FORMAT_VERSION  # file format version, checked by the reader
    outputs: tuple[str, ...] = OUTPUT_NAMES  # names of the network's outputs, in order

    @property
    def track(self) -> ModelTrack:
        return self.tracks[0]

    @property
    def side(self) -> int:
        return self.track.side

    @property
    def game_type(self) -> str:
        return self.track.game_type

    @property
    def scoring(self) -> str:
        return self.track.scoring

    @property
    def komi_range(self) -> tuple[int, int]:
        return self.track.komi_range

    @property
    def elo(self) -> float | None:
        return self.track.elo

    @property
    def elo_reference(self) -> str | None:
        return self.track.elo_reference

    @property
    def home_side(self) -> int | None:
        """The side of the network's home board; None for a size-general network."""
        return None if self.grid_size is None else side_of_grid(self.grid_size)

    @property
    def is_general(self) -> bool:
        """Whether the network was built without a home board (one net for every side)."""
        return self.grid_size is None

    @property
    def program_grid_size(self) -> int:
        """H of the planes the file's program takes: the home board's, else the first
        track's board (a program is traced for one grid)."""
        return self.grid_size if self.grid_size is not None else 2 * self.side - 1

    def track_of(self, track) -> ModelTrack | None:
        """The listed track of a Track, Rules or "6/komi/standard"; None when the model was
        not trained on it (it still plays it)."""
        wanted = Track.parse(track)
        return next((item for item in self.tracks if item.track == wanted), None)

    def rules(self):
        """The `catena_zero.rules.Rules` of the first track."""
        return self.track.rules()

    def network_init_args(self) -> dict[str, Any]:
        """`PolicyValueNet.from_init_args` arguments of the network the weights belong to."""
        args: dict[str, Any] = {"num_planes": self.num_planes, "num_globals": self.num_globals}
        if self.grid_size is not None:
            args["grid_size"] = self.grid_size
            args["cell_grid_index"] = get_board(self.home_side).cell_grid_index.tolist()
        args["config"] = dict(self.network)
        return args

    def to_json(self) -> str:
        values = dataclasses.asdict(self)
        values["tracks"] = [dict(track, komi_range=list(track["komi_range"]))
                            for track in values["tracks"]]
        values["outputs"] = list(self.outputs)
        if self.grid_size is None:  # a size-general network: no home board to describe
            for name in GRID_FIELDS:
                values.pop(name)
        return json.dumps(values, indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, values: Any, path: str = "") -> ModelMetadata:
        """Checked metadata from the parsed JSON; ModelFileError naming the bad field."""
        return _Reader(path).metadata(values)


class _Reader:
    """Field checks that name the file and the field in one ModelFileError."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, text: str) -> ModelFileError:
        return ModelFileError(f"model file {self.path}: {text}")

    def field(self, values: dict, name: str, kind: str, default: Any = dataclasses.MISSING,
              where: str = "metadata") -> Any:
        if name not in values:
            if default is dataclasses.MISSING:
                raise self.fail(f"{where} lacks {name}")
            return default
        value = values[name]
        if value is None and default is None:
            return None
        checks = {
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: (isinstance(v, int | float) and not isinstance(v, bool)
                                 and math.isfinite(v)),
            "str": lambda v: isinstance(v, str),
            "dict": lambda v: isinstance(v, dict),
            "list": lambda v: isinstance(v, list),
        }
        if not checks[kind](value):
            raise self.fail(f"{where} field {name} must be {kind}, got {value!r:.80}")
        return value

    def count(self, values: dict, name: str, high: int = MAX_INPUTS) -> int:
        value = self.field(values, name, "int")
        if not 1 <= value <= high:
            raise self.fail(f"metadata field {name} must be in 1..{high}, got {value}")
        return value

    def metadata(self, values: Any) -> ModelMetadata:
        if not isinstance(values, dict) or values.get("format") != FORMAT_NAME:
            raise self.fail(f"not a {FORMAT_NAME} file")
        version = values.get("format_version")
        if isinstance(version, bool) or version not in READ_VERSIONS:
            raise self.fail(f"format version {version!r:.20}; this catena-zero reads versions "
                            f"{', '.join(map(str, READ_VERSIONS))} (re-export it)")
        architecture = self.field(values, "architecture", "str")
        if architecture != ARCHITECTURE:
            raise self.fail(f"architecture {architecture!r:.40} is not {ARCHITECTURE}")
        outputs = tuple(self.field(values, "outputs", "list"))
        if outputs != OUTPUT_NAMES:
            raise self.fail(f"outputs {list(outputs)!r:.80} are not {list(OUTPUT_NAMES)}")
        tracks = self.tracks(self.field(values, "tracks", "list"), version)
        steps = self.field(values, "training_steps", "int", None)
        if steps is not None and steps < 0:
            raise self.fail(f"metadata field training_steps must be >= 0, got {steps}")
        metadata = ModelMetadata(
            tracks=tracks, network=self.network(self.field(values, "network", "dict")),
            num_planes=self.count(values, "num_planes"),
            num_globals=self.count(values, "num_globals"),
            **self.grid(values, version), training_steps=steps,
            source=self.field(values, "source", "str", ""),
            created_utc=self.field(values, "created_utc", "str", ""),
            torch_version=self.field(values, "torch_version", "str", ""),
            format_version=version,
        )
        self.check_board(metadata)
        return metadata

    def tracks(self, values: list, version: int) -> tuple[ModelTrack, ...]:
        if version == PER_SIDE_VERSION and len(values) != 1:
            raise self.fail(f"format version {PER_SIDE_VERSION} holds exactly one track, "
                            f"got {len(values)}")
        if not 1 <= len(values) <= MAX_TRACKS:
            raise self.fail(f"format version {version} holds 1..{MAX_TRACKS} tracks, "
                            f"got {len(values)}")
        tracks = tuple(self.track(value) for value in values)
        seen = set()
        for track in tracks:
            if track.track in seen:
                raise self.fail(f"track {track} is listed twice")
            seen.add(track.track)
        return tracks

    def grid(self, values: dict, version: int) -> dict[str, int | None]:
        """The home board's shapes: required in version 2, all or none in version 3."""
        present = [name for name in GRID_FIELDS if values.get(name) is not None]
        if version == FORMAT_VERSION and not present:
            return dict.fromkeys(GRID_FIELDS)
        if version == FORMAT_VERSION and len(present) != len(GRID_FIELDS):
            missing = [name for name in GRID_FIELDS if name not in present]
            raise self.fail(f"metadata gives {', '.join(present)} but not "
                            f"{', '.join(missing)} (a home board needs all three, a "
                            f"size-general network none)")
        return {name: self.count(values, name) for name in GRID_FIELDS}

    def track(self, values: Any) -> ModelTrack:
        if not isinstance(values, dict):
            raise self.fail(f"a track must be an object, got {values!r:.80}")
        where = "track"
        komi_range = self.field(values, "komi_range", "list", where=where)
        if len(komi_range) != 2 or not all(isinstance(v, int) and not isinstance(v, bool)
                                           for v in komi_range):
            raise self.fail(f"track field komi_range must be two ints, got {komi_range!r:.80}")
        elo = self.field(values, "elo", "number", None, where)
        fair_komi = self.field(values, "fair_komi", "number", None, where)
        track = ModelTrack(
            side=self.field(values, "side", "int", where=where),
            game_type=self.field(values, "game_type", "str", where=where),
            scoring=self.field(values, "scoring", "str", where=where),
            komi_range=(komi_range[0], komi_range[1]),
            elo=None if elo is None else float(elo),
            elo_reference=self.field(values, "elo_reference", "str", None, where),
            fair_komi=None if fair_komi is None else float(fair_komi),
        )
        try:
            track.rules()
        except (ValueError, TypeError) as error:
            raise self.fail(f"track {track.side!r}/{track.game_type!r:.20}/"
                            f"{track.scoring!r:.20} is not a valid rule set ({error})") from None
        # The canonical spelling ("KOMI" -> "komi"), so tracks compare and print alike.
        canonical = track.track
        return dataclasses.replace(track, game_type=canonical.game_type,
                                   scoring=canonical.scoring)

    def network(self, values: dict) -> dict[str, Any]:
        try:
            return NetworkConfig.from_dict(dict(values)).to_dict()
        except (ValueError, TypeError) as error:
            raise self.fail(f"network config is not valid ({error})") from None

    def check_board(self, metadata: ModelMetadata) -> None:
        """The home board's shapes size the input and output: in version 2 they must be the
        track's board, in version 3 (when given) the board of some side."""
        if metadata.grid_size is None:
            return
        stated = (metadata.grid_size, metadata.num_cells, metadata.num_actions)
        if metadata.format_version == PER_SIDE_VERSION:
            side = metadata.side
        else:
            side = side_of_grid(metadata.grid_size)
            if side is None:
                raise self.fail(f"grid_size {metadata.grid_size} is not 2n - 1 of a board "
                                f"side n in 2..10")
        board = get_board(side)
        expected = (board.grid_size, board.num_cells, board.num_actions)
        if stated != expected:
            raise self.fail(f"grid_size/num_cells/num_actions {stated} do not fit side "
                            f"{side} (expected {expected})")


def lowest_version(metadata: ModelMetadata) -> int:
    """The version a file of `metadata` is written in: 2 for one track played by a network
    whose home board is that track's board (what older readers read), else 3."""
    per_side = (metadata.grid_size is not None and len(metadata.tracks) == 1
                and metadata.grid_size == 2 * metadata.side - 1)
    return PER_SIDE_VERSION if per_side else FORMAT_VERSION


def _is_one_track(value: Any) -> bool:
    """Whether `value` names one track (a Rules, Track, ModelTrack, string or 3-tuple)
    rather than a sequence of them."""
    if isinstance(value, str | ModelTrack) or not isinstance(value, Sequence):
        return True
    return len(value) == 3 and isinstance(value[0], int) and not isinstance(value[0], bool)


def export_time() -> str:
    """The file's `created_utc`: now, or the time `SOURCE_DATE_EPOCH` gives (seconds since
    1970, the reproducible-builds convention), so that exporting one checkpoint again gives
    the same bytes, and so the same SHA-256, as a recorded match names; ValueError naming
    the variable when it is not a whole number of seconds."""
    text = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not text:
        return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    if not text.isdigit():
        raise ValueError(f"SOURCE_DATE_EPOCH={text!r}: expected whole seconds since 1970")
    moment = datetime.datetime.fromtimestamp(int(text), datetime.UTC)
    return moment.isoformat(timespec="seconds")


def metadata_for(net: torch.nn.Module, rules, *, network_config: dict[str, Any],
                 elo: float | None = None, elo_reference: str | None = None,
                 fair_komi: float | None = None, training_steps: int | None = None,
                 source: str = "") -> ModelMetadata:
    """Metadata for `net` trained on `rules`: one track (a Rules, a Track or
    "6/komi/standard", with `elo`, `elo_reference` and `fair_komi`), or a sequence of tracks
    (each a ModelTrack carrying its own Elo and fair komi, or a track as above, unrated).

    The home board's shapes are the network's own (none for a size-general network); the
    format version is `lowest_version`'s.
    """
    if _is_one_track(rules):
        tracks = [rules if isinstance(rules, ModelTrack) else ModelTrack.of(
            rules, elo=elo, elo_reference=elo_reference, fair_komi=fair_komi)]
    else:
        if (elo, elo_reference, fair_komi) != (None, None, None):
            raise ValueError("with several tracks, give each its Elo and fair komi as a "
                             "ModelTrack (elo, elo_reference and fair_komi are for one track)")
        tracks = [item if isinstance(item, ModelTrack) else ModelTrack.of(item)
                  for item in rules]
    if not tracks:
        raise ValueError("a model file lists at least one track")
    grid_size = getattr(net, "grid_size", None)
    shapes: dict[str, int | None] = dict.fromkeys(GRID_FIELDS)
    if grid_size is not None:
        shapes = {"grid_size": int(grid_size), "num_cells": int(net.num_cells),
                  "num_actions": int(net.num_actions)}
    metadata = ModelMetadata(
        tracks=tuple(tracks), network=dict(network_config), num_planes=int(net.num_planes),
        num_globals=int(getattr(net, "num_globals", NUM_GLOBALS)), **shapes,
        training_steps=None if training_steps is None else int(training_steps),
        source=str(source),
        created_utc=export_time(),
        torch_version=torch.__version__,
    )
    return dataclasses.replace(metadata, format_version=lowest_version(metadata))
