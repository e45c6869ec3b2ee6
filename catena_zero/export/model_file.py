"""Standalone model files: a `torch.export` program plus JSON metadata in one zip archive.

A model file is what `torch.export.save` writes (a `.pt2` zip archive; the project names the
bundled ones `side4.pt` / `side6.pt`) with one extra member, `catena_model.json`, holding the
metadata. Anyone with torch alone can run it::

    program = torch.export.load("side6.pt").module()
    policy_logits, value_logits, score, ownership = program(planes, globals_)
    # planes [B, P, H, W] float32, globals_ [B, G] float32 (catena_zero.rules.observe)
    # -> [B, A], [B, 3] (win/draw/loss, side to move), [B] margin points, [B, C] in [-1, 1]

No config file, checkpoint or training code is needed to load it. `load_model_file` checks
the archive (CRC of every member, so a truncated or corrupted file is refused before torch
sees it), the format name and FORMAT_VERSION, and the shapes stated in the metadata.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from catena_zero.data.atomic import atomic_write_bytes

FORMAT_NAME = "catena-zero-model"
FORMAT_VERSION = 1
METADATA_MEMBER = "catena_model.json"
OUTPUT_NAMES = ("policy_logits", "value_logits", "score", "ownership")
# Largest batch the exported program accepts (torch.export needs a bound on dynamic dims).
MAX_BATCH = 65536


class ModelFileError(ValueError):
    """A model file is missing, truncated, corrupt, of another format or format version."""


@dataclass(frozen=True)
class ModelMetadata:
    """What a model file says about itself (stored as JSON inside the archive)."""

    side: int  # board side n of the rules it was trained on
    game_type: str  # "komi" | "nokomi" | "double"
    scoring: str  # "standard" | "longest" | "quadratic"
    komi_range: tuple[int, int]  # (lo, hi) komi the rules allow
    network: dict[str, Any]  # NetworkConfig as a dict (architecture description)
    num_planes: int  # P of the input planes [B, P, H, W]
    num_globals: int  # G of the global inputs [B, G]
    grid_size: int  # H = W of the input planes (2n - 1)
    num_cells: int  # C, the ownership width
    num_actions: int  # A = C + 1 (the last action takes the button)
    elo: float | None = None  # Elo of the model when exported (None = not measured)
    elo_reference: str | None = None  # what the Elo is measured against
    training_steps: int | None = None  # optimiser steps of the checkpoint (None = unknown)
    source: str = ""  # the checkpoint path or champion track it came from
    created_utc: str = ""  # ISO time of export
    torch_version: str = ""  # torch that wrote the file
    format: str = FORMAT_NAME  # file format name
    format_version: int = FORMAT_VERSION  # file format version, checked by the reader
    outputs: tuple[str, ...] = OUTPUT_NAMES  # names of the program's outputs, in order

    def to_json(self) -> str:
        values = dataclasses.asdict(self)
        values["komi_range"] = list(self.komi_range)
        values["outputs"] = list(self.outputs)
        return json.dumps(values, indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, values: dict[str, Any], path: str = "") -> ModelMetadata:
        known = {field.name for field in dataclasses.fields(cls)}
        required = {
            field.name for field in dataclasses.fields(cls)
            if field.default is dataclasses.MISSING
        }
        missing = sorted(required - set(values))
        if missing:
            raise ModelFileError(f"model file {path}: metadata lacks {', '.join(missing)}")
        kept = {key: value for key, value in values.items() if key in known}
        kept["komi_range"] = tuple(int(v) for v in kept["komi_range"])
        kept["outputs"] = tuple(kept.get("outputs", OUTPUT_NAMES))
        return cls(**kept)

    def rules(self):
        """The `catena_zero.rules.Rules` the model was trained on."""
        from catena_zero.rules import Rules

        return Rules(side=self.side, game_type=self.game_type, scoring=self.scoring)


class _TupleOutput(torch.nn.Module):
    """Wraps PolicyValueNet so the exported program returns a plain tuple of tensors."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, planes: torch.Tensor, globals_: torch.Tensor):
        output = self.net(planes, globals_)
        return tuple(getattr(output, name) for name in OUTPUT_NAMES)


def _rules_value(value: Any) -> str:
    return str(getattr(value, "value", value))


