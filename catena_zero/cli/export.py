"""catena-zero export: write a standalone model file (torch.export program + metadata).

    catena-zero export --checkpoint runs/side4/checkpoints/checkpoint-....pt --output side4.pt
    catena-zero export --champion --side 6 --registry runs/champions.json --output side6.pt
    catena-zero export --checkpoint C.pt --output m.pt --elo_csv runs/ladder/elo.csv

The file loads with torch alone (`torch.export.load(path).module()`); its metadata holds the
rules, komi range, network config, Elo, training steps and format version.
"""

from __future__ import annotations

from catena_zero.cli.common import ConfigError, compose, file_errors, to_dataclass
from catena_zero.export.exporter import ExportConfig, export_from_config


def main(overrides: list[str]) -> int:
    config = to_dataclass(ExportConfig, compose("export", overrides))
    try:
        metadata = export_from_config(config)
    except ValueError as error:
        if isinstance(error, file_errors()):
            raise  # a damaged checkpoint or registry is not a config error
        raise ConfigError(str(error)) from error
    elo = "unrated" if metadata.elo is None else f"Elo {metadata.elo:.0f}"
    print(f"wrote {config.output}: side {metadata.side} {metadata.game_type}/{metadata.scoring}, "
          f"{metadata.training_steps} training steps, {elo}, format version "
          f"{metadata.format_version}")
    return 0
