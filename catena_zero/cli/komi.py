"""catena-zero komi: the fair komi of a track, estimated by an agent three ways.

    catena-zero komi --side 3 agent=uct:200                 # before any model exists
    catena-zero komi --side 4 agent=champion                # the registry's champion
    catena-zero komi --side 3 rules=nokomi_standard agent=runs/side3/checkpoints/last.pt
    catena-zero komi --side 2 rules=komi_quadratic agent=solver
    catena-zero komi --side 4 agent=catena_zero/play/models/side4.pt   # a model file

Writes under out_dir: sweep_<track>.csv/.png (Black's score per komi, Wilson 95%
intervals, logistic fit), opening_<track>.csv/.png for nokomi, summary.csv; prints the
summary table (exact solver value where cached, the agent's own bisection estimate, the
empirical fair komi with its 95% profile-likelihood interval).
"""

from __future__ import annotations

from catena_zero.cli.common import (
    ConfigError,
    compose,
    file_errors,
    rules_from_config,
    to_dataclass,
)
from catena_zero.komi.config import KomiConfig

NOT_KOMI_KEYS = ("board", "rules", "mcts")


def build_agent(rules, config: KomiConfig, search_config):
    """The agent named by config.agent: "solver", or anything the arena's specs accept."""
    if config.agent.strip().lower() == "solver":
        from catena_zero.komi.solver_agent import SolverAgent

        return SolverAgent()
    from catena_zero.arena.specs import AgentFactory
    from catena_zero.export.evaluator import read_model_network

    factory = AgentFactory(rules, search_config, config.device, config.registry_path,
                           model_reader=read_model_network)
    try:
        return factory(config.agent)
    except ValueError as error:  # a malformed spec, a missing checkpoint or champion
        if isinstance(error, file_errors()):  # a damaged file: printed as a file error
            raise
        raise ConfigError(f"agent={config.agent!r}: {error}") from error


def main(overrides: list[str]) -> int:
    config = compose("komi", overrides)
    rules = rules_from_config(config)
    from catena_zero.mcts.config import SearchConfig

    search_config = to_dataclass(SearchConfig, config.mcts, "mcts")
    komi_config = to_dataclass(KomiConfig, {k: config[k] for k in config
                                            if k not in NOT_KOMI_KEYS})
    from catena_zero.komi.analysis import analyse_komi
    from catena_zero.komi.plots import format_summary

    agent = build_agent(rules, komi_config, search_config)
    row = analyse_komi(rules, agent, komi_config.agent, komi_config)
    print(format_summary([row]))
    print(f"files in {komi_config.out_dir}")
    return 0
