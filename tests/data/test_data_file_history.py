"""Bundled model files under the names they have today, matched by every SHA-256 they had."""

from __future__ import annotations

import hashlib
from pathlib import Path

from catena_zero.data.file_history import (
    BUNDLED_NAMES,
    EARLIER_SHA256,
    bundled_name,
    model_label,
    same_content_hashes,
)

MODELS = Path(__file__).resolve().parents[2] / "catena_zero" / "play" / "models"


def test_every_bundled_file_is_named_by_its_sha256_today():
    today = {hashlib.sha256(path.read_bytes()).hexdigest(): path.name
             for path in MODELS.glob("*.pt")}
    assert BUNDLED_NAMES == today
    assert set(EARLIER_SHA256) <= set(BUNDLED_NAMES)


def test_an_earlier_hash_finds_the_file_under_its_name_today():
    earlier = "a65abc7ed5d794d819077a23e1668ed38bd8ce2d8a71de8e0a02b7f649bea133"
    assert bundled_name(earlier) == "general-step90144.pt"
    assert earlier in same_content_hashes(next(sha for sha, name in BUNDLED_NAMES.items()
                                               if name == "general-step90144.pt"))
    assert bundled_name("0" * 64) is None


def test_a_label_says_what_the_file_is_called_now_only_when_that_differs():
    earlier = "a65abc7ed5d794d819077a23e1668ed38bd8ce2d8a71de8e0a02b7f649bea133"
    assert model_label({"name": "general.pt", "sha256": earlier}) == \
        "general.pt a65abc7e (now general-step90144.pt)"
    current = next(sha for sha, name in BUNDLED_NAMES.items() if name == "general.pt")
    assert model_label({"name": "general.pt", "sha256": current}, 12) == \
        f"general.pt {current[:12]}"
    assert model_label({"name": "run.pt", "sha256": "f" * 64}) == "run.pt ffffffff"
    assert model_label({"name": "solver"}) == "solver"
    assert model_label(None) == "-" and model_label({}) == "-"
