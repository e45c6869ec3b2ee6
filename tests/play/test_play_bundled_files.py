"""The bundled model files stay small: each holds its metadata and weights only (no
torch.export program, which is about two thirds of a file and which nothing in the project
reads), within the budget of docs/reference/export.md (#size-budget)."""

from __future__ import annotations

import zipfile

from catena_zero.export.model_file import METADATA_MEMBER, WEIGHTS_MEMBER, load_model_file
from catena_zero.play.bundled import BUNDLED_DIRECTORY

# The budget docs/reference/export.md states: a bundled model adds at most 1 MiB, and the
# bundled models together stay under 4 MiB.
MAX_BUNDLED_FILE_BYTES = 1 << 20
MAX_BUNDLED_TOTAL_BYTES = 4 << 20


def bundled_files():
    files = sorted(BUNDLED_DIRECTORY.glob("*.pt"))
    assert files, f"no bundled model file in {BUNDLED_DIRECTORY}"
    return files


def test_every_bundled_file_holds_metadata_and_weights_only():
    for path in bundled_files():
        assert zipfile.ZipFile(path).namelist() == [METADATA_MEMBER, WEIGHTS_MEMBER], path.name
        load_model_file(path)  # and it loads


def test_bundled_files_keep_to_the_size_budget():
    sizes = {path.name: path.stat().st_size for path in bundled_files()}
    over = {name: size for name, size in sizes.items() if size > MAX_BUNDLED_FILE_BYTES}
    assert not over, f"bundled files over {MAX_BUNDLED_FILE_BYTES} bytes: {over}"
    assert sum(sizes.values()) <= MAX_BUNDLED_TOTAL_BYTES, sizes
