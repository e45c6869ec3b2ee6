"""Fair komi, in one place: the network's estimate, its smoothing over a run, and the komi of a
search's self-play balance.

The komi a game is played at (`komi_for_play`: GTP `catena-choose-komi`, the terminal's and
the web page's `auto`) is the best estimate at hand: a self-play crossing of the committed
atlases (docs/komi/atlas.json and the strength curve's, one a strength) measured with the same
model file (its SHA-256) and closed at both ends, the one measured nearest the player's own
simulations a move (fair komi moves with strength); else the player's own choice from the
network (`ModelPlayer.choose_komi`), which matches weak play. `KomiChoice.source` says
which.

The network's estimate is the komi at which its value of the empty board is zero. It is one
output of the net: on eleven side-4 nets it missed their self-play balance by 1.0 point on
average and by up to 3.5, so evaluations measure the balance itself (`selfplay_fair_komi`:
a self-play sweep over the komi range and the logistic fit of `catena_zero.komi.sweep`).

Black moves first on the empty board, so the evaluation's value there is Black's expected
outcome; it falls as White's komi grows. The estimate evaluates the empty board at a grid of
integer komis in one batched call, then refines by bisection on integers and interpolates
linearly between the two komis around the zero crossing.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from catena_zero.arena.agents import SearchAgent
from catena_zero.data.file_history import file_sha256, same_content_hashes
from catena_zero.komi.config import SweepConfig
from catena_zero.komi.sweep import fit_table, run_sweep
from catena_zero.mcts.config import SearchConfig
from catena_zero.rules import Engine, GameType, Rules

GRID_POINTS = 33  # komis evaluated in the first batched call (the whole range when smaller)


def empty_board_values(engine: Engine, evaluate_fn, komis) -> np.ndarray:
    """Black's value at the empty board for each komi.  # [K] in [-1, 1]"""
    komis = np.asarray(komis, dtype=np.int32)
    states = engine.new_games(komis.size, komi=komis)
    return np.asarray(evaluate_fn(states).value, dtype=np.float64)


def estimate_fair_komi(engine: Engine, evaluate_fn) -> float:
    """The real komi where Black's value at the empty board crosses zero, clipped to the
    rules' komi range (0 when the game type has no komi)."""
    low, high = engine.rules.komi_range
    if low == high:
        return float(low)
    grid = np.unique(np.linspace(low, high, min(GRID_POINTS, high - low + 1)).round().astype(int))
    values = empty_board_values(engine, evaluate_fn, grid)  # [K]
    if values[0] <= 0.0:
        return float(low)  # White is better even without komi
    if values[-1] >= 0.0:
        return float(high)  # Black is better even with the largest komi
    # Last grid komi still good for Black; the next one is not (first sign change).
    index = int(np.flatnonzero(values <= 0.0)[0]) - 1
    left, right = int(grid[index]), int(grid[index + 1])
    value_left, value_right = values[index], values[index + 1]
    while right - left > 1:
        middle = (left + right) // 2
        value_middle = empty_board_values(engine, evaluate_fn, [middle])[0]
        if value_middle > 0.0:
            left, value_left = middle, value_middle
        else:
            right, value_right = middle, value_middle
    fraction = value_left / (value_left - value_right) if value_left != value_right else 0.5
    return float(np.clip(left + fraction * (right - left), low, high))


def smoothed_fair_komi(previous: float | None, estimate: float, smoothing: float) -> float:
    """The centre that self-play draws komis around after a new estimate:
    `smoothing * previous + (1 - smoothing) * estimate`; the first estimate is taken as it is
    (`previous` None). Both runtimes of a training run refresh it by this rule."""
    if previous is None:
        return float(estimate)
    return smoothing * previous + (1.0 - smoothing) * estimate


@dataclass(frozen=True)
class SelfPlayBalance:
    """The komi at which a search wins half its games against itself as Black."""

    fair_komi: float  # the logistic fit's crossing, clipped into the komi range
    low: float  # 95% profile-likelihood interval of the crossing (may be infinite)
    high: float
    slope: float  # of sigmoid(slope * (fair_komi - k)), the fit's steepness
    games_per_komi: int  # self-play games at every komi of the range
    black_score: dict[int, float]  # komi -> Black's score (wins + draws / 2), 4 decimals

    def to_dict(self) -> dict:
        """The JSON form (the keys `catena-zero evaluate` reports)."""
        return dataclasses.asdict(self)


