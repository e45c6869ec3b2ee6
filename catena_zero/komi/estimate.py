"""The agent's own fair-komi estimate: bisection over the komi input at the empty board.

The bisection itself is `catena_zero.komi.fair.estimate_fair_komi` (the training
loop's cheap estimate from the raw network value); here it runs on top of a search, so
the value it bisects is the search's root value at the empty board. For a network agent
both numbers are reported (raw network, and network + search); for UCT the evaluator is
random rollouts, so only the searched value means anything.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from catena_zero.komi.config import NetworkEstimateConfig
from catena_zero.komi.fair import estimate_fair_komi
from catena_zero.mcts import Evaluation, RolloutEvaluator, SearchConfig, search
from catena_zero.rules import Engine, GameState, Rules


class SearchedEvaluator:
    """An EvaluateFn whose value is a search's root value over another EvaluateFn."""

    def __init__(self, engine: Engine, evaluate_fn, config: SearchConfig, seed: int = 0):
        self.engine = engine
        self.evaluate_fn = evaluate_fn
        self.config = config
        self.rng = np.random.default_rng([seed, 23])

    def __call__(self, states: GameState) -> Evaluation:
        output = search(self.engine, states, self.evaluate_fn, self.config, self.rng)
        return Evaluation(policy_logits=output.root_evaluation.policy_logits,
                          value=np.asarray(output.root_value, dtype=np.float32))


def estimator_setup(agent, engine: Engine, config: NetworkEstimateConfig, seed: int = 0):
    """(evaluate_fn, search config, has_network) for an arena agent, or None when the agent
    has no evaluator to bisect (random, greedy, solver)."""
    evaluate_fn = getattr(agent, "evaluate_fn", None)
    agent_config = getattr(agent, "config", None)
    if evaluate_fn is not None and isinstance(agent_config, SearchConfig):
        # Deterministic search: the estimate should not depend on Gumbel noise.
        searched = dataclasses.replace(agent_config, num_simulations=config.simulations,
                                       gumbel_scale=0.0, dirichlet_fraction=0.0)
        return evaluate_fn, searched, True
    if isinstance(agent_config, SearchConfig) and agent_config.algorithm == "uct":
        rollouts = RolloutEvaluator(engine, np.random.default_rng([seed, 29]))
        return rollouts, dataclasses.replace(agent_config,
                                             num_simulations=config.simulations), False
    return None


def agent_fair_komi(rules: Rules, agent, config: NetworkEstimateConfig, seed: int = 0) -> dict:
    """Fair-komi estimates of the agent's evaluator; {} when there is none or no komi."""
    low, high = rules.komi_range
    if not config.enabled or low == high:
        return {}
    engine = Engine(rules)
    setup = estimator_setup(agent, engine, config, seed)
    if setup is None:
        return {}
    evaluate_fn, search_config, has_network = setup
    searched = SearchedEvaluator(engine, evaluate_fn, search_config, seed)
    result = {"search_fair_komi": estimate_fair_komi(engine, searched),
              "search_simulations": search_config.num_simulations}
    if has_network:
        result["network_fair_komi"] = estimate_fair_komi(engine, evaluate_fn)
    return result

