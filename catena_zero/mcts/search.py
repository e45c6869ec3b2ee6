"""Batched MCTS: `search` runs B trees together, one evaluate_fn call per simulation for all
leaves (`catena_zero.mcts.batched`), or with `SearchConfig.leaves_per_call` > 1 several leaves
of each tree per call (`catena_zero.mcts.leaf_batch`). A finished search's moves are taken with
`sample_actions` (`catena_zero.mcts.policy`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from catena_zero.mcts.batched import BatchedSearch, SearchOutput
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.evaluation import EvaluateFn
from catena_zero.mcts.leaf_batch import LeafBatchSearch
from catena_zero.mcts.policy import masked_softmax, sample_actions
from catena_zero.mcts.rollout import RolloutMixEvaluator
from catena_zero.mcts.tree import Tree
from catena_zero.rules import GameState

__all__ = ["INITIAL_NODES", "SearchOutput", "masked_softmax", "sample_actions", "search"]

# Nodes a tree starts with; a search with a larger budget grows its trees as it goes.
INITIAL_NODES = 4096


def search(
    engine,
    states: GameState,
    evaluate_fn: EvaluateFn,
    config: SearchConfig,
    rng: np.random.Generator,
    tree: Tree | None = None,
    *,
    tree_reuse: Tree | None = None,
    simulations: np.ndarray | None = None,
    deadline: float | None = None,
    progress_every: float = 1.0,
    on_progress: Callable[[SearchOutput], None] | None = None,
) -> SearchOutput:
    """Search B positions `states` together; `tree` (alias `tree_reuse`) continues old trees.

    `tree` must come from `SearchOutput.reroot` (or be an earlier output's tree for the same
    positions); its roots must equal `states`, else ValueError naming the game. The search
    takes ownership of `tree` and mutates it.

    `simulations` [B] gives each game its own budget (default `config.num_simulations` for
    all): self-play mixes full and cheap searches in one call, so every network call holds
    the leaves of all games still searching. Each game's search is the one it would get
    alone with that budget (the Gumbel halving schedule follows its own budget).

    `deadline` (a `time.monotonic()` instant) stops the search from starting simulations
    after it; every game still gets at least one. `on_progress` is called with the search so
    far (a SearchOutput sharing the live tree: read it, do not keep it) about every
    `progress_every` seconds. `config.leaves_per_call` > 1 gathers several leaves of each
    tree per network call (`catena_zero.mcts.leaf_batch`). `config.rollout_mix` > 0 mixes
    every leaf's value with random playouts (`catena_zero.mcts.rollout.RolloutMixEvaluator`).
    """
    if tree is not None and tree_reuse is not None:
        raise ValueError("pass the reused tree as `tree` or `tree_reuse`, not both")
    if not isinstance(config, SearchConfig):
        raise TypeError(f"config must be a SearchConfig, got {type(config).__name__}")
    if config.rollout_mix > 0:
        evaluate_fn = RolloutMixEvaluator(evaluate_fn, engine, rng, config.rollout_mix,
                                          config.rollout_mix_playouts)
    runner_class = LeafBatchSearch if config.leaves_per_call > 1 else BatchedSearch
    runner = runner_class(engine, evaluate_fn, config, rng, deadline, progress_every,
                          on_progress, initial_nodes=INITIAL_NODES)
    budget = _simulation_budget(simulations, int(states.to_move.shape[0]), config)
    return runner.run(states, tree if tree is not None else tree_reuse, budget)


def _simulation_budget(simulations, batch_size: int, config: SearchConfig) -> np.ndarray:
    """Per-game simulation counts, checked.  # [B] int64"""
    if simulations is None:
        return np.full(batch_size, config.num_simulations, dtype=np.int64)
    budget = np.asarray(simulations)
    if budget.shape != (batch_size,) or not np.issubdtype(budget.dtype, np.integer):
        raise ValueError(
            f"simulations must be an integer array of shape ({batch_size},), got "
            f"{budget.dtype} {budget.shape}"
        )
    if batch_size and budget.min() < 0:
        raise ValueError(f"simulations must be >= 0, got {int(budget.min())}")
    return budget.astype(np.int64)
