"""catena-zero evaluate MODE: what a trained net learned (catena_zero.evaluate).

    catena-zero evaluate learning run_dir=runs/a                # against random and uct:200
    catena-zero evaluate learning checkpoint=CK komi=10 opponents=[uct] search.algorithm=puct
    catena-zero evaluate endgame run_dir=runs/a komi=10 max_legal=8 json=runs/a/endgame.json
    catena-zero evaluate trajectories run_dir=runs/a opponents=[random] games=50
    catena-zero evaluate generalisation run_dir=runs/a shards=5

Modes (the word after `evaluate`; learning when none is given):
  learning        the net's search against each baseline at its fair komi: score, Wilson
                  95% interval, per colour; the JSON report is printed too
  endgame         replays games against one baseline; at positions with <= max_legal legal
                  cells, the raw net's value sign and score error against the exact solver
  trajectories    the search's root value at each of the net's moves as Black and as White,
                  in won and in lost games
  generalisation  the value head's cross-entropy on fresh self-play games (the run's own
                  self-play and search) beside the run's newest shards

Keys (catena_zero.evaluate.config.EvaluateConfig; defaults below):
  run_dir | checkpoint | model_file   the net: a run's newest checkpoint, a checkpoint file,
                                      or an exported model file (not for generalisation);
                                      the file's header decides its kind, whichever key
  games, simulations, gumbel_scale    games (per match / in all / per colour / fresh), the
                                      search's simulations and root noise (0 = deterministic)
  opponents, uct_playouts             baselines random | uct (one for endgame, trajectories)
  komi, komi_from, komi_games         komi to play (null = the net's fair komi: selfplay, a
                                      sweep of komi_games games per komi, or network)
  opening_plies (learning), max_legal (endgame), shards (generalisation)
  weights, precision, threads, seed   published | trained weights, inference precision,
                                      torch threads, seed of games, sweep and baselines
  json                                also write the report there (atomically)
  search.KEY=VALUE                    a SearchConfig field of the run's search changed, e.g.
                                      search.algorithm=puct search.exact_endgame_cells=6
                                      (exact endgames are off unless asked for)
"""

from __future__ import annotations

from catena_zero.cli.common import ConfigError, compose, to_container, to_dataclass
from catena_zero.evaluate import MODES, EvaluateConfig, EvaluationError, run_evaluation
from catena_zero.export import ModelFileError
from catena_zero.mcts.config import SearchConfig
from catena_zero.train import CheckpointError

SEARCH_NODE = "search"


def prepare_overrides(overrides: list[str]) -> list[str]:
    """The mode word becomes the group choice `evaluate=MODE`; `search.KEY=VALUE` becomes
    `++search.KEY=VALUE` (the node starts empty: the run's own search). Idempotent."""
    prepared: list[str] = []
    words = []
    for item in overrides:
        if item.startswith(f"{SEARCH_NODE}."):
            if "=" not in item:
                raise ConfigError(f"expected {SEARCH_NODE}.KEY=VALUE with a SearchConfig "
                                  f"field, got {item!r}")
            prepared.append(f"++{item}")
        elif "=" not in item and not item.startswith(("~", "+")):
            words.append(item)
        else:
            prepared.append(item)
    if len(words) > 1:
        raise ConfigError(f"one evaluate mode at most, got {' '.join(words)}")
    if words:
        if words[0] not in MODES:
            raise ConfigError(f"unknown evaluate mode {words[0]!r}; choose one of: "
                              f"{', '.join(MODES)}")
        prepared.insert(0, f"evaluate={words[0]}")
    return prepared


def build_settings(overrides: list[str]) -> tuple[EvaluateConfig, dict]:
    """(EvaluateConfig, the typed search overrides) of the command line; ConfigError names a
    bad key or value."""
    values = to_container(compose("evaluate", prepare_overrides(overrides)))
    search = values.pop(SEARCH_NODE, None) or {}
    settings = to_dataclass(EvaluateConfig, values)
    if not isinstance(search, dict):
        raise ConfigError(f"{SEARCH_NODE}: expected SearchConfig fields, got {search!r}")
    # Checks names and types against SearchConfig; the run's values fill in the rest later.
    checked = to_dataclass(SearchConfig, search, SEARCH_NODE)
    return settings, {key: getattr(checked, key) for key in search}


def main(overrides: list[str]) -> int:
    settings, search = build_settings(overrides)
    try:
        run_evaluation(settings, search, log=lambda line: print(line, flush=True))
    except (EvaluationError, CheckpointError, ModelFileError) as error:
        raise ConfigError(str(error)) from error
    return 0
