"""What a model file says about itself: `catena_model.json`, checked field by field.

    metadata = metadata_for(net, Rules(side=4), network_config=net.config.to_dict(), elo=680.0)
    metadata.side, metadata.elo, metadata.tracks[0].komi_range
    PolicyValueNet.from_init_args(metadata.network_init_args())   # the net the weights fit

The network is described by data only: its architecture name, its NetworkConfig and its
input shapes; the project's own code rebuilds it (`network_init_args`). `tracks` lists the
(side, game type, scoring) the weights play with the Elo and fair komi measured on each;
format version 2 holds exactly one track (a size-general network would list several), and
`side`, `elo`, ... read that track.

Every value is checked on reading (type, range, agreement with the rules' board), so a
damaged or hostile file is refused with one ModelFileError naming the file and the field.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from dataclasses import dataclass
from typing import Any

import torch

FORMAT_NAME = "catena-zero-model"
FORMAT_VERSION = 2
ARCHITECTURE = "PolicyValueNet"
OUTPUT_NAMES = ("policy_logits", "value_logits", "score", "ownership")
# Bounds on the input shapes a file may state (the board and planes are far smaller).
MAX_INPUTS = 4096


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

    def rules(self):
        """The `catena_zero.rules.Rules` of this track."""
        from catena_zero.rules import Rules

        return Rules(side=self.side, game_type=self.game_type, scoring=self.scoring)


@dataclass(frozen=True)
class ModelMetadata:
    """The metadata of a model file (JSON inside the archive)."""

    tracks: tuple[ModelTrack, ...]  # what the model plays (version 2: exactly one)
    network: dict[str, Any]  # NetworkConfig as a dict (architecture description)
    num_planes: int  # P of the input planes [B, P, H, W]
    num_globals: int  # G of the global inputs [B, G]
    grid_size: int  # H = W of the input planes (2n - 1)
    num_cells: int  # C, the ownership width
    num_actions: int  # A = C + 1 (the last action takes the button)
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

    def rules(self):
        """The `catena_zero.rules.Rules` the model was trained on."""
        return self.track.rules()

    def network_init_args(self) -> dict[str, Any]:
        """`PolicyValueNet.from_init_args` arguments of the network the weights belong to."""
        from catena_zero.rules import get_board

        return {
            "num_planes": self.num_planes, "num_globals": self.num_globals,
            "grid_size": self.grid_size,
            "cell_grid_index": get_board(self.side).cell_grid_index.tolist(),
            "config": dict(self.network),
        }

    def to_json(self) -> str:
        values = dataclasses.asdict(self)
        values["tracks"] = [dict(track, komi_range=list(track["komi_range"]))
                            for track in values["tracks"]]
        values["outputs"] = list(self.outputs)
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
        if version != FORMAT_VERSION or isinstance(version, bool):
            raise self.fail(f"format version {version!r}; this catena-zero reads version "
                            f"{FORMAT_VERSION} (re-export it)")
        architecture = self.field(values, "architecture", "str")
        if architecture != ARCHITECTURE:
            raise self.fail(f"architecture {architecture!r:.40} is not {ARCHITECTURE}")
        outputs = tuple(self.field(values, "outputs", "list"))
        if outputs != OUTPUT_NAMES:
            raise self.fail(f"outputs {list(outputs)!r:.80} are not {list(OUTPUT_NAMES)}")
        tracks = self.field(values, "tracks", "list")
        if len(tracks) != 1:
            raise self.fail(f"format version {FORMAT_VERSION} holds exactly one track, "
                            f"got {len(tracks)}")
        track = self.track(tracks[0])
        steps = self.field(values, "training_steps", "int", None)
        if steps is not None and steps < 0:
            raise self.fail(f"metadata field training_steps must be >= 0, got {steps}")
        metadata = ModelMetadata(
            tracks=(track,), network=self.network(self.field(values, "network", "dict")),
            num_planes=self.count(values, "num_planes"),
            num_globals=self.count(values, "num_globals"),
            grid_size=self.count(values, "grid_size"), num_cells=self.count(values, "num_cells"),
            num_actions=self.count(values, "num_actions"), training_steps=steps,
            source=self.field(values, "source", "str", ""),
            created_utc=self.field(values, "created_utc", "str", ""),
            torch_version=self.field(values, "torch_version", "str", ""),
        )
        self.check_board(metadata)
        return metadata

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
        return track

    def network(self, values: dict) -> dict[str, Any]:
        from catena_zero.network import NetworkConfig

        try:
            return NetworkConfig.from_dict(dict(values)).to_dict()
        except (ValueError, TypeError) as error:
            raise self.fail(f"network config is not valid ({error})") from None

    def check_board(self, metadata: ModelMetadata) -> None:
        """The shapes must be those of the track's board (they size the input and output)."""
        board = metadata.rules().board
        stated = (metadata.grid_size, metadata.num_cells, metadata.num_actions)
        expected = (board.grid_size, board.num_cells, board.num_actions)
        if stated != expected:
            raise self.fail(f"grid_size/num_cells/num_actions {stated} do not fit side "
                            f"{metadata.side} (expected {expected})")


def _rules_value(value: Any) -> str:
    return str(getattr(value, "value", value))


def metadata_for(net: torch.nn.Module, rules, *, network_config: dict[str, Any],
                 elo: float | None = None, elo_reference: str | None = None,
                 fair_komi: float | None = None, training_steps: int | None = None,
                 source: str = "") -> ModelMetadata:
    """Metadata for `net` trained on `rules` (shapes taken from the rules' board)."""
    from catena_zero.rules import NUM_GLOBALS

    board = rules.board
    lo, hi = rules.komi_range
    track = ModelTrack(
        side=int(rules.side), game_type=_rules_value(rules.game_type),
        scoring=_rules_value(rules.scoring), komi_range=(int(lo), int(hi)),
        elo=None if elo is None else float(elo), elo_reference=elo_reference,
        fair_komi=None if fair_komi is None else float(fair_komi),
    )
    return ModelMetadata(
        tracks=(track,), network=dict(network_config), num_planes=int(net.num_planes),
        num_globals=int(getattr(net, "num_globals", NUM_GLOBALS)),
        grid_size=int(board.grid_size),
        num_cells=int(board.num_cells), num_actions=int(board.num_actions),
        training_steps=None if training_steps is None else int(training_steps),
        source=str(source),
        created_utc=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        torch_version=torch.__version__,
    )