def metadata_for(net: torch.nn.Module, rules, *, network_config: dict[str, Any],
                 elo: float | None = None, elo_reference: str | None = None,
                 training_steps: int | None = None, source: str = "") -> ModelMetadata:
    """Metadata for `net` trained on `rules` (shapes taken from the rules' board)."""
    from catena_zero.rules import NUM_GLOBALS

    board = rules.board
    lo, hi = rules.komi_range
    return ModelMetadata(
        side=int(rules.side), game_type=_rules_value(rules.game_type),
        scoring=_rules_value(rules.scoring), komi_range=(int(lo), int(hi)),
        network=dict(network_config), num_planes=int(net.num_planes), num_globals=int(NUM_GLOBALS),
        grid_size=int(board.grid_size), num_cells=int(board.num_cells),
        num_actions=int(board.num_actions),
        elo=None if elo is None else float(elo), elo_reference=elo_reference,
        training_steps=None if training_steps is None else int(training_steps),
        source=str(source),
        created_utc=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        torch_version=torch.__version__,
    )


def save_model_file(net: torch.nn.Module, metadata: ModelMetadata, path: str | Path) -> Path:
    """Export `net` (a PolicyValueNet, put in eval mode on CPU) to `path`, atomically.

    Raises ModelFileError when the exported program disagrees with the network.
    """
    path = Path(path)
    net = copy.deepcopy(net).to("cpu").eval()  # the caller's net keeps its device and mode
    wrapper = _TupleOutput(net).eval()
    generator = torch.Generator().manual_seed(0)
    shape = (metadata.num_planes, metadata.grid_size, metadata.grid_size)

    def sample(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        planes = torch.rand((batch, *shape), generator=generator)
        globals_ = torch.rand((batch, metadata.num_globals), generator=generator)
        return planes, globals_

    batch_dim = torch.export.Dim("batch", min=1, max=MAX_BATCH)
    with torch.no_grad():
        program = torch.export.export(
            wrapper, sample(2), dynamic_shapes=({0: batch_dim}, {0: batch_dim}), strict=False
        )
        # The exported program must reproduce the network at other batch sizes.
        module = program.module()
        for batch in (1, 5):
            inputs = sample(batch)
            expected = wrapper(*inputs)
            got = module(*inputs)
            for name, want, have in zip(OUTPUT_NAMES, expected, got, strict=True):
                if want.shape != have.shape or not torch.allclose(want, have, atol=1e-4):
                    raise ModelFileError(f"exported program disagrees with the network on "
                                         f"{name} at batch {batch}")
    buffer = io.BytesIO()  # torch.export wants a buffer or a name ending in .pt2
    torch.export.save(program, buffer, extra_files={METADATA_MEMBER: metadata.to_json()})
    atomic_write_bytes(path, buffer.getvalue())
    return path


def read_metadata(path: str | Path) -> ModelMetadata:
    """The metadata of a model file, after checking the archive; no torch load.

    Raises ModelFileError naming the file when it is missing, truncated or corrupt, not a
    catena model, or of another format version.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"model file {path} does not exist")
    try:
        with zipfile.ZipFile(path) as archive:
            broken = archive.testzip()
            if broken is not None:
                raise ModelFileError(f"model file {path} is corrupt (bad CRC in {broken})")
            members = [n for n in archive.namelist() if n.endswith("/extra/" + METADATA_MEMBER)]
            if not members:
                raise ModelFileError(f"model file {path} is not a catena-zero model "
                                     f"(no {METADATA_MEMBER} inside)")
            text = archive.read(members[0]).decode("utf-8")
    except (zipfile.BadZipFile, EOFError, OSError) as error:
        raise ModelFileError(f"model file {path} is truncated or not a model archive "
                             f"({error})") from error
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise ModelFileError(f"model file {path}: unreadable metadata ({error})") from error
    if not isinstance(values, dict) or values.get("format") != FORMAT_NAME:
        raise ModelFileError(f"model file {path} is not a {FORMAT_NAME} file")
    version = values.get("format_version")
    if version != FORMAT_VERSION:
        raise ModelFileError(f"model file {path} has format version {version!r}; this "
                             f"catena-zero reads version {FORMAT_VERSION} (re-export it)")
    return ModelMetadata.from_dict(values, str(path))


@dataclass
class ModelFile:
    """A loaded model file: the program and its metadata.

    `runner` is what `run` calls: the exported program itself, or (when `load_model_file`
    could rebuild it) an equivalent eager PolicyValueNet holding the program's weights,
    which runs a batch-1 search evaluation about 2-3x faster than the program's graph
    interpreter. The eager copy is only used after it reproduced the program's outputs.
    """

    path: Path  # where it was loaded from
    metadata: ModelMetadata  # what the file says about itself
    program: torch.nn.Module  # the exported program: (planes, globals) -> 4 tensors
    runner: torch.nn.Module | None = None  # what `run` calls (None = the program)

    def rules(self):
        return self.metadata.rules()

    def as_network(self) -> torch.nn.Module:
        """A module whose forward returns `catena_zero.network.NetOutput`, like PolicyValueNet."""
        return _NetOutputAdapter(self.program, self.metadata)

    @torch.inference_mode()
    def run(self, planes: np.ndarray, globals_: np.ndarray) -> dict[str, np.ndarray]:
        """Evaluate observations: planes [B, P, H, W], globals [B, G] -> numpy outputs by name."""
        runner = self.runner if self.runner is not None else self.program
        # Observations may carry planes added after this model was trained: it reads its own.
        planes = planes[:, : self.metadata.num_planes]
        outputs = runner(torch.as_tensor(planes, dtype=torch.float32),
                         torch.as_tensor(globals_, dtype=torch.float32))
        return {name: value.numpy() for name, value in zip(OUTPUT_NAMES, outputs, strict=True)}


class _NetOutputAdapter(torch.nn.Module):
    """Presents an exported program as a network returning NetOutput (for NetworkEvaluator)."""

    def __init__(self, program: torch.nn.Module, metadata: ModelMetadata) -> None:
        super().__init__()
        self.program = program
        self.metadata = metadata
        self.num_cells = metadata.num_cells
        self.num_actions = metadata.num_actions

    def forward(self, planes: torch.Tensor, globals_: torch.Tensor):
        from catena_zero.network import NetOutput

        planes = planes[:, : self.metadata.num_planes]
        policy_logits, value_logits, score, ownership = self.program(planes, globals_)
        return NetOutput(policy_logits=policy_logits, value_logits=value_logits, score=score,
                         ownership=ownership)

    def eval(self):  # the exported program is already in inference form
        return self

    def train(self, mode: bool = True):
        return self


def load_model_file(path: str | Path) -> ModelFile:
    """Load a model file; ModelFileError (naming the file and the problem) if it is unusable."""
    metadata = read_metadata(path)
    try:
        buffer = io.BytesIO(Path(path).read_bytes())
        program = torch.export.load(buffer).module()
    except Exception as error:  # torch raises many kinds for damaged archives
        raise ModelFileError(f"model file {path} could not be loaded by torch "
                             f"{torch.__version__}: {error}") from error
    return ModelFile(path=Path(path), metadata=metadata, program=program,
                     runner=_eager_copy(program, metadata))


def _eager_copy(program: torch.nn.Module, metadata: ModelMetadata) -> torch.nn.Module | None:
    """PolicyValueNet with the program's weights if it reproduces the program, else None."""
    try:
        from catena_zero.network import NetworkConfig, PolicyValueNet
        from catena_zero.rules import get_board

        board = get_board(metadata.side)
        net = PolicyValueNet(metadata.num_planes, metadata.num_globals, metadata.grid_size,
                             board.cell_grid_index, NetworkConfig.from_dict(metadata.network))
        prefix = "net."
        weights = {key[len(prefix):]: value for key, value in program.state_dict().items()
                   if key.startswith(prefix)}
        net.load_state_dict(weights, strict=True)
        wrapper = _TupleOutput(net).eval()
        generator = torch.Generator().manual_seed(1)
        size = metadata.grid_size
        planes = torch.rand((3, metadata.num_planes, size, size), generator=generator)
        globals_ = torch.rand((3, metadata.num_globals), generator=generator)
        with torch.inference_mode():
            for want, have in zip(program(planes, globals_), wrapper(planes, globals_),
                                  strict=True):
                if want.shape != have.shape or not torch.allclose(want, have, atol=1e-4):
                    return None
        return wrapper
    except Exception:  # a file from another code version: the program alone still works
        return None
