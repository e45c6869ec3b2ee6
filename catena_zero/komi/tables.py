"""CSV files of the komi module: atomic writes, typed reads (numbers become floats/ints).

Every CSV starts with a `# catena_zero komi csv v1` line, so readers can refuse files of
another format version.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from catena_zero.data.atomic import atomic_write_text

FORMAT_LINE = "# catena_zero komi csv v1"


def write_csv(path: str | Path, rows: list[dict], fieldnames: list[str] | None = None) -> Path:
    """Write rows atomically (temp file + os.replace); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fieldnames = fieldnames or (list(rows[0]) if rows else [])
    buffer = io.StringIO()
    buffer.write(FORMAT_LINE + "\n")
    writer = csv.DictWriter(buffer, fieldnames=fieldnames, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: _format(row.get(key)) for key in fieldnames})
    atomic_write_text(path, buffer.getvalue())
    return path


def _format(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float | np.floating):
        return repr(float(value))
    return str(value)


def _parse(text: str):
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_csv(path: str | Path) -> list[dict]:
    """Rows of a komi CSV with numbers parsed; ValueError for another format version."""
    path = Path(path)
    lines = path.read_text().splitlines()
    if not lines or lines[0].strip() != FORMAT_LINE:
        raise ValueError(f"{path} is not a catena_zero komi csv v1 file "
                         f"(first line {lines[0] if lines else ''!r})")
    return [{key: _parse(value) for key, value in row.items()}
            for row in csv.DictReader(lines[1:])]


def columns(rows: list[dict]) -> dict[str, np.ndarray]:
    """Rows as column arrays (None becomes NaN in numeric columns)."""
    if not rows:
        return {}
    result = {}
    for key in rows[0]:
        values = [row[key] for row in rows]
        if all(isinstance(v, int | float) or v is None for v in values):
            result[key] = np.array([np.nan if v is None else v for v in values])
        else:
            result[key] = np.array(values, dtype=object)
    return result
