"""catena_zero.evaluate: what a trained net learned, measured against baselines and the solver.

Modes (`catena-zero evaluate MODE key=value ...`, or `run_evaluation` here):
- learning: matches against uniform random and random-rollout UCT at the net's fair komi;
- endgame: the raw net's value and score against the exact solver in small endgames;
- trajectories: the search's root value along its games, won and lost;
- generalisation: the value loss on fresh self-play positions beside the run's shards.

`loading` finds the net (a run's newest checkpoint, a checkpoint file or an exported model
file), its search (the run's own, exact endgames off) and the komi to play at (the self-play
balance of `catena_zero.komi.fair.selfplay_fair_komi`, or the network estimate).

    from catena_zero.evaluate import EvaluateConfig, run_evaluation
    report = run_evaluation(EvaluateConfig(run_dir="runs/a", games=100), {"algorithm": "puct"})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from catena_zero.evaluate.config import MODES, EvaluateConfig, EvaluationError
from catena_zero.evaluate.endgame import endgame_accuracy
from catena_zero.evaluate.learning import evaluate_learning
from catena_zero.evaluate.loading import LoadedNet, load_net, net_at_komi, search_config_of
from catena_zero.evaluate.values import value_generalisation, value_trajectories


def run_evaluation(config: EvaluateConfig, search_overrides: Mapping[str, Any] | None = None,
                   log: Callable[[str], None] = print) -> dict:
    """The report of config.mode; `search_overrides` (SearchConfig fields) change the run's
    search in every mode but generalisation, which plays the run's own self-play search."""
    if config.mode == "generalisation":
        if search_overrides:
            raise EvaluationError("search overrides do not apply to mode generalisation (it "
                                  "plays the run's own self-play search)")
        return value_generalisation(config, log)
    measure = {"learning": evaluate_learning, "endgame": endgame_accuracy,
               "trajectories": value_trajectories}[config.mode]
    return measure(config, search_overrides, log)


__all__ = [
    "MODES",
    "EvaluateConfig",
    "EvaluationError",
    "LoadedNet",
    "endgame_accuracy",
    "evaluate_learning",
    "load_net",
    "net_at_komi",
    "run_evaluation",
    "search_config_of",
    "value_generalisation",
    "value_trajectories",
]
