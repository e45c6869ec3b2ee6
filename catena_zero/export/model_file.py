"""Standalone model files: JSON metadata and safetensors weights in a zip archive.

A model file (format version 2 or 3, see catena_zero.export.metadata; the bundled ones are
`side4.pt` / `side6.pt`, version 2) is a zip of stored members:

    catena_model.json     the metadata (catena_zero.export.metadata.ModelMetadata)
    weights.safetensors   the network's state dict
    program.pt2           optional: a `torch.export` program of the same network (written
                          only on request, `catena-zero export ... program=true`: it is
                          about two thirds of a file and the project never reads it)

`load_model_file` never unpickles and never runs anything from the file: it checks the
archive (catena_zero.export.container: bounded sizes, CRC of every member), the format and
every metadata field, rebuilds the network with the project's own PolicyValueNet from the
metadata, and loads the safetensors weights into it after checking their names, shapes and
dtypes against that network. The program is only read with `trust_program=True`, because
`torch.export.load` unpickles parts of it; the network never needs it. It is there for
torch-only users of a file they trust (the bundled files hold none; `catena-zero export
convert=FILE output=NEW program=true` adds one, `rewrite_model_file`)::

    import io, zipfile, torch
    data = zipfile.ZipFile("side6.pt").read("program.pt2")
    program = torch.export.load(io.BytesIO(data)).module()    # unpickles: trusted files only
    policy_logits, value_logits, score, ownership = program(planes, globals_)
    # planes [B, P, H, W] float32, globals_ [B, G] float32 (catena_zero.rules.observe)
    # -> [B, A], [B, 3] (win/draw/loss, side to move), [B] margin points, [B, C] in [-1, 1]

A program is traced for one grid: H = `grid_size` of the metadata when it has a home
board, else that of the first track's board (a size-general network's program plays that
side only; the network itself, which `load_model_file` rebuilds, plays every side).

Format-1 files (a whole `torch.export` archive) are refused; `catena-zero export --convert`
(catena_zero.export.convert) rewrites them reading only their raw weight storages.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from catena_zero.data.atomic import atomic_write_bytes
from catena_zero.export.container import Archive, ArchiveError, read_archive, write_archive
from catena_zero.export.metadata import (
    FORMAT_NAME,
    FORMAT_VERSION,
    OUTPUT_NAMES,
    PER_SIDE_VERSION,
    READ_VERSIONS,
    ModelFileError,
    ModelMetadata,
    ModelTrack,
    lowest_version,
    metadata_for,
)
from catena_zero.network import PolicyValueNet
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES

__all__ = [
    "FORMAT_NAME", "FORMAT_VERSION", "METADATA_MEMBER", "OUTPUT_NAMES", "PROGRAM_MEMBER",
    "PER_SIDE_VERSION", "READ_VERSIONS", "WEIGHTS_MEMBER", "ModelFile", "ModelFileError",
    "ModelMetadata", "ModelTrack", "load_model_file", "lowest_version", "metadata_for",
    "read_file_bytes", "read_metadata", "rewrite_model_file", "save_model_file",
]

METADATA_MEMBER = "catena_model.json"
WEIGHTS_MEMBER = "weights.safetensors"
PROGRAM_MEMBER = "program.pt2"
MEMBERS = (METADATA_MEMBER, WEIGHTS_MEMBER, PROGRAM_MEMBER)
FORMAT1_METADATA_SUFFIX = "/extra/" + METADATA_MEMBER
# Bounds on what is read: a file or member larger than this is refused before it is used.
MAX_FILE_BYTES = 1 << 30
MAX_METADATA_BYTES = 1 << 20
# Largest batch the exported program accepts (torch.export needs a bound on dynamic dims).
MAX_BATCH = 65536
# How closely a rebuilt network or a program must reproduce the network it was made from.
TOLERANCE = 1e-4


def one_line(error: BaseException, limit: int = 200) -> str:
    """An exception's message on one line, at most `limit` characters."""
    return " ".join(str(error).split())[:limit]


