"""Files rewritten with what they hold unchanged, and the SHA-256s they had before.

A measurement names the file it was made with by its SHA-256: the komi atlas
(docs/komi/atlas.json, whose crossings `catena_zero.komi.fair` plays at), a strength report
of `benchmarks.general_targets` (which `--resume` continues and
`benchmarks.record_bundled_ratings` records). The
bundled model files (`catena_zero/play/models/`) were rewritten on 2026-12-06 without their
optional `program.pt2` member, their metadata and weights members byte for byte the same
(docs/reference/export.md#bundled-files-rewritten-without-their-program): a measurement of
the earlier file is a measurement of today's. A reader that matches a file by SHA-256
accepts every hash of `same_content_hashes`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

# SHA-256 of today's file -> the SHA-256s it had before, same metadata and weights.
EARLIER_SHA256: dict[str, tuple[str, ...]] = {
    # general-step201952.pt
    "2827565077afa3725cf850b3afdedb3ef36b4bb96868a1c41e4f9c0e038c71ae":
        ("9119a286b250f5bd490a791465f0be0ccd842a809313442d5c927323aa80136a",),
    # general-step38752.pt
    "7d855425c876bba8326666864e37912291d90d1c2146700587468e1c8bd256e9":
        ("e8b98577209a2d282c028abfaad7bacbf7d784235a86e914405727bc10be445d",),
    # general-step7328.pt
    "85acfa5774879c794af7dacb5b90b3bb9e67a8e1728a81764146e9a5a420ef70":
        ("e168a66735891c729d97a6af4a92d160926b2aa5311c6a71a7abb7b5e8ab4d5e",),
    # general-step90144.pt
    "0a4714cbe7db359681e2e5c009dd4a1105a2079fdfbaa28d5e7c21d2e123f472":
        ("a65abc7ed5d794d819077a23e1668ed38bd8ce2d8a71de8e0a02b7f649bea133",),
    # general.pt (step 148640)
    "00a8514f94f48ccf04ba73f8085dc70341b06b5dc977378295074d453772b51c":
        ("699db2b7c7dcb0ffdff63d354499682e48a23de0ef2ceb35dab650e5c16f1633",),
    # side4.pt
    "50bd8fce2a992394d7ce5e80e67bbc4cbb6d5b21495903af29b580e3e8e755e6":
        ("fd42cb437f8920d6ac289505e6b8edca631c50696a47d41786f079b60f19c70a",),
    # side6.pt
    "c26680c95c4754c41dbb5eb658098015d151f02a6eafbdec6a10029fbfcd0368":
        ("f6b29c95b12dc7596644342d7280102c30a52dad2caf0f939308663ca68c6262",),
}


# SHA-256 of today's bundled file -> its name in catena_zero/play/models/ (a measurement names
# the file as it was called then; the model that was general.pt is general-step90144.pt now).
BUNDLED_NAMES: dict[str, str] = {
    "2827565077afa3725cf850b3afdedb3ef36b4bb96868a1c41e4f9c0e038c71ae": "general-step201952.pt",
    "29bafa8f5a177efa970dbf748dca11eae835dd5f79f0a6389afaa7edea7a0524": "general-step275680.pt",
    "7d855425c876bba8326666864e37912291d90d1c2146700587468e1c8bd256e9": "general-step38752.pt",
    "85acfa5774879c794af7dacb5b90b3bb9e67a8e1728a81764146e9a5a420ef70": "general-step7328.pt",
    "0a4714cbe7db359681e2e5c009dd4a1105a2079fdfbaa28d5e7c21d2e123f472": "general-step90144.pt",
    "00a8514f94f48ccf04ba73f8085dc70341b06b5dc977378295074d453772b51c": "general.pt",
    "50bd8fce2a992394d7ce5e80e67bbc4cbb6d5b21495903af29b580e3e8e755e6": "side4.pt",
    "c26680c95c4754c41dbb5eb658098015d151f02a6eafbdec6a10029fbfcd0368": "side6.pt",
}


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes (hex), read in blocks: how a measurement names its model."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bundled_name(sha256: str) -> str | None:
    """Today's name of the bundled model file whose contents had `sha256` (now or before a
    rewrite that kept them); None for any other file."""
    for current, name in BUNDLED_NAMES.items():
        if sha256 in same_content_hashes(current):
            return name
    return None


def model_label(model: dict | None, digits: int = 8) -> str:
    """A measurement's model as its pages name it: the file name it recorded and the first
    `digits` of its SHA-256, and, where that file is bundled under another name today, that
    name ("general.pt a65abc7e (now general-step90144.pt)"); "-" without a model."""
    if not model:
        return "-"
    sha256 = str(model.get("sha256") or "")
    name = model.get("name") or "unnamed model"
    label = f"{name} {sha256[:digits]}" if sha256 else name
    today = bundled_name(sha256)
    return label if today is None or today == name else f"{label} (now {today})"


def same_content_hashes(sha256: str) -> frozenset[str]:
    """`sha256` and the hashes the file of that SHA-256 had before a rewrite that kept its
    contents (just `sha256` for any other file)."""
    return frozenset((sha256, *EARLIER_SHA256.get(sha256, ())))
