"""Convert a format-1 model file (a whole `torch.export` archive) to the current format.

    convert_model_file("old-side6.pt", "side6.pt")     # -> the new file's ModelMetadata
    catena-zero export --convert old-side6.pt --output side6.pt
    catena-zero export convert=side6.pt output=side6.pt               # drop its program
    catena-zero export convert=side6.pt output=program.pt program=true  # add one

A current-format source is rewritten with its metadata and weights copied byte for byte and
its torch.export program left out, or made afresh with `program` (rewrite_model_file).

Nothing in the old file is unpickled. `torch.export.save` lays a program out as

    archive/extra/catena_model.json                  the format-1 metadata (JSON)
    archive/data/weights/model_weights_config.json   name -> storage member, dtype, sizes,
                                                     strides, storage offset (JSON)
    archive/data/weights/weight_<i>                  raw little-endian tensor storages
    archive/models/model.json, archive/data/sample_inputs/..., constants, ...

and only the first three are read: each tensor of the network the metadata describes is cut
out of its raw storage with the stated view, after the view is checked to lie inside it.
An entry marked `use_pickle` (torch's fallback for exotic tensors) is refused, never read.
The graph, the sample inputs and the constants (the network's masks, which it rebuilds) are
ignored. The Elo, training steps, source and creation time carry over.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch

from catena_zero.export.metadata import (
    ARCHITECTURE,
    FORMAT_NAME,
    PER_SIDE_VERSION,
    ModelFileError,
    ModelMetadata,
)
from catena_zero.export.model_file import (
    FORMAT1_METADATA_SUFFIX,
    METADATA_MEMBER,
    one_line,
    open_archive,
    parse_json,
    read_file_bytes,
    rewrite_model_file,
    save_model_file,
)
from catena_zero.network import PolicyValueNet

FORMAT1 = 1
WEIGHTS_CONFIG = "data/weights/model_weights_config.json"
WEIGHTS_DIRECTORY = "data/weights/"
# torch.export's serialised ScalarType codes (torch/_export/serde/schema.py) of the dtypes a
# PolicyValueNet state dict can hold.
SCALAR_TYPES = {4: torch.int32, 5: torch.int64, 6: torch.float16, 7: torch.float32,
                8: torch.float64, 12: torch.bool, 13: torch.bfloat16}
# The module name torch.export gave the network inside the program (the tuple wrapper's).
NETWORK_PREFIX = "net."


def _integers(path: Path, name: str, values: Any, what: str) -> list[int]:
    """[{"as_int": n}, ...] -> [n, ...] (torch.export's encoding of sizes and strides)."""
    if not isinstance(values, list):
        raise ModelFileError(f"model file {path}: weight {name} has no list of {what}")
    numbers = []
    for value in values:
        number = value.get("as_int") if isinstance(value, dict) else None
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise ModelFileError(f"model file {path}: weight {name} has {what} {values!r:.80} "
                                 "(only fixed non-negative integers are read)")
        numbers.append(number)
    return numbers


def _tensor(path: Path, archive, prefix: str, name: str, entry: Any,
            want: torch.Tensor) -> torch.Tensor:
    """The tensor `name` cut out of its raw storage member, checked against `want`."""
    if not isinstance(entry, dict) or not isinstance(entry.get("tensor_meta"), dict):
        raise ModelFileError(f"model file {path}: weight {name} is not described")
    if entry.get("use_pickle") is not False:
        raise ModelFileError(f"model file {path}: weight {name} is stored as a pickle, "
                             "which is never read; re-export the model from its checkpoint")
    meta = entry["tensor_meta"]
    dtype = SCALAR_TYPES.get(meta.get("dtype"))
    sizes = _integers(path, name, meta.get("sizes"), "sizes")
    strides = _integers(path, name, meta.get("strides"), "strides")
    (offset,) = _integers(path, name, [meta.get("storage_offset")], "storage offset")
    if dtype != want.dtype or tuple(sizes) != tuple(want.shape) or len(strides) != len(sizes):
        raise ModelFileError(f"model file {path}: weight {name} is {dtype} {sizes}, the "
                             f"network needs {want.dtype} {list(want.shape)}")
    member = prefix + WEIGHTS_DIRECTORY + str(entry.get("path_name"))
    if member not in archive:
        raise ModelFileError(f"model file {path}: weight {name} names a missing storage "
                             f"{member!r:.80}")
    raw = archive.read(member)
    itemsize = torch.empty((), dtype=dtype).element_size()
    if len(raw) % itemsize:
        raise ModelFileError(f"model file {path}: the storage of weight {name} is not a "
                             f"whole number of {dtype} elements")
    extent = offset + sum((size - 1) * stride for size, stride in zip(sizes, strides,
                                                                       strict=True)) + 1
    if 0 not in sizes and extent > len(raw) // itemsize:
        raise ModelFileError(f"model file {path}: weight {name} reaches past its storage")
    if not raw:
        return torch.empty(sizes, dtype=dtype)
    storage = torch.frombuffer(bytearray(raw), dtype=dtype)
    tensor = storage.as_strided(sizes, strides, offset).clone()
    if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
        raise ModelFileError(f"model file {path}: weight {name} is not finite")
    return tensor


def _format1_metadata(path: Path, values: dict) -> ModelMetadata:
    """The current metadata of format-1 `values` (flat fields -> one track)."""
    track_fields = ("side", "game_type", "scoring", "komi_range", "elo", "elo_reference")
    track = {key: values[key] for key in track_fields if key in values}
    current = {key: value for key, value in values.items() if key not in track_fields}
    # A format-1 file is one side's network on its one track: version 2 holds it. The new
    # file's program (if any) is written by this torch.
    current.update(tracks=[track], format_version=PER_SIDE_VERSION, architecture=ARCHITECTURE,
                   torch_version=torch.__version__)
    return ModelMetadata.from_dict(current, str(path))


def read_format1_network(path: str | Path) -> tuple[torch.nn.Module, ModelMetadata]:
    """(PolicyValueNet with the weights of the format-1 file, its metadata in the current
    format); ModelFileError when the file is not a readable format-1 model file."""
    path = Path(path)
    if sys.byteorder != "little":  # the raw storages are little-endian
        raise ModelFileError(f"model file {path}: format-1 files are converted on "
                             "little-endian machines only")
    archive = open_archive(path, read_file_bytes(path))
    if METADATA_MEMBER in archive:
        raise ModelFileError(f"model file {path}: already in the current format")
    found = [name for name in archive.names() if name.endswith(FORMAT1_METADATA_SUFFIX)]
    if not found:
        raise ModelFileError(f"model file {path}: not a catena-zero model "
                             f"(no {METADATA_MEMBER} inside)")
    prefix = found[0][: -len(FORMAT1_METADATA_SUFFIX)] + "/"
    values = parse_json(path, archive, found[0])
    if not isinstance(values, dict) or values.get("format") != FORMAT_NAME:
        raise ModelFileError(f"model file {path}: not a {FORMAT_NAME} file")
    if values.get("format_version") != FORMAT1:
        raise ModelFileError(f"model file {path}: format version "
                             f"{values.get('format_version')!r:.20}, not {FORMAT1}")
    metadata = _format1_metadata(path, values)
    byteorder = prefix + "byteorder"
    if byteorder in archive and archive.read(byteorder).strip() != b"little":
        raise ModelFileError(f"model file {path}: its weights are not little-endian")
    if prefix + WEIGHTS_CONFIG not in archive:
        raise ModelFileError(f"model file {path}: has no {prefix + WEIGHTS_CONFIG}")
    config = parse_json(path, archive, prefix + WEIGHTS_CONFIG)
    entries = config.get("config") if isinstance(config, dict) else None
    if not isinstance(entries, dict):
        raise ModelFileError(f"model file {path}: unreadable {prefix + WEIGHTS_CONFIG}")
    args = metadata.network_init_args()
    try:
        with torch.device("meta"):  # the shapes only (see model_file._network_from)
            expected = PolicyValueNet.from_init_args(args).state_dict()
    except (ValueError, TypeError, RuntimeError) as error:
        raise ModelFileError(f"model file {path}: its network cannot be built "
                             f"({one_line(error)})") from None
    weights = {}
    for name, want in expected.items():
        key = NETWORK_PREFIX + name
        if key not in entries:
            raise ModelFileError(f"model file {path}: has no weight {key} for the network "
                                 "its metadata describes")
        weights[name] = _tensor(path, archive, prefix, key, entries[key], want)
    net = PolicyValueNet.from_init_args(args)
    net.load_state_dict(weights, strict=True)
    return net.eval(), metadata


def convert_model_file(source: str | Path, target: str | Path, *,
                       program: bool = False) -> ModelMetadata:
    """Rewrite the model file `source` as a current one at `target` (atomically; `target`
    may be `source`), with its metadata kept, and a torch.export program only with
    `program`; returns the new metadata. A current-format source keeps its metadata and
    weights members byte for byte (rewrite_model_file)."""
    if METADATA_MEMBER in open_archive(source, read_file_bytes(source)):
        return rewrite_model_file(source, target, program=program)
    net, metadata = read_format1_network(source)
    save_model_file(net, metadata, target, program=program)
    return metadata