def read_file_bytes(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a model file; ModelFileError when it is missing, empty, a directory,
    unreadable or larger than `max_bytes`."""
    path = Path(path)
    try:
        if path.is_dir():
            raise ModelFileError(f"model file {path}: is a directory, not a model file")
        if not path.exists():
            raise ModelFileError(f"model file {path}: does not exist")
        size = path.stat().st_size
        if size > max_bytes:
            raise ModelFileError(f"model file {path}: is {size} bytes, more than the "
                                 f"{max_bytes} a model file may have")
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        raise ModelFileError(f"model file {path}: could not be read ({one_line(error)})"
                             ) from error
    if not data:
        raise ModelFileError(f"model file {path}: is empty")
    if len(data) > max_bytes:
        raise ModelFileError(f"model file {path}: grew past {max_bytes} bytes while read")
    return data


def open_archive(path: str | Path, data: bytes) -> Archive:
    """The checked archive of a model file's bytes (every member's CRC verified)."""
    try:
        archive = read_archive(data)
        archive.check_all()
    except ArchiveError as error:
        raise ModelFileError(f"model file {path}: {error}") from None
    return archive


def parse_json(path: str | Path, archive: Archive, name: str) -> object:
    """The JSON of a member (bounded, strict UTF-8, no NaN or Infinity)."""
    if archive.size(name) > MAX_METADATA_BYTES:
        raise ModelFileError(f"model file {path}: member {name} is {archive.size(name)} bytes, "
                             f"more than the {MAX_METADATA_BYTES} metadata may have")

    def refuse_constant(text: str) -> float:
        raise ValueError(f"{text} is not a JSON number")

    try:
        return json.loads(archive.read(name).decode("utf-8"), parse_constant=refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ModelFileError(f"model file {path}: unreadable {name} ({error})") from None


def _metadata_of(path: str | Path, archive: Archive) -> ModelMetadata:
    names = archive.names()
    if METADATA_MEMBER not in archive:
        format1 = [name for name in names if name.endswith(FORMAT1_METADATA_SUFFIX)]
        if not format1:
            raise ModelFileError(f"model file {path}: not a catena-zero model "
                                 f"(no {METADATA_MEMBER} inside)")
        values = parse_json(path, archive, format1[0])
        if isinstance(values, dict) and values.get("format") == FORMAT_NAME:
            raise ModelFileError(
                f"model file {path}: format version {values.get('format_version')!r} (a "
                f"torch.export program, which only unpickling reads); this catena-zero reads "
                f"versions {', '.join(map(str, READ_VERSIONS))}: convert it with `catena-zero "
                f"export --convert {path} --output NEW.pt`")
        raise ModelFileError(f"model file {path}: not a {FORMAT_NAME} file")
    unexpected = sorted(set(names) - set(MEMBERS))
    if unexpected:
        raise ModelFileError(f"model file {path}: corrupt or not a catena-zero model "
                             f"(unexpected member {unexpected[0]!r:.80})")
    if WEIGHTS_MEMBER not in archive:
        raise ModelFileError(f"model file {path}: not a catena-zero model (no {WEIGHTS_MEMBER})")
    return ModelMetadata.from_dict(parse_json(path, archive, METADATA_MEMBER), str(path))


def read_metadata(path: str | Path) -> ModelMetadata:
    """The metadata of a model file, after checking the archive; no weights are loaded.

    Raises ModelFileError naming the file when it is missing, truncated or corrupt, not a
    catena model, or of another format version.
    """
    return _metadata_of(path, open_archive(path, read_file_bytes(path)))


@dataclass
class ModelFile:
    """A loaded model file: the rebuilt network and the metadata.

    `network` is a PolicyValueNet in eval mode on the CPU holding the file's weights;
    `program` is the file's torch.export program, loaded only with `trust_program=True`.
    """

    path: Path  # where it was loaded from
    metadata: ModelMetadata  # what the file says about itself
    network: torch.nn.Module  # PolicyValueNet with the file's weights (eval, CPU)
    program: torch.nn.Module | None = None  # the exported program (trusted loads only)

    def rules(self):
        return self.metadata.rules()

    @torch.inference_mode()
    def run(self, planes: np.ndarray, globals_: np.ndarray) -> dict[str, np.ndarray]:
        """Evaluate observations: planes [B, P, H, W], globals [B, G] -> numpy outputs by name
        ([B, A_n], [B, 3], [B], [B, C_n]). Any side n plays (H = 2n - 1): the network's
        weights have no grid-dependent tensor, whatever its home board."""
        # Observations may carry planes and globals added after this model was trained: it
        # reads its own (both are append-only).
        planes = planes[:, : self.metadata.num_planes]
        globals_ = globals_[:, : self.metadata.num_globals]
        outputs = self.network.forward_tuple(torch.as_tensor(planes, dtype=torch.float32),
                                             torch.as_tensor(globals_, dtype=torch.float32))
        return {name: value.numpy()
                for name, value in zip(OUTPUT_NAMES, outputs[: len(OUTPUT_NAMES)], strict=True)}


def _network_from(path: str | Path, metadata: ModelMetadata, weights: bytes) -> torch.nn.Module:
    """The PolicyValueNet of `metadata` holding the safetensors `weights`, in eval mode."""
    import safetensors.torch

    if metadata.num_planes > NUM_PLANES or metadata.num_globals > NUM_GLOBALS:
        raise ModelFileError(
            f"model file {path}: made for {metadata.num_planes} planes and "
            f"{metadata.num_globals} globals; this catena-zero observes {NUM_PLANES} planes "
            f"and {NUM_GLOBALS} globals (a model may read fewer of either)")
    args = metadata.network_init_args()
    try:
        # The shapes first, on the meta device: a config describing a huge network costs
        # nothing until the weights are known to fit it.
        with torch.device("meta"):
            expected = PolicyValueNet.from_init_args(args).state_dict()
    except (ValueError, TypeError, RuntimeError) as error:
        raise ModelFileError(f"model file {path}: its network cannot be built "
                             f"({one_line(error)})") from None
    try:
        tensors = safetensors.torch.load(weights)
    except Exception as error:  # safetensors reports a damaged header in several ways
        raise ModelFileError(f"model file {path}: unreadable {WEIGHTS_MEMBER} "
                             f"({one_line(error)})") from None
    missing = sorted(set(expected) - set(tensors))
    extra = sorted(set(tensors) - set(expected))
    if missing or extra:
        raise ModelFileError(f"model file {path}: its weights do not fit the network its "
                             f"metadata describes (missing {missing[:3]}, unexpected {extra[:3]})")
    for name, want in expected.items():
        have = tensors[name]
        if have.shape != want.shape or have.dtype != want.dtype:
            raise ModelFileError(
                f"model file {path}: weight {name} is {have.dtype} {tuple(have.shape)}, the "
                f"network needs {want.dtype} {tuple(want.shape)}")
        if have.is_floating_point() and not bool(torch.isfinite(have).all()):
            raise ModelFileError(f"model file {path}: weight {name} is not finite")
    net = PolicyValueNet.from_init_args(args)
    net.load_state_dict(tensors, strict=True)
    return net.eval()


def _load_from_bytes(path: str | Path, data: bytes, trust_program: bool) -> ModelFile:
    archive = open_archive(path, data)
    metadata = _metadata_of(path, archive)
    network = _network_from(path, metadata, archive.read(WEIGHTS_MEMBER))
    program = None
    if trust_program:
        if PROGRAM_MEMBER not in archive:
            raise ModelFileError(f"model file {path}: holds no {PROGRAM_MEMBER} (written only "
                                 f"on request); add one with `catena-zero export "
                                 f"convert={path} output=NEW.pt program=true`")
        try:
            program = torch.export.load(io.BytesIO(archive.read(PROGRAM_MEMBER))).module()
        except Exception as error:  # torch raises many kinds for damaged archives
            raise ModelFileError(f"model file {path}: its program could not be loaded by "
                                 f"torch {torch.__version__}: {one_line(error)}") from None
        _check_agreement(network.as_tuple_module(), program, metadata, seed=1,
                         failure=lambda text: f"model file {path}: its program {text}")
    return ModelFile(path=Path(path), metadata=metadata, network=network, program=program)


def load_model_file(path: str | Path, *, trust_program: bool = False) -> ModelFile:
    """Load a model file; ModelFileError (naming the file and the problem) if it is unusable.

    Nothing in the file is unpickled or run unless `trust_program` is true: then its
    torch.export program is loaded too (torch unpickles parts of it; only for files you
    trust) and checked against the network.
    """
    return _load_from_bytes(path, read_file_bytes(path), trust_program)


def _check_agreement(expected_module: torch.nn.Module, module: torch.nn.Module,
                     metadata: ModelMetadata, *, seed: int,
                     failure: Callable[[str], str], batches: tuple[int, ...] = (1, 5)) -> None:
    """Raise ModelFileError(failure(...)) unless `module` reproduces `expected_module`."""
    generator = torch.Generator().manual_seed(seed)
    size = metadata.program_grid_size
    with torch.no_grad():
        for batch in batches:
            planes = torch.rand((batch, metadata.num_planes, size, size), generator=generator)
            globals_ = torch.rand((batch, metadata.num_globals), generator=generator)
            expected = expected_module(planes, globals_)
            got = module(planes, globals_)
            for name, want, have in zip(OUTPUT_NAMES, expected, got, strict=True):
                if want.shape != have.shape or not torch.allclose(want, have, atol=TOLERANCE):
                    raise ModelFileError(failure(f"disagrees with the network on {name} at "
                                                 f"batch {batch}"))


def _export_program(net: torch.nn.Module, metadata: ModelMetadata) -> bytes:
    """The torch.export program of `net` (outputs as a tuple), serialised, with the metadata
    as its extra file `catena_model.json` for torch-only readers."""
    wrapper = net.as_tuple_module().eval()
    generator = torch.Generator().manual_seed(0)
    size = metadata.program_grid_size
    sample = (torch.rand((2, metadata.num_planes, size, size), generator=generator),
              torch.rand((2, metadata.num_globals), generator=generator))
    batch_dim = torch.export.Dim("batch", min=1, max=MAX_BATCH)
    with torch.no_grad():
        program = torch.export.export(
            wrapper, sample, dynamic_shapes=({0: batch_dim}, {0: batch_dim}), strict=False
        )
    _check_agreement(wrapper, program.module(), metadata, seed=0,
                     failure=lambda text: f"exported program {text}")
    buffer = io.BytesIO()  # torch.export wants a buffer or a name ending in .pt2
    torch.export.save(program, buffer, extra_files={METADATA_MEMBER: metadata.to_json()})
    return buffer.getvalue()


def save_model_file(net: torch.nn.Module, metadata: ModelMetadata, path: str | Path, *,
                    program: bool = False) -> Path:
    """Write `net` (a PolicyValueNet; the caller's copy keeps its device and mode) and its
    metadata to `path`, atomically; with `program` also its torch.export program.

    The file is written in `lowest_version(metadata)` (2 for a per-side network's one
    track, else 3), whatever `metadata.format_version` says. Raises ModelFileError, writing
    nothing, when the metadata does not describe `net` or the written file would not
    reproduce it.
    """
    import safetensors.torch

    path = Path(path)
    net = copy.deepcopy(net).to("cpu").eval()
    metadata = dataclasses.replace(metadata, format_version=lowest_version(metadata))
    described = ModelMetadata.from_dict(json.loads(metadata.to_json()), str(path))
    if net.init_args != described.network_init_args():
        raise ModelFileError(f"model file {path}: the metadata does not describe this network "
                             f"(network {net.config.to_dict()}, metadata {metadata.network})")
    weights = {name: tensor.detach().contiguous() for name, tensor in net.state_dict().items()}
    members = [(METADATA_MEMBER, metadata.to_json().encode("utf-8")),
               (WEIGHTS_MEMBER, safetensors.torch.save(weights))]
    if program:
        members.append((PROGRAM_MEMBER, _export_program(net, metadata)))
    data = write_archive(members)
    # What is written must load back, through the reader, as this network.
    loaded = _load_from_bytes(path, data, trust_program=False)
    _check_agreement(net.as_tuple_module(), loaded.network.as_tuple_module(), metadata,
                     seed=2, failure=lambda text: f"model file {path}: the written network "
                     f"{text}")
    atomic_write_bytes(path, data)
    return path


def rewrite_model_file(source: str | Path, target: str | Path, *,
                       program: bool = False) -> ModelMetadata:
    """Write the current-format model file `source` to `target` (atomically; it may be
    `source`) with its metadata and weights members copied byte for byte, and its
    torch.export program made afresh from the loaded network with `program`, else left out;
    returns the metadata. The file is fully checked first (never unpickled: an old program
    is dropped unread), so a damaged one raises ModelFileError and nothing is written."""
    data = read_file_bytes(source)
    model = _load_from_bytes(source, data, trust_program=False)
    archive = open_archive(source, data)
    members = [(name, archive.read(name)) for name in (METADATA_MEMBER, WEIGHTS_MEMBER)]
    if program:
        members.append((PROGRAM_MEMBER, _export_program(model.network, model.metadata)))
    written = write_archive(members)
    _load_from_bytes(target, written, trust_program=False)  # what is written loads back
    atomic_write_bytes(target, written)
    return model.metadata
