"""The komi atlas: the balance of every board side 2..10 and every variant, from one model.

One record per track (side x game type x scoring), each with the balance measure that fits
its game type: the fair komi for the komi game type (`measure`, its self-play sweep in
`komi_sweep`), the value of every first stone for nokomi (`stones`), Black's score for double
(`measure`); beside it the solver's exact value where the side is solved (sides 2 and 3,
catena_zero.komi.exact) and there the measurement's outcome against it (`outcome`).

- `tracks`: `run_atlas`, which plans and measures the tracks (`workers`: several at once, in
  forked processes), and the model and settings each record is measured with.
- `document`: the atlas JSON file and its records: format, loading, atomic saving, statuses.
- `report`: atlas.md and the figures, drawn from the JSON alone, with `designer`'s one-page
  summary beside them. It loads matplotlib, so it is imported on its own, never from here.

The names below are the atlas's public ones: `from catena_zero.komi.atlas import run_atlas`.
"""

from catena_zero.data.file_history import file_sha256
from catena_zero.komi.atlas.document import (
    ATLAS_FORMAT_VERSION,
    AtlasError,
    atlas_status,
    load_atlas,
    save_atlas,
    track_name,
)
from catena_zero.komi.atlas.tracks import (
    AtlasModel,
    atlas_agent,
    board_config,
    measurement_settings,
    run_atlas,
    track_rules,
    two_strengths,
)
from catena_zero.komi.atlas.workers import WorkersUnavailable

__all__ = [
    "ATLAS_FORMAT_VERSION",
    "AtlasError",
    "AtlasModel",
    "WorkersUnavailable",
    "atlas_agent",
    "atlas_status",
    "board_config",
    "file_sha256",
    "load_atlas",
    "measurement_settings",
    "run_atlas",
    "save_atlas",
    "track_name",
    "track_rules",
    "two_strengths",
]
