"""Export a training checkpoint, or a track's champion, as a standalone model file.

    export_model("runs/side4/checkpoints/checkpoint-step000001200-iter000040.pt", "side4.pt")
    export_model(Track(6, "komi", "standard"), "side6.pt", registry="runs/champions.json",
                 elo_csv="runs/ladder6/elo.csv")
    export_from_config(ExportConfig(convert="old-side6.pt", output="side6.pt"))  # format 1
    export_model("runs/mix/checkpoints/....pt", "general.pt", elos={"4/komi/standard": 610.0})

Tracks. The file lists the tracks the checkpoint was trained on: those its `extra` names
(`{"tracks": ["6/komi/standard", ...]}`, a size-general run's mix), else its own rules'
track; `tracks=` replaces that list. The source's track comes first (the checkpoint's own
rules, or the exported champion's track): it is the model's default board.

Elo. The source's track gets, in order: the explicit `elo`, else the row of an arena ladder
`elo.csv` (`catena-zero arena ladder`) whose step is the checkpoint's, else none (unrated);
any track may get one from `elos={track: Elo}` instead. A ratings file
(`catena_zero.export.ratings`, `ratings=PATH`) rates the tracks it names against its own
reference player instead of all of these; one file holds one reference, so it is not mixed
with them.

Fair komi. Each track gets `fair_komis[track]`, else the checkpoint's estimate for it
(`extra["fair_komis"][Track.key]`, or for its own track `extra["fair_komi"]`), else none.
Tracks are named as in configs ("6/komi/standard"), by key ("side6-komi-standard") or as
`catena_zero.rules.Track`s.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catena_zero.arena.elo import read_elo_csv
from catena_zero.arena.registry import ChampionRegistry
from catena_zero.export.convert import convert_model_file
from catena_zero.export.model_file import (
    ModelMetadata,
    ModelTrack,
    metadata_for,
    save_model_file,
)
from catena_zero.export.ratings import Ratings, is_finite_number, read_ratings
from catena_zero.rules import GameType, Rules, Track
from catena_zero.train.checkpoint import Checkpoint, build_network, load_checkpoint

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
    ratings: str | None = None  # ratings file of tracks' Elo against one reference player
    convert: str | None = None  # a model file to rewrite in the current format (format 1 too)
    program: bool = False  # also write a torch.export program (2/3 of the file; never read)

    def __post_init__(self) -> None:
        sources = [bool(self.checkpoint), bool(self.champion), bool(self.convert)]
        if sum(sources) != 1:
            raise ValueError("give exactly one source: checkpoint=PATH, champion=true or "
                             f"convert=PATH (got checkpoint={self.checkpoint!r}, "
                             f"champion={self.champion!r}, convert={self.convert!r})")
        if self.convert and (self.elo is not None or self.elo_csv or self.elo_reference):
            raise ValueError("convert keeps the file's own Elo; elo, elo_csv and "
                             "elo_reference cannot be given with it")
        if self.convert and self.ratings:
            raise ValueError("convert keeps the file's own Elo; ratings cannot be given "
                             "with it")
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


def checkpoint_tracks(checkpoint: Checkpoint) -> list[Track]:
    """The tracks a checkpoint was trained on: its own rules' track first, then the others
    its `extra["tracks"]` names (a size-general run's mix)."""
    own = Track.from_rules(Rules(**checkpoint.rules))
    named = checkpoint.extra.get("tracks", [])
    if not isinstance(named, list | tuple):
        raise ValueError(f"checkpoint {checkpoint.path}: extra tracks must be a list of "
                         f"tracks, got {named!r:.80}")
    try:
        tracks = [Track.parse(item) for item in named]
    except ValueError as error:
        raise ValueError(f"checkpoint {checkpoint.path}: extra tracks: {error}") from None
    return [own] + [track for index, track in enumerate(tracks)
                    if track != own and track not in tracks[:index]]


def _checkpoint_fair_komis(checkpoint: Checkpoint) -> dict[Track, float]:
    """The checkpoint's fair-komi estimates by track (`extra["fair_komis"]` keyed by
    Track.key, else `extra["fair_komi"]` for its own track); non-finite ones are left out,
    and so are nokomi and double tracks, whose komi is fixed at 0 by the rules (a run still
    records an estimate for them, which says nothing about balance)."""
    extra = checkpoint.extra
    estimates: dict[Track, float] = {}
    named = extra.get("fair_komis")
    if isinstance(named, Mapping):
        for key, value in named.items():
            try:
                estimates[Track.parse(key)] = float(value)
            except (TypeError, ValueError) as error:
                raise ValueError(f"checkpoint {checkpoint.path}: extra fair_komis entry "
                                 f"{key!r:.40}: {error}") from None
    elif isinstance(extra.get("fair_komi"), int | float):
        estimates[Track.from_rules(Rules(**checkpoint.rules))] = float(extra["fair_komi"])
    return {track: value for track, value in estimates.items()
            if math.isfinite(value) and track.rules().game_type == GameType.KOMI}


def _by_track(values: Mapping[Any, float] | None, tracks: Sequence[Track],
              what: str) -> dict[Track, float]:
    """`values` keyed by Track; ValueError for a key that is not one of `tracks`."""
    result = {}
    for key, value in (values or {}).items():
        track = Track.parse(key)
        if track not in tracks:
            raise ValueError(f"{what} names track {track}, which is not among the exported "
                             f"tracks ({', '.join(map(str, tracks))})")
        if not is_finite_number(value):
            raise ValueError(f"{what} of track {track} must be a finite number, got "
                             f"{value!r:.40}")
        result[track] = float(value)
    return result


def export_model(source: str | os.PathLike | Track, path: str | os.PathLike, *,
                 registry: str | os.PathLike | None = None, elo: float | None = None,
                 elo_reference: str | None = None, elo_csv: str | os.PathLike | None = None,
                 tracks: Sequence[Track | str] | None = None,
                 elos: Mapping[Track | str, float] | None = None,
                 fair_komis: Mapping[Track | str, float] | None = None,
                 ratings: str | os.PathLike | Ratings | None = None,
                 program: bool = False) -> ModelMetadata:
    """Write the model file of a checkpoint (path) or champion (Track); returns its metadata.

    `tracks` (default: the checkpoint's, see the module docstring) are listed in the file,
    the source's track first; `elo` or `elo_csv` rate the source's track, `elos` and
    `fair_komis` give any track's Elo and fair komi; `ratings` (a Ratings or its file) rates
    tracks against its reference player instead of `elo`, `elo_csv`, `elos`; `program` adds
    the torch.export program for torch-only users (model_file). Raises
    ValueError (CheckpointError, RatingsFileError, ...) naming the problem when the source or
    the ratings file is missing or damaged, or a track is unknown; nothing is written then.
    """
    checkpoint_path, description = resolve_source(source, registry)
    if not checkpoint_path.is_file():
        raise ValueError(f"checkpoint {checkpoint_path} does not exist")
    checkpoint = load_checkpoint(checkpoint_path)
    trained = checkpoint_tracks(checkpoint)
    if isinstance(source, Track) and source not in trained:
        raise ValueError(f"the champion {checkpoint_path} was trained on "
                         f"{', '.join(map(str, trained))}, not on track {source.key}")
    listed = trained if tracks is None else [Track.parse(track) for track in tracks]
    if not listed or len(set(listed)) != len(listed):
        raise ValueError(f"tracks must name one or more distinct tracks, got "
                         f"{', '.join(map(str, listed)) or 'none'}")
    first = source if isinstance(source, Track) else trained[0]
    if first in listed:
        listed = [first] + [track for track in listed if track != first]
    if ratings is not None:
        if elo is not None or elo_csv is not None or elos or elo_reference is not None:
            raise ValueError("a ratings file carries its own reference; elo, elo_csv, elos "
                             "and elo_reference cannot be given with it")
        if not isinstance(ratings, Ratings):
            ratings = read_ratings(ratings)
        elos, elo_reference = ratings.elos, ratings.reference
    net = build_network(checkpoint)
    step = int(checkpoint.counters.step)
    rated = _by_track(elos, listed, "the ratings" if ratings is not None else "elos")
    if elo is None and elo_csv is not None:
        elo = _elo_from_csv(elo_csv, step)
        if elo is None:
            raise ValueError(f"{elo_csv} has no row for step {step} of {checkpoint_path}")
    if elo is not None:
        if first not in listed:
            raise ValueError(f"elo rates track {first}, which is not among the exported "
                             f"tracks ({', '.join(map(str, listed))})")
        rated[first] = float(elo)
    if rated and elo_reference is None:
        elo_reference = LADDER_REFERENCE
    komis = _checkpoint_fair_komis(checkpoint) | _by_track(fair_komis, listed, "fair_komis")
    entries = [ModelTrack.of(track, elo=rated.get(track),
                             elo_reference=elo_reference if track in rated else None,
                             fair_komi=komis.get(track)) for track in listed]
    metadata = metadata_for(net, entries, network_config=net.config.to_dict(),
                            training_steps=step, source=description)
    save_model_file(net, metadata, path, program=program)
    return metadata


def export_from_config(config: ExportConfig) -> ModelMetadata:
    """`export_model` (or, with `convert`, `convert_model_file`) driven by an ExportConfig
    (what `catena-zero export` runs)."""
    if config.convert:
        return convert_model_file(config.convert, config.output, program=config.program)
    source: str | Track
    if config.champion:
        source = Track(config.side, config.game_type, config.scoring)
    else:
        source = str(config.checkpoint)
    return export_model(source, config.output, registry=config.registry, elo=config.elo,
                        elo_reference=config.elo_reference, elo_csv=config.elo_csv,
                        ratings=config.ratings, program=config.program)
