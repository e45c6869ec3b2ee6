"""Rewriting model archives for tests: replace or change members, with valid CRCs."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

from catena_zero.export.model_file import METADATA_MEMBER


def rewrite_archive(source: Path, target: Path,
                    change: Callable[[str, bytes], bytes | None]) -> None:
    """Copy the zip `source` to `target`, each member's data passed through `change(name,
    data)` (None drops the member); the CRCs are those of the new data."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            data = change(item.filename, old.read(item.filename))
            if data is not None:
                new.writestr(zipfile.ZipInfo(item.filename, date_time=(1980, 1, 1, 0, 0, 0)),
                             data)


def rewrite_metadata(source: Path, target: Path, change: Callable[[dict], None]) -> None:
    """Copy a model file with its metadata JSON changed in place by `change(values)`."""

    def edit(name: str, data: bytes) -> bytes:
        if name != METADATA_MEMBER:
            return data
        values = json.loads(data)
        change(values)
        return json.dumps(values).encode()

    rewrite_archive(source, target, edit)
