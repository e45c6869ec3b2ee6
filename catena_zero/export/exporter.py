"""Export a training checkpoint, or a track's champion, as a standalone model file.

    export_model("runs/side4/checkpoints/checkpoint-step000001200-iter000040.pt", "side4.pt")
    export_model(Track(6, "komi", "standard"), "side6.pt", registry="runs/champions.json",
                 elo_csv="runs/ladder6/elo.csv")
    export_from_config(ExportConfig(convert="old-side6.pt", output="side6.pt"))  # format 1

The Elo stored in the file is, in order: the explicit `elo`, else the row of an arena ladder
`elo.csv` (`catena-zero arena ladder`) whose step is the checkpoint's, else none (unrated).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from catena_zero.arena.elo import read_elo_csv
from catena_zero.arena.registry import ChampionRegistry, Track
from catena_zero.export.convert import convert_model_file
from catena_zero.export.model_file import ModelMetadata, metadata_for, save_model_file
from catena_zero.rules import Rules
from catena_zero.train.checkpoint import build_network, load_checkpoint

LADDER_REFERENCE = "arena ladder (Bradley-Terry), uniform random player = 0"


@dataclass
class ExportConfig:
    checkpoint: str | None = None  # checkpoint file to export (or use `champion`)
    champion: bool = False  # export the registry's champion of the track side/game_type/scoring
    registry: str = "runs/champions.json"  # champion registry file (with champion=true)
    side: int = 6  # track board side (with champion=true)
    game_type: str = "komi"  # track game type (with champion=true)
    scoring: str = "standard"  # track scoring (with champion=true)
    output: str = "model.pt"  # model file to write (atomically)
    elo: float | None = None  # Elo to record; None = look it up in elo_csv, else unrated
    elo_reference: str | None = None  # what the Elo is relative to (default: ladder anchor)
    elo_csv: str | None = None  # arena ladder elo.csv to take the Elo from (row of the same step)
    convert: str | None = None  # a format-1 model file to rewrite in the current format

    def __post_init__(self) -> None:
        sources = [bool(self.checkpoint), bool(self.champion), bool(self.convert)]
        if sum(sources) != 1:
            raise ValueError("give exactly one source: checkpoint=PATH, champion=true or "
                             f"convert=PATH (got checkpoint={self.checkpoint!r}, "
                             f"champion={self.champion!r}, convert={self.convert!r})")
        if self.convert and (self.elo is not None or self.elo_csv or self.elo_reference):
            raise ValueError("convert keeps the file's own Elo; elo, elo_csv and "
                             "elo_reference cannot be given with it")
        if not self.output:
            raise ValueError("output must name the model file to write")


def _elo_from_csv(path: str | os.PathLike, step: int) -> float | None:
    """The ladder Elo of the checkpoint at `step` (None when the CSV has no such row)."""
    rows = [row for row in read_elo_csv(path) if row["step"] == step]
    return rows[0]["elo"] if rows else None


def resolve_source(source: str | os.PathLike | Track, registry: str | os.PathLike | None = None
                   ) -> tuple[Path, str]:
    """(checkpoint path, description) of a checkpoint path or a track's champion."""
    if isinstance(source, Track):
        if registry is None:
            raise ValueError("exporting a champion needs the registry file")
        entry = ChampionRegistry(registry).champion(source)
        if entry is None:
            raise ValueError(f"the registry {registry} has no champion for track {source.key}")
        return Path(entry.checkpoint), f"champion of {source.key} ({entry.checkpoint})"
    path = Path(source)
    return path, f"checkpoint {path}"


def export_model(source: str | os.PathLike | Track, path: str | os.PathLike, *,
                 registry: str | os.PathLike | None = None, elo: float | None = None,
                 elo_reference: str | None = None,
                 elo_csv: str | os.PathLike | None = None) -> ModelMetadata:
    """Write the model file of a checkpoint (path) or champion (Track); returns its metadata.

    Raises ValueError (CheckpointError, ...) naming the problem when the source is missing
    or damaged; nothing is written then.
    """
    checkpoint_path, description = resolve_source(source, registry)
    if not checkpoint_path.is_file():
        raise ValueError(f"checkpoint {checkpoint_path} does not exist")
    checkpoint = load_checkpoint(checkpoint_path)
    rules = Rules(**checkpoint.rules)
    if isinstance(source, Track) and Track.from_rules(rules) != source:
        raise ValueError(f"the champion {checkpoint_path} was trained on {rules}, not on "
                         f"track {source.key}")
    net = build_network(checkpoint)
    step = int(checkpoint.counters.step)
    if elo is None and elo_csv is not None:
        elo = _elo_from_csv(elo_csv, step)
        if elo is None:
            raise ValueError(f"{elo_csv} has no row for step {step} of {checkpoint_path}")
    if elo is not None and elo_reference is None:
        elo_reference = LADDER_REFERENCE
    metadata = metadata_for(net, rules, network_config=net.config.to_dict(), elo=elo,
                            elo_reference=elo_reference, training_steps=step,
                            source=description)
    save_model_file(net, metadata, path)
    return metadata


def export_from_config(config: ExportConfig) -> ModelMetadata:
    """`export_model` (or, with `convert`, `convert_model_file`) driven by an ExportConfig
    (what `catena-zero export` runs)."""
    if config.convert:
        return convert_model_file(config.convert, config.output)
    source: str | Track
    if config.champion:
        source = Track(config.side, config.game_type, config.scoring)
    else:
        source = str(config.checkpoint)
    return export_model(source, config.output, registry=config.registry, elo=config.elo,
                        elo_reference=config.elo_reference, elo_csv=config.elo_csv)
