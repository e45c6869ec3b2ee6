"""Measuring the komi atlas's tracks (side x game type x scoring) with one model.

`run_atlas` brings every track asked for up to date (its exact values solved where the side
is solved, catena_zero.komi.exact), measures the tracks not yet measured with the same model
and settings (the record's `fingerprint`), one after another or in forked workers
(catena_zero.komi.atlas.workers), and saves the document after each track
(catena_zero.komi.atlas.document). A track's measure is its game type's: the fair komi for
komi and Black's score for double (catena_zero.komi.atlas.measure), the value of every first
stone for nokomi (catena_zero.komi.atlas.stones), played by `atlas_agent`, the model's search
after varied openings. On a solved side the solver also checks the model's own games
(catena_zero.komi.strength).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catena_zero.arena.agents import SearchAgent
from catena_zero.komi.atlas.document import (
    ATLAS_FORMAT_VERSION,
    atlas_status,
    exact_fields,
    load_atlas,
    new_record,
    refresh_outcome,
    save_atlas,
    summary_line,
    track_name,
)
from catena_zero.komi.atlas.measure import double_balance, komi_balance
from catena_zero.komi.atlas.stones import first_stones
from catena_zero.komi.atlas.workers import measured_tasks
from catena_zero.komi.config import AtlasConfig, SolveConfig
from catena_zero.komi.exact import solve_exact
from catena_zero.komi.strength import check_komis, solver_check, strength_note
from catena_zero.mcts import SearchConfig
from catena_zero.mcts.solver import enum_value
from catena_zero.rules import Rules


@dataclass(frozen=True)
class AtlasModel:
    """The model that measures a side: its name, its file's SHA-256, how to build its
    EvaluateFn for a set of rules (the CLI loads model files and checkpoints), and the
    arithmetic of its network ("float32" or "bfloat16")."""

    name: str
    sha256: str
    evaluator: Callable[[Rules], Any]
    precision: str = "float32"


def atlas_tracks(config: AtlasConfig) -> list[tuple[int, str]]:
    """(side, "game_type/scoring") of every track asked for, by side then variant."""
    return [(int(side), variant) for side in sorted(set(config.sides))
            for variant in config.variants]


def track_rules(side: int, variant: str) -> Rules:
    game_type, scoring = variant.split("/")
    return Rules(side=side, game_type=game_type, scoring=scoring)


def measurement_settings(config: AtlasConfig, search_config: SearchConfig,
                         game_type: str, solved: bool = False) -> dict:
    """The settings a track's estimate depends on (those of its game type and the search;
    on a `solved` side also those of the solver's check of the model)."""
    used = {"komi": ("simulations", "start", "coarse_points", "coarse_games", "refine_points",
                     "bracket_games", "network_estimate", "resamples", "seed"),
            "nokomi": ("simulations", "stone_simulations", "stone_games", "fair_stone_games",
                       "even_margin", "seed"),
            "double": ("simulations", "double_games", "seed")}[game_type]
    if solved:
        used += ("strength_games", "min_optimal_share", "min_result_share")
    if config.check_simulations:
        used += ("check_simulations",)
    if config.opening_moves:
        used += ("opening_moves",)
    if game_type == "komi" and config.target_width > 0:
        used += ("target_width", "max_games")
    search = dataclasses.asdict(search_config)
    return {"atlas": {key: getattr(config, key) for key in used}, "search": search}


