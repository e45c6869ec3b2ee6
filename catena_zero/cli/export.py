"""catena-zero export: write a standalone model file (metadata + safetensors weights).

    catena-zero export --checkpoint runs/side4/checkpoints/checkpoint-....pt --output side4.pt
    catena-zero export --champion --side 6 --registry runs/champions.json --output side6.pt
    catena-zero export --checkpoint C.pt --output m.pt --elo_csv runs/ladder/elo.csv
    catena-zero export --convert old-format1.pt --output m.pt    # read without unpickling
    catena-zero export --checkpoint C.pt --output m.pt program=true   # with its program

Its metadata holds the tracks the checkpoint was trained on (for a size-general run, every
track of its mix, from the checkpoint), each with its komi range, Elo and fair komi, and the
network config, training steps and format version; loading it never unpickles anything.
With `program=true` it also holds a torch.export program for torch-only users of files they
trust (catena_zero.export.model_file); it is about two thirds of the file and nothing in
the project reads it, so it is written only on request.
"""

from __future__ import annotations

from catena_zero.cli.common import (
    ConfigError,
    InputFileError,
    compose,
    file_errors,
    rules_from_config,
    to_dataclass,
)
from catena_zero.export.exporter import ExportConfig, export_from_config
from catena_zero.export.model_file import ModelFileError


def main(overrides: list[str]) -> int:
    composed = compose("export", overrides)
    rules = rules_from_config(composed)
    values = {key: composed[key] for key in composed if key not in ("board", "rules")}
    values |= {"side": rules.board.side, "game_type": rules.game_type.value,
               "scoring": rules.scoring.value}
    config = to_dataclass(ExportConfig, values)
    try:
        metadata = export_from_config(config)
    except ModelFileError as error:
        raise InputFileError(str(error)) from error
    except ValueError as error:
        if isinstance(error, file_errors()):
            raise  # a damaged checkpoint or registry is not a config error
        raise ConfigError(str(error)) from error
    if len(metadata.tracks) == 1:
        elo = "unrated" if metadata.elo is None else f"Elo {metadata.elo:.0f}"
        what = f"side {metadata.side} {metadata.game_type}/{metadata.scoring}, "
    else:
        rated = sum(track.elo is not None for track in metadata.tracks)
        kind = "size-general" if metadata.is_general else f"side-{metadata.home_side}"
        elo = f"{rated} rated"
        what = (f"{kind} network, tracks {', '.join(map(str, metadata.tracks))}, ")
    print(f"wrote {config.output}: {what}{metadata.training_steps} training steps, {elo}, "
          f"format version {metadata.format_version}")
    return 0
