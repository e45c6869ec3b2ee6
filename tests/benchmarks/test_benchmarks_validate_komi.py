"""benchmarks/validate_komi_side3.py: side 3's fair-komi estimates beside the exact solver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.mark.slow  # solves side 3 exactly (about 25 CPU seconds)
def test_smallest_validation_writes_its_table(tmp_path: Path, capsys) -> None:
    from benchmarks import validate_komi_side3

    out = tmp_path / "out"
    assert validate_komi_side3.main(["--agent", "uct:4", "--komi", "10-11", "--games", "2",
                                     "--simulations", "4", "--cache", str(tmp_path / "cache.json"),
                                     "--out", str(out)]) == 0
    result = json.loads((out / "validate_uct4.json").read_text())
    assert result["exact_fair_komi"] == 10.5
    assert result["sweep"]["komi"] == [10, 11] and result["sweep"]["games_per_komi"] == 2
    assert (out / "sweep_side3-komi-standard.csv").exists()
    assert "exact fair komi" in capsys.readouterr().out


def test_komi_lists_parse() -> None:
    from benchmarks.validate_komi_side3 import parse_komi

    assert parse_komi("8-11") == [8, 9, 10, 11] and parse_komi("8,10") == [8, 10]