def selfplay_fair_komi(rules: Rules, evaluate_fn, search: SearchConfig, games_per_komi: int,
                       seed: int) -> SelfPlayBalance:
    """The komi at which the search of `evaluate_fn` wins half its games against itself as
    Black: a self-play sweep over the rules' komi range and its logistic fit.

    The search keeps its settings, with Gumbel root noise of scale 1 so that the games differ
    (a PUCT search keeps its Dirichlet noise). `fair_komi` is clipped into the komi range when
    Black wins (or loses) at every komi swept."""
    agent = SearchAgent(evaluate_fn, dataclasses.replace(search, gumbel_scale=1.0))
    table = run_sweep(rules, agent, SweepConfig(games_per_komi=games_per_komi, seed=seed))
    fit = fit_table(table)
    low, high = rules.komi_range
    fair = fit.fair_komi
    if np.isnan(fair):  # Black wins at every komi (high side open) or at none
        fair = float(high) if np.isinf(fit.high) else float(low)
    black_score = dict(zip(table.komi.tolist(), np.round(table.black_score, 4).tolist(),
                           strict=True))
    return SelfPlayBalance(fair_komi=float(fair), low=float(fit.low), high=float(fit.high),
                           slope=float(fit.slope), games_per_komi=games_per_komi,
                           black_score=black_score)


# The committed atlas (docs/komi/atlas.json) and the strength curve's atlases, one a strength
# (docs/komi/curve/sims<N>/atlas.json), where the package runs from its repository.
ATLAS_PATH = Path(__file__).resolve().parents[2] / "docs" / "komi" / "atlas.json"
CURVE_DIRECTORY = ATLAS_PATH.parent / "curve"
ATLAS = "atlas"
NETWORK = "network"


def atlas_paths() -> list[Path]:
    """The committed atlases a game's komi is looked up in: the atlas, then the curve's."""
    return [ATLAS_PATH, *sorted(CURVE_DIRECTORY.glob("sims*/atlas.json"))]


@dataclass(frozen=True)
class KomiChoice:
    """The komi a game is played at and where it comes from."""

    komi: int
    source: str  # ATLAS (the atlas's self-play crossing) or NETWORK (the player's own)
    note: str  # one line saying so, for a GTP engine's stderr or a session's notes


_HASHES: dict[tuple[str, int, int], str] = {}


def _sha256(path: Path) -> str:
    """A file's SHA-256, kept while its size and time stay the same (a model is hashed once
    a process, not once a game)."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHES:
        _HASHES[key] = file_sha256(path)
    return _HASHES[key]


def record_simulations(record: dict) -> int | None:
    """The search simulations a move an atlas record's games were played with (the atlas's
    own setting; a record's search section keeps the library default); None if unrecorded."""
    simulations = record.get("simulations")
    if simulations is None:
        simulations = (record.get("settings") or {}).get("atlas", {}).get("simulations")
    return int(simulations) if isinstance(simulations, (int, float)) and simulations >= 1 \
        else None


def record_rollout_mix(record: dict) -> float:
    """The weight of random playouts in the leaf values of an atlas record's search (or a
    curve row's); 0 when unrecorded: records made before the setting searched with the
    network's value alone."""
    search = (record.get("settings") or {}).get("search") or {}
    value = record.get("rollout_mix", search.get("rollout_mix", 0.0))
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else 0.0


def _measured_record(rules: Rules, model_sha256: str, atlas_path: Path) -> dict | None:
    """One atlas file's record of `rules`' track when it was measured with that model (or an
    earlier SHA-256 of the same file); None otherwise (whether it is closed is
    `nearest_strength`'s to judge)."""
    name = f"side{rules.side}-komi-{rules.scoring.value}"
    try:
        record = json.loads(Path(atlas_path).read_text())["records"][name]
        measured_with = record["model"]["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (not isinstance(record, dict) or record.get("status") != "measured"
            or measured_with not in same_content_hashes(model_sha256)):
        return None
    return record


