"""Damaged model files: every kind is refused with one ModelFileError naming the file, and
the CLI prints it as one line (no traceback, non-zero exit). The damage runs on a per-side
file (format version 2) and on a size-general one (version 3) alike."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.cli.main import main as cli_main
from catena_zero.export.model_file import (
    METADATA_MEMBER,
    WEIGHTS_MEMBER,
    ModelFileError,
    load_model_file,
)
from catena_zero.rules import NUM_GLOBALS
from tests.export.archives import rewrite_archive, rewrite_metadata
from tests.export.format1 import format1_model_file
from tests.export.tiny_model import tiny_general_model_file, tiny_model_file

KINDS = {"per-side": lambda program=True: tiny_model_file(3, program=program),
         "general": lambda program=True: tiny_general_model_file(program=program)}


@pytest.fixture(scope="module")
def model_path() -> Path:
    torch.set_num_threads(1)
    return tiny_model_file(3)


@pytest.fixture(scope="module", params=list(KINDS))
def any_model_path(request) -> Path:
    """A per-side model file, then a size-general one."""
    torch.set_num_threads(1)
    return KINDS[request.param]()


def _layout(path: Path) -> dict[str, int]:
    """Offsets of the places a damage table aims at (zipfile only reads the good file)."""
    data = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        infos = {item.filename: item for item in archive.infolist()}
    central = data.rfind(b"PK\x01\x02", 0, data.rfind(b"PK\x05\x06"))
    json_info, weights_info = infos[METADATA_MEMBER], infos[WEIGHTS_MEMBER]
    first_central = data.find(b"PK\x01\x02")
    return {
        "json name (local)": json_info.header_offset + 30,
        "weights name (local)": weights_info.header_offset + 30 + 3,
        "json name (central)": first_central + 46 + 5,
        "last name (central)": central + 46 + 2,
        "json data": json_info.header_offset + 30 + len(METADATA_MEMBER) + json_info.file_size // 2,
        "json first byte": json_info.header_offset + 30 + len(METADATA_MEMBER),
        "weights header": weights_info.header_offset + 30 + len(WEIGHTS_MEMBER) + 10,
        "weights data": weights_info.header_offset + 30 + len(WEIGHTS_MEMBER)
        + weights_info.file_size - 7,
        "program data": infos["program.pt2"].header_offset + 2000,
        "local crc": weights_info.header_offset + 14,
        "local size": weights_info.header_offset + 19,
        "local name length": json_info.header_offset + 26,
        "central size": first_central + 20,
        "central header offset": first_central + 42,
        "end record entries": len(data) - 22 + 10,
        "end record directory offset": len(data) - 22 + 16,
        "first byte": 0,
        "last byte": len(data) - 1,
    }


def _refused(path: Path) -> str:
    with pytest.raises(ModelFileError) as caught:
        load_model_file(path)
    message = str(caught.value)
    assert str(path) in message and "\n" not in message, message
    return message


@pytest.mark.parametrize("cut", [1, 4, 21, 22, 23, 100, 1000, "half", "all but 30",
                                 "all but 1"])
def test_truncations_are_refused_as_truncated(any_model_path: Path, tmp_path: Path,
                                              cut) -> None:
    data = any_model_path.read_bytes()
    keep = {"half": len(data) // 2, "all but 30": 30, "all but 1": 1}.get(cut)
    keep = len(data) - cut if keep is None else keep
    damaged = tmp_path / "truncated.pt"
    damaged.write_bytes(data[:keep])
    assert "truncated" in _refused(damaged)


@pytest.mark.parametrize("place", list(_layout(tiny_model_file(3))))
def test_flipped_bytes_are_refused(any_model_path: Path, tmp_path: Path, place: str) -> None:
    data = bytearray(any_model_path.read_bytes())
    data[_layout(any_model_path)[place]] ^= 0x80  # 0x80 makes an ASCII name byte invalid UTF-8
    damaged = tmp_path / "flipped.pt"
    damaged.write_bytes(bytes(data))
    assert any(word in _refused(damaged) for word in ("corrupt", "truncated"))


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_flip_of_structure_is_refused_or_harmless(tmp_path: Path, kind: str) -> None:
    """A sweep: each flipped byte of the local headers, the central directory and the end
    record (and every 7th metadata byte, every 97th weight byte) is refused with one
    ModelFileError, or the file still loads and computes exactly what the good one does
    (the zip's cosmetic fields: version made by, file attributes)."""
    good = KINDS[kind](program=False)
    data = good.read_bytes()
    with zipfile.ZipFile(good) as archive:
        spans = {item.filename: (item.header_offset + 30 + len(item.filename),
                                 item.header_offset + 30 + len(item.filename) + item.file_size)
                 for item in archive.infolist()}
    offsets = [offset for offset in range(len(data))
               if not any(start <= offset < end for start, end in spans.values())]
    offsets += list(range(*spans[METADATA_MEMBER], 7)) + list(range(*spans[WEIGHTS_MEMBER], 97))
    rng = np.random.default_rng(0)
    planes = rng.random((2, 11, 5, 5), dtype=np.float32)
    globals_ = rng.random((2, NUM_GLOBALS), dtype=np.float32)
    expected = load_model_file(good).run(planes, globals_)
    damaged = tmp_path / "flipped.pt"
    harmless = []
    for offset in offsets:
        flipped = bytearray(data)
        flipped[offset] ^= 0xFF
        damaged.write_bytes(bytes(flipped))
        try:
            model = load_model_file(damaged)
        except ModelFileError as error:
            assert str(damaged) in str(error) and "\n" not in str(error)
            continue
        harmless.append(offset)
        out = model.run(planes, globals_)
        for name, value in expected.items():
            np.testing.assert_array_equal(out[name], value, err_msg=f"offset {offset}")
    # Only the central directory's own fields no other copy repeats: version made by (bytes
    # 4-5 of an entry) and the internal and external file attributes (36-41).
    entries = [data.find(b"PK\x01\x02")]
    entries.append(data.find(b"PK\x01\x02", entries[0] + 1))
    cosmetic = {entry + field for entry in entries for field in (4, 5, *range(36, 42))}
    assert set(harmless) <= cosmetic, f"flips at {sorted(set(harmless) - cosmetic)} went unnoticed"


def test_missing_empty_directory_foreign_and_other_version(model_path: Path,
                                                           tmp_path: Path) -> None:
    assert "does not exist" in _refused(tmp_path / "missing.pt")
    (tmp_path / "empty.pt").write_bytes(b"")
    assert "is empty" in _refused(tmp_path / "empty.pt")
    (tmp_path / "folder.pt").mkdir()
    assert "is a directory" in _refused(tmp_path / "folder.pt")
    foreign = tmp_path / "foreign.pt"
    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("README.txt", "a zip of something else")
    assert "not a catena-zero model" in _refused(foreign)
    compressed = tmp_path / "compressed.pt"
    with zipfile.ZipFile(model_path) as old, zipfile.ZipFile(compressed, "w") as new:
        for item in old.infolist():
            new.writestr(item.filename, old.read(item.filename), zipfile.ZIP_DEFLATED)
    assert "compressed" in _refused(compressed)
    version = tmp_path / "version.pt"
    rewrite_metadata(model_path, version, lambda values: values.update(format_version=4))
    assert "format version 4" in _refused(version)
    old = _refused(format1_model_file(3))
    assert "format version 1" in old and "catena-zero export --convert" in old


def _set_network(key: str, value):
    return lambda values: values["network"].update({key: value})


HOSTILE_METADATA = {
    "side out of range": (lambda values: values["tracks"][0].update(side=99), "side"),
    "side a string": (lambda values: values["tracks"][0].update(side="3"), "side must be int"),
    "no tracks": (lambda values: values.update(tracks=[]), "exactly one track"),
    "two tracks": (lambda values: values.update(tracks=values["tracks"] * 2),
                   "exactly one track"),
    "unknown game type": (lambda values: values["tracks"][0].update(game_type="go"),
                          "not a valid rule set"),
    "grid of another side": (lambda values: values.update(grid_size=7), "do not fit side 3"),
    "version true": (lambda values: values.update(format_version=True), "format version"),
    "channels a string": (_set_network("channels", "8"), "network config is not valid"),
    "unknown network key": (_set_network("layers", 3), "network config is not valid"),
    "outputs renamed": (lambda values: values.update(outputs=["a", "b", "c", "d"]),
                        "outputs"),
    "other architecture": (lambda values: values.update(architecture="os.system"),
                           "architecture"),
    "negative steps": (lambda values: values.update(training_steps=-1), "training_steps"),
    "planes beyond the observation": (lambda values: values.update(num_planes=4000),
                                      "planes"),
    "no network": (lambda values: values.pop("network"), "lacks network"),
    "not an object": (lambda values: values.clear() or values.update(format=[1]),
                      "not a catena-zero-model file"),
}


@pytest.mark.parametrize("case", list(HOSTILE_METADATA))
def test_hostile_metadata_is_refused(model_path: Path, tmp_path: Path, case: str) -> None:
    change, message = HOSTILE_METADATA[case]
    damaged = tmp_path / "hostile.pt"
    rewrite_metadata(model_path, damaged, change)
    assert message in _refused(damaged)


@pytest.mark.parametrize("text", [b"[" * 100000 + b"]" * 100000, b'{"elo": NaN}',
                                  b"\xff\xfe not utf-8", b" " * (2 << 20)],
                         ids=["deeply nested", "NaN", "not UTF-8", "over 1 MiB"])
def test_unparsable_or_oversized_metadata_is_refused(model_path: Path, tmp_path: Path,
                                                     text: bytes) -> None:
    damaged = tmp_path / "json.pt"
    rewrite_archive(model_path, damaged,
                    lambda name, data: text if name == METADATA_MEMBER else data)
    assert any(word in _refused(damaged) for word in ("unreadable", "more than"))


def _corrupt_files(model_path: Path, directory: Path) -> dict[str, Path]:
    data = model_path.read_bytes()
    truncated = directory / "truncated.pt"
    truncated.write_bytes(data[:-100])
    name_flip = directory / "name-flip.pt"
    flipped = bytearray(data)
    flipped[30] ^= 0x80  # the first member name's first byte, in its local header
    name_flip.write_bytes(bytes(flipped))
    (directory / "folder.pt").mkdir()
    return {"truncated": truncated, "name flip": name_flip, "format 1": format1_model_file(3),
            "directory": directory / "folder.pt", "missing": directory / "missing.pt"}


def test_cli_prints_one_line_for_a_corrupt_model(any_model_path: Path, tmp_path: Path,
                                                 capsys) -> None:
    files = _corrupt_files(any_model_path, tmp_path)
    runs = [("gtp", kind) for kind in files] + [("play", "truncated"), ("serve", "name flip")]
    for command, kind in runs:
        path = files[kind]
        assert cli_main([command, "--model", str(path)]) == 1, (kind, command)
        captured = capsys.readouterr()
        lines = captured.err.strip().split("\n")
        assert len(lines) == 1 and "Traceback" not in captured.err, (kind, captured.err)
        assert lines[0].startswith(f"catena-zero {command}: error: model file {path}"), lines[0]
        assert "config error" not in lines[0] and captured.out == ""


@pytest.mark.slow
def test_cli_process_exits_without_a_traceback(model_path: Path, tmp_path: Path) -> None:
    truncated = _corrupt_files(model_path, tmp_path)["truncated"]
    done = subprocess.run([sys.executable, "-m", "catena_zero.cli.main", "gtp", "--model",
                           str(truncated)], input="quit\n", capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "truncated" in done.stderr
    assert done.stdout == ""


def test_layout_offsets_point_where_they_say(model_path: Path) -> None:
    """The damage table aims at real structure (so the refusals above are about it)."""
    data = model_path.read_bytes()
    offsets = _layout(model_path)
    assert data[offsets["json name (local)"]:][:len(METADATA_MEMBER)] == METADATA_MEMBER.encode()
    assert struct.unpack_from("<I", data, offsets["local crc"] - 0)[0] != 0
    values = json.loads(data[offsets["json first byte"]:][:zipfile.ZipFile(model_path)
                                                           .getinfo(METADATA_MEMBER).file_size])
    assert values["format_version"] == 2


def test_zip_bombs_and_absurd_sizes_are_refused(any_model_path: Path, tmp_path: Path) -> None:
    """Nothing is inflated and no declared size is believed beyond the file's own bytes."""
    model_path = any_model_path
    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(model_path) as old, zipfile.ZipFile(bomb, "w") as new:
        for item in old.infolist():
            data = old.read(item.filename)
            if item.filename == WEIGHTS_MEMBER:
                data += bytes(64 << 20)  # 64 MiB of zeros, deflated to a few KiB
            new.writestr(item.filename, data, zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 1 << 20
    assert "compressed" in _refused(bomb)
    data = bytearray(model_path.read_bytes())
    with zipfile.ZipFile(model_path) as archive:
        weights = archive.getinfo(WEIGHTS_MEMBER)
    central = data.rfind(WEIGHTS_MEMBER.encode()) - 46  # its central directory entry
    assert data[central: central + 4] == b"PK\x01\x02"
    for start in (weights.header_offset + 18, central + 20):  # local and central sizes
        struct.pack_into("<II", data, start, 0x7FFFFFF0, 0x7FFFFFF0)
    huge = tmp_path / "huge-size.pt"
    huge.write_bytes(bytes(data))
    assert "truncated or corrupt" in _refused(huge)
    from catena_zero.export.model_file import read_file_bytes

    with pytest.raises(ModelFileError, match="more than the 1000 a model file may have"):
        read_file_bytes(model_path, max_bytes=1000)