def fingerprint(track: str, model: AtlasModel, settings: dict) -> str:
    text = json.dumps({"track": track, "model": model.sha256, "settings": settings,
                       "format_version": ATLAS_FORMAT_VERSION}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def board_config(config: AtlasConfig, rules: Rules) -> AtlasConfig:
    """`config` on this board: `opening_share` becomes the board's own `opening_moves` (a
    share of its cells, at least 1; an `opening_moves` set already wins), so a track's
    settings record the moves actually drawn and equal openings measured either way share a
    fingerprint."""
    if not config.opening_share:
        return config
    moves = config.opening_moves or max(1, round(config.opening_share * rules.board.num_cells))
    return dataclasses.replace(config, opening_moves=moves, opening_share=0.0)


def atlas_agent(rules: Rules, model: AtlasModel, search_config: SearchConfig,
                config: AtlasConfig, placed_moves: int = 0) -> SearchAgent:
    """The self-play agent of the measurements: the model's search at `config.simulations`
    (the search keeps its other settings). The games must differ: by default only the first
    k moves are drawn (from the search's visits; k from `opening_share` or `opening_moves`,
    `board_config`) and the rest are the search's own noiseless choice, so the balance
    measured is that of the model's best play after varied openings; with both 0 the Gumbel
    root noise varies every move, which also makes every move a draw among the considered
    actions (a flatter curve: benchmarks/atlas_openings.py, komi.md). `placed_moves`: the
    moves the games start with that the agent did not choose (nokomi's first stone, placed
    for each stone measured), so the agent still draws k moves of its own after them."""
    config = board_config(config, rules)
    varied = config.opening_moves > 0
    play = dataclasses.replace(search_config, num_simulations=config.simulations,
                               gumbel_scale=0.0 if varied else 1.0)
    drawn = config.opening_moves + placed_moves if varied else 0
    return SearchAgent(model.evaluator(rules), play, temperature=1.0 if varied else 0.0,
                       temperature_moves=drawn, name=model.name)


def strength_fields(rules: Rules, model: AtlasModel, search_config: SearchConfig,
                    config: AtlasConfig, record: dict) -> dict:
    """On a solved track: the solver's check of the model's own games (played as the sweep
    plays them) at the komis on both sides of the exact fair komi (the range's top when Black
    wins at every komi; 0 without komi), with the "player too weak" note when too few of its
    moves are margin-optimal or result-keeping (catena_zero.komi.strength)."""
    if config.strength_games == 0:
        return {"strength": None, "strength_note": None}
    exact = record.get("exact") if record.get("exact_in_range") is not False else None
    komis = check_komis(rules, exact) if record["game_type"] == "komi" else [0]
    check = solver_check(rules, atlas_agent(rules, model, search_config, config),
                         config.strength_games, config.min_optimal_share, komis=komis,
                         seed=config.seed, min_result_share=config.min_result_share)
    return {"strength": check, "strength_note": strength_note(check)}


def measure_track(rules: Rules, model: AtlasModel, search_config: SearchConfig,
                  config: AtlasConfig, exact_report: dict | None) -> dict:
    """The estimate fields of one track (the measure of its game type)."""
    evaluate_fn = model.evaluator(rules)
    game_type = enum_value(rules.game_type)
    # nokomi's games start after the first stone being measured: the opening follows it.
    agent = atlas_agent(rules, model, search_config, config,
                        placed_moves=1 if game_type == "nokomi" else 0)
    if game_type == "komi":
        return komi_balance(rules, agent, evaluate_fn, config)
    if game_type == "nokomi":
        values = (exact_report or {}).get("move_values")
        return first_stones(rules, agent, evaluate_fn, search_config, config, values)
    return double_balance(rules, agent, config)


@dataclass
class TrackTask:
    """One track to measure: its rules, the atlas settings on its board, its model, and the
    record so far (its exact fields, which the solver's check of the model reads)."""

    name: str
    rules: Rules
    config: AtlasConfig
    model: AtlasModel
    record: dict
    settings: dict  # what the estimate depends on (measurement_settings) ...
    stamp: str  # ... and its fingerprint, recorded when the measurement is in


def measure_task(task: TrackTask, search_config: SearchConfig) -> dict:
    """The fields a measurement adds to the task's record: the estimate (at both strengths
    when a check strength is set), the solver's check on solved sides, and the seconds."""
    started = time.perf_counter()
    config, exact_report = task.config, task.record.get("exact_report")
    measured = measure_track(task.rules, task.model, search_config, config, exact_report)
    if config.check_simulations:
        checked = dataclasses.replace(config, simulations=config.check_simulations,
                                      check_simulations=0)
        other = measure_track(task.rules, task.model, search_config, checked, exact_report)
        measured = two_strengths({config.simulations: measured,
                                  config.check_simulations: other})
    if exact_report is not None:
        measured.update(strength_fields(task.rules, task.model, search_config, config,
                                        {**task.record, **measured}))
    measured["seconds"] = round(time.perf_counter() - started, 2)
    return measured


def run_atlas(config: AtlasConfig, models: Callable[[int], AtlasModel | None] | None,
              search_config: SearchConfig | None = None, log: Callable[[str], None] = print,
              progress: bool = True) -> dict:
    """Measure every track of `config` (module doc); returns the atlas document.

    models(side, variant): the model of that track ("komi/standard"), or None when none
    plays it; models None (or config.estimates false): exact values only.
    `config.workers` > 1 measures tracks in that many processes at once (the same
    records; the file is written by this one)."""
    search_config = search_config or SearchConfig()
    path = Path(config.output)
    document = load_atlas(path)
    # A resume that changes nothing leaves the file, its `updated` time included, as it was.
    before = None if not path.exists() else _content(document)
    records = document["records"]
    for record in records.values():
        refresh_outcome(record)
    tracks = atlas_tracks(config)
    bar = _progress(len(tracks), progress)
    try:
        tasks: list[TrackTask] = []
        for side, variant in tracks:
            name = track_name(side, variant)
            if bar is not None:
                bar.set_postfix_str(name)
            task = plan_track(config, side, variant, records, models, search_config, log,
                              lambda: save_atlas(path, document))
            if task is not None:
                tasks.append(task)
            elif bar is not None:
                bar.update()
        if bar is not None and config.workers > 1 and len(tasks) > 1:
            bar.set_postfix_str(f"{len(tasks)} tracks, {min(config.workers, len(tasks))} "
                                f"at once")
        starting = None if bar is None else (lambda task: bar.set_postfix_str(task.name))
        measure = functools.partial(measure_task, search_config=search_config)
        for task, measured in measured_tasks(tasks, measure, config.workers, starting):
            record = records[task.name]
            record_measurement(record, task, measured)
            save_atlas(path, document)
            if bar is not None:
                bar.update()
            log(f"[atlas] {task.name}: {summary_line(record)}")
    finally:
        if bar is not None:
            bar.close()
    document["status"] = atlas_status(records)
    if _content(document) != before:
        document["updated"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        save_atlas(path, document)
    return document


def _content(document: dict) -> str:
    """The document as saved, but for its `updated` time (to tell whether a run changed it)."""
    return json.dumps({key: value for key, value in document.items() if key != "updated"},
                      sort_keys=True, default=str)


def plan_track(config: AtlasConfig, side: int, variant: str, records: dict,
               models: Callable[[int], AtlasModel | None] | None,
               search_config: SearchConfig, log: Callable[[str], None],
               save: Callable[[], None]) -> TrackTask | None:
    """One track's record brought up to date before any measurement (its exact values
    solved where the side is solved, "no model" where none plays it); the task measuring it,
    or None when there is nothing to measure (exact only, no model, or already measured
    with the same model and settings)."""
    name = track_name(side, variant)
    rules = track_rules(side, variant)
    track_config = board_config(config, rules)
    record = {**new_record(side, variant), **records.get(name, {})}
    records[name] = record
    if side in config.exact_sides and record.get("exact_report") is None:
        report = solve_exact(rules, SolveConfig(cache_path=config.solver_cache))
        record.update(exact_fields(rules, report))
        save()
    if not config.estimates or models is None:
        return None
    model = models(side, variant)
    if model is None:
        record.update(status="no model", model=None)
        save()
        log(f"[atlas] {name}: no model plays side {side}")
        return None
    settings = measurement_settings(track_config, search_config, record["game_type"],
                                    solved=record.get("exact_report") is not None)
    if model.precision != "float32":
        # Games played in reduced precision are other games: the track is measured again.
        # Float32, the arithmetic of every record before the setting, stays unnamed, so
        # those records keep their fingerprints.
        settings["precision"] = model.precision
    stamp = fingerprint(name, model, settings)
    if record.get("status") == "measured" and record.get("fingerprint") == stamp:
        log(f"[atlas] {name}: already measured with {model.name}; kept")
        return None
    return TrackTask(name, rules, track_config, model, dict(record), settings, stamp)


def record_measurement(record: dict, task: TrackTask, measured: dict) -> None:
    """The task's measurement into its record, with its model, settings and fingerprint,
    and on solved sides whether the interval holds the exact value and the outcome. The
    fields of an earlier measurement go first: a record measured at two strengths and then
    at one would otherwise keep the old `simulations` and `weaker`, and be read as a
    measurement of the old strength (`catena_zero.komi.fair.record_simulations`)."""
    base = new_record(record["side"], f"{record['game_type']}/{record['scoring']}")
    for key in [key for key in record if key not in base and not key.startswith("exact")]:
        del record[key]  # the exact solution's fields (exact_*) stay: they are not measured
    record.update(measured)
    record.update(status="measured", settings=task.settings, fingerprint=task.stamp,
                  model={"name": task.model.name, "sha256": task.model.sha256})
    refresh_outcome(record)


def overlaps(first: list, second: list) -> bool:
    """Whether two intervals [low, high] (None: an open end) share a point."""
    low = max((value for value in (first[0], second[0]) if value is not None), default=None)
    high = min((value for value in (first[1], second[1]) if value is not None), default=None)
    return low is None or high is None or low <= high


def two_strengths(measured: dict[int, dict]) -> dict:
    """One track measured at two search strengths ({simulations: fields}): the stronger
    search's fields, with the weaker's estimate kept under `weaker`. When the two intervals do
    not overlap, the estimate is still moving with strength beyond what the games' sampling
    explains: the interval widens to hold both and `moving_with_strength` is true."""
    weak, strong = sorted(measured)
    fields, other = dict(measured[strong]), measured[weak]
    fields["simulations"] = strong
    fields["weaker"] = {"simulations": weak, "estimate": other.get("estimate"),
                        "interval": other.get("interval"), "games": other.get("games")}
    first, second = fields.get("interval") or [None, None], other.get("interval") or [None, None]
    moving = not overlaps(first, second)
    fields["moving_with_strength"] = moving
    if moving:
        fields["stronger_interval"] = first
        lows, highs = (first[0], second[0]), (first[1], second[1])
        fields["interval"] = [None if None in lows else min(lows),
                              None if None in highs else max(highs)]
    fields["games"] = int(fields.get("games") or 0) + int(other.get("games") or 0)
    return fields


def _progress(total: int, enabled: bool):
    """A bar over the tracks, or None (off, no tracks, or no tqdm)."""
    if not enabled or not total:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # progress is a convenience; the log lines say the same
        return None
    tqdm.monitor_interval = 0  # no monitor thread: measuring workers may fork
    return tqdm(total=total, unit="track", dynamic_ncols=True)