def _strength_distance(record: dict, simulations: int | None,
                       rollout_mix: float | None = None) -> tuple[float, float, float]:
    """Sort key of a record for a player searching `simulations` a move with leaf values
    mixed `rollout_mix` with random playouts: the factor between the two strengths (log2),
    then how far the record's mix is from the player's (None: not compared), then the
    stronger measurement first; without a player's strength, the strongest first."""
    measured = record_simulations(record)
    if measured is None:
        return (math.inf, 0.0, 0.0)
    mix = 0.0 if rollout_mix is None else abs(record_rollout_mix(record) - rollout_mix)
    if simulations is None:
        return (0.0, mix, -measured)
    return (abs(math.log2(measured / simulations)), mix, -measured)


def is_closed(record: dict) -> bool:
    """Whether a record's crossing is bracketed at both ends, with a finite estimate."""
    try:
        low, high = record["interval"]
        estimate = float(record["estimate"])
    except (KeyError, TypeError, ValueError):
        return False
    return low is not None and high is not None and math.isfinite(estimate)


def nearest_strength(records: list[dict], simulations: int | None,
                     rollout_mix: float | None = None) -> dict | None:
    """Of atlas records (or strength-curve rows) of one track and model, the closed one
    measured nearest `simulations` a move (the factor between the two; then the one whose
    leaf-value mix is nearest `rollout_mix`, when given; then the stronger; without
    `simulations`, the strongest); None when none is closed."""
    closed = [record for record in records if is_closed(record)]
    if not closed:
        return None
    return min(closed, key=lambda record: _strength_distance(record, simulations,
                                                             rollout_mix))


def atlas_crossing(rules: Rules, model_sha256: str,
                   atlas_path: str | Path | list | tuple | None = None,
                   simulations: int | None = None,
                   rollout_mix: float | None = None) -> dict | None:
    """The atlas record of `rules`' komi track measured with the model of that SHA-256 (or an
    earlier SHA-256 of the same file, catena_zero.data.file_history) whose bracket of the
    crossing is closed inside the range; among several (the atlas and the curve's atlases,
    one a strength), the one measured nearest to `simulations` a move (the player's search),
    then with the leaf-value mix nearest `rollout_mix`, then the stronger. None when no file
    has one, and for missing or unreadable files (the network then answers). `atlas_path`:
    one file or several; default `atlas_paths()`."""
    if atlas_path is None:
        paths = atlas_paths()
    elif isinstance(atlas_path, (str, Path)):
        paths = [Path(atlas_path)]
    else:
        paths = [Path(path) for path in atlas_path]
    return nearest_strength([record for path in paths
                             if (record := _measured_record(rules, model_sha256, path))
                             is not None], simulations, rollout_mix)


def komi_for_play(player: Any, rules: Rules,
                  atlas_path: str | Path | list | tuple | None = None) -> KomiChoice:
    """The first player's komi for a game against `player` (module doc). `player` chooses
    with `choose_komi(rules)`; one with a model library (ModelPlayer) is matched against the
    atlases by its model file's SHA-256 and, among several measurements, by its search's
    simulations a move and leaf-value mix (`player.config`)."""
    if rules.game_type == GameType.KOMI:
        library = getattr(player, "library", None)
        config = getattr(player, "config", None)
        simulations = getattr(config, "simulations", None)
        rollout_mix = getattr(config, "rollout_mix", None)
        try:
            path = Path(library.get(rules).path) if library is not None else None
            record = atlas_crossing(rules, _sha256(path), atlas_path, simulations,
                                    rollout_mix) if path else None
        except (OSError, ValueError, AttributeError):  # no model file to match: the network
            record = None
        if record is not None:
            komi = rules.nearest_komi(record["estimate"])
            low, high = record["interval"]
            measured, mixed = record_simulations(record), record_rollout_mix(record)
            strength = "" if measured is None else (
                f", {measured} simulations a move"
                + (f", leaf values {mixed:g} random playouts" if mixed else "")
                + (f"; this player searches {simulations}"
                   if simulations is not None and simulations != measured else "")
                + (f"; this player mixes {rollout_mix:g}" if rollout_mix is not None
                   and simulations == measured and rollout_mix != mixed else ""))
            return KomiChoice(komi, ATLAS, (
                f"komi {komi} from the komi atlas: Black's self-play win rate with this model "
                f"crosses one half at {record['estimate']:.2f} in [{low:g}, {high:g}] "
                f"({record.get('games')} games{strength})"))
    komi = int(player.choose_komi(rules))
    return KomiChoice(komi, NETWORK, f"komi {komi} from the network's own estimate")
