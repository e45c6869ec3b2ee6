"""Nothing in a model file runs: a pickle whose unpickling would leave a marker file is put
in every member a model file has (and in the members of its program, of a format-1 file, as
the whole file, as a torch.save archive); each file is refused with one ModelFileError or
loaded without ever reading the pickle, and the marker never appears."""

from __future__ import annotations

import io
import pathlib
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.export.convert import read_format1_network
from catena_zero.export.model_file import (
    PROGRAM_MEMBER,
    ModelFileError,
    load_model_file,
    read_metadata,
)
from catena_zero.play.bundled import ModelLibrary
from catena_zero.rules import NUM_GLOBALS
from tests.export.archives import rewrite_archive
from tests.export.format1 import format1_model_file
from tests.export.tiny_model import tiny_general_model_file, tiny_model_file

# A per-side file (format version 2) and a size-general one (version 3): the same members.
KINDS = {"per-side": lambda: tiny_model_file(3), "general": tiny_general_model_file}


class _Payload:
    """Unpickling this touches `marker` (it could as well run any command)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.marker),))


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "payload-ran"


def _payload(marker: Path) -> bytes:
    return pickle.dumps(_Payload(marker))


def _torch_save_payload(marker: Path) -> bytes:
    """A torch.save archive (zip with data.pkl) whose pickle is the payload."""
    buffer = io.BytesIO()
    torch.save({"weights": _Payload(marker)}, buffer)
    return buffer.getvalue()


def test_the_payload_is_live(marker: Path) -> None:
    """The payload does run when unpickled (so its absence below means something)."""
    pickle.loads(_payload(marker))
    assert marker.exists()
    marker.unlink()
    with zipfile.ZipFile(io.BytesIO(_torch_save_payload(marker))) as archive:
        assert any(name.endswith("data.pkl") for name in archive.namelist())


def _members(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        return archive.namelist()


def _outcome(path: Path, marker: Path) -> str:
    """'refused' or 'loaded' (a load must work); the payload must not have run."""
    try:
        model = load_model_file(path)
        model.run(np.zeros((1, 11, 5, 5), np.float32), np.zeros((1, NUM_GLOBALS), np.float32))
        ModelLibrary(path).describe(model.metadata.side)
        outcome = "loaded"
    except ModelFileError as error:
        assert str(path) in str(error) and "\n" not in str(error)
        outcome = "refused"
    assert not marker.exists(), f"the payload ran while loading {path}"
    return outcome


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("member", _members(tiny_model_file(3)))
def test_a_pickle_in_any_member_never_runs(member: str, kind: str, marker: Path,
                                           tmp_path: Path) -> None:
    assert _members(KINDS[kind]()) == _members(tiny_model_file(3))
    hostile = tmp_path / "hostile.pt"
    payload = _payload(marker)
    rewrite_archive(KINDS[kind](), hostile,
                    lambda name, data: payload if name == member else data)
    expected = "loaded" if member == PROGRAM_MEMBER else "refused"
    assert _outcome(hostile, marker) == expected


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_pickle_in_every_member_of_the_program_never_runs(kind: str, marker: Path,
                                                            tmp_path: Path) -> None:
    """The program's own members (its pickled sample inputs, its graph, its weights) are
    never read: all of them replaced by the payload, the file still loads."""
    with zipfile.ZipFile(KINDS[kind]()) as archive:
        program = archive.read(PROGRAM_MEMBER)
    inner = tmp_path / "program.pt2"
    inner.write_bytes(program)
    assert any("sample_inputs" in name for name in _members(inner))
    payload = _payload(marker)
    rewrite_archive(inner, tmp_path / "hostile-program.pt2", lambda name, data: payload)
    hostile_program = (tmp_path / "hostile-program.pt2").read_bytes()
    hostile = tmp_path / "hostile.pt"
    rewrite_archive(KINDS[kind](), hostile,
                    lambda name, data: hostile_program if name == PROGRAM_MEMBER else data)
    assert _outcome(hostile, marker) == "loaded"


@pytest.mark.parametrize("kind", ["pickle", "torch.save"])
def test_a_whole_file_pickle_is_refused(kind: str, marker: Path, tmp_path: Path) -> None:
    hostile = tmp_path / "hostile.pt"
    hostile.write_bytes(_payload(marker) if kind == "pickle" else _torch_save_payload(marker))
    assert _outcome(hostile, marker) == "refused"
    with pytest.raises(ModelFileError):
        read_metadata(hostile)
    assert not marker.exists()


def test_format1_files_are_refused_and_converted_without_unpickling(marker: Path,
                                                                    tmp_path: Path) -> None:
    """Each serialised member of a format-1 file (every member but the raw storages, of
    which the first weight and constant stand for the rest) replaced by the payload: loading
    refuses the file, the converter refuses it or reads its weights; the payload never runs."""
    source = format1_model_file(3)
    payload = _payload(marker)
    members = [name for name in _members(source)
               if not name.split("/")[-1].startswith(("weight_", "tensor_"))]
    members += ["archive/data/weights/weight_0", "archive/data/constants/tensor_0"]
    assert "archive/data/sample_inputs/model.pt" in members
    converted = 0
    for member in members:
        hostile = tmp_path / "hostile-format1.pt"
        rewrite_archive(source, hostile,
                        lambda name, data, member=member: payload if name == member else data)
        assert _outcome(hostile, marker) == "refused", member
        try:
            read_format1_network(hostile)
            converted += 1
        except ModelFileError as error:
            assert str(hostile) in str(error)
        assert not marker.exists(), member
    # The graph, sample inputs and constants are not needed: those files still convert.
    assert converted >= 3


def test_a_format1_weight_marked_as_pickle_is_refused(marker: Path, tmp_path: Path) -> None:
    import json

    def mark_pickled(name: str, data: bytes) -> bytes:
        if not name.endswith("model_weights_config.json"):
            return data
        config = json.loads(data)
        first = next(iter(config["config"].values()))
        first["use_pickle"] = True
        return json.dumps(config).encode()

    hostile = tmp_path / "pickled-weight.pt"
    rewrite_archive(format1_model_file(3), hostile, mark_pickled)
    with pytest.raises(ModelFileError, match="stored as a pickle, which is never read"):
        read_format1_network(hostile)
    assert not marker.exists()
