"""catena-zero arena: matches between agents, gating against the champion, the Elo ladder.

    catena-zero arena preset=side4 arena.agent_a=uct:200 arena.agent_b=random arena.num_games=64
    catena-zero arena preset=side4 arena=gate arena.candidate=checkpoint:runs/a/checkpoints/X.pt
    catena-zero arena preset=side4 arena=ladder arena.ladder.run_dir=runs/a

Agent specs: random, greedy, uct:N (UCT with N random-rollout playouts), checkpoint:PATH
(network + the `mcts` search settings), champion (the registry's champion of the track).

match:  prints A's wins-draws-losses overall and per colour, the score (draws as half), its
        Wilson 95% interval and the implied Elo difference.
gate:   plays the candidate against the track's champion (or crowns it if there is none),
        promotes it at >= arena.gate.threshold or by SPRT, updates arena.gate.registry.
ladder: rates the run's checkpoints and the baselines together (Bradley-Terry, random = 0)
        at the track's fair komi unless arena.komi is given (the exact one where the solver
        knows it, else the newest checkpoint's estimate, rounded; komi 0 with neither);
        writes elo.csv, elo.png, matches.json and TensorBoard scalars to <run_dir>/elo.
The registry (arena.gate.registry, default runs/champions.json) is relative to the current
directory.
A progress bar runs on stderr; the table goes to stdout.
"""

from __future__ import annotations

import sys

from tqdm import tqdm

from catena_zero.arena.config import ArenaConfig
from catena_zero.arena.gating import run_gate
from catena_zero.arena.ladder import checkpoint_step, ladder_komi, ladder_players, run_ladder
from catena_zero.arena.match import play_match
from catena_zero.arena.registry import write_json_atomic
from catena_zero.arena.report import format_elo, format_gate, format_matches
from catena_zero.arena.specs import AgentFactory, parse_agent_spec
from catena_zero.cli.common import (
    ConfigError,
    compose,
    file_errors,
    rules_from_config,
    to_dataclass,
)
from catena_zero.export.evaluator import read_model_network
from catena_zero.komi.config import SolveConfig
from catena_zero.komi.exact import exact_fair_komi
from catena_zero.mcts.config import SearchConfig

# what `catena-zero arena --help` lists: the keys this command reads (the rest of the
# composed config is the training schema, there so that presets apply)
HELP_KEYS = ("board", "rules", "mcts", "arena")

KOMI_SOURCES = {"given": "arena.komi", "exact": "the exact fair komi",
                "estimate": "the newest checkpoint's fair-komi estimate, rounded",
                "none": "no fair komi known: give arena.komi"}


class _ProgressBar:
    """A tqdm bar fed with absolute (finished, total) counts; relabelled per match.

    Games of a batched match tend to finish together near the end, so the bar also shows
    the move number (one progress call per move of the batch).
    """

    def __init__(self) -> None:
        self.bar: tqdm | None = None
        self.label: str | None = None
        self.moves = 0

    def __call__(self, finished: int, total: int, label: str = "games") -> None:
        if self.bar is None or label != self.label or total != self.bar.total:
            self.close()
            self.bar = tqdm(total=total, desc=label, unit="game", file=sys.stderr,
                            leave=False, dynamic_ncols=True)
            self.label = label
            self.moves = 0
        self.bar.set_postfix_str(f"move {self.moves}", refresh=False)
        self.moves += 1
        self.bar.update(finished - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def main(overrides: list[str]) -> int:
    config = compose("arena", overrides)
    rules = rules_from_config(config)
    arena = to_dataclass(ArenaConfig, config.arena, "arena")
    search = to_dataclass(SearchConfig, config.mcts, "mcts")
    try:
        if arena.komi is not None:
            rules.validate_komi(arena.komi)
        for spec in (arena.agent_a, arena.agent_b, arena.opening_agent, arena.candidate):
            if spec is not None:
                parse_agent_spec(spec)
    except ValueError as error:
        raise ConfigError(f"arena: {error}") from error
    factory = AgentFactory(rules, search_config=search, device=arena.device,
                           registry=arena.gate.registry, model_reader=read_model_network)
    progress = _ProgressBar()
    # Sampled, so that a network's openings differ from pair to pair.
    opening_agent = (build_agent(factory, arena.opening_agent, temperature=1.0)
                     if arena.opening_agent else None)
    match_komi = 0 if arena.komi is None else arena.komi  # match and gate
    if arena.mode != "ladder":
        print(f"rules: {rules}  komi: {match_komi}  mode: {arena.mode}", flush=True)
    try:
        if arena.mode == "match":
            agent_a, agent_b = (build_agent(factory, spec) for spec in (arena.agent_a,
                                                                        arena.agent_b))
            result = play_match(
                rules, agent_a, agent_b, arena.num_games,
                komi=match_komi, seed=arena.seed, progress=progress,
                opening_plies=arena.opening_plies,
                opening_agent=opening_agent,
                name_a=arena.agent_a, name_b=arena.agent_b,
            )
            progress.close()
            print(format_matches([result]))
            if arena.results_json:
                players = {"a": factory.describe(arena.agent_a),
                           "b": factory.describe(arena.agent_b)}
                write_json_atomic(arena.results_json, {"format": "catena_zero.match_result",
                                                       "format_version": 1, "players": players,
                                                       **result.to_dict()})
        elif arena.mode == "gate":
            if not arena.candidate:
                raise ConfigError("arena.candidate must name a checkpoint in mode gate")
            step = checkpoint_step_of(arena.candidate)
            result = run_gate(rules, arena.candidate, arena.gate, factory=factory, step=step,
                              komi=match_komi, seed=arena.seed, progress=progress,
                              opening_plies=arena.opening_plies, opening_agent=opening_agent)
            progress.close()
            print(format_gate(result))
        else:
            if not arena.ladder.run_dir and not arena.ladder.checkpoints:
                print("note: no arena.ladder.run_dir or checkpoints: rating the baselines only",
                      file=sys.stderr)
            players = ladder_players(arena.ladder)
            exact = exact_fair_komi(rules, SolveConfig().cache_path)
            komi, source = ladder_komi(rules, players, arena.komi, exact)
            print(f"rules: {rules}  komi: {komi} ({KOMI_SOURCES[source]})  mode: ladder",
                  flush=True)
            ladder = run_ladder(
                rules, arena.ladder, factory, komi=arena.komi, fair_komi=exact,
                seed=arena.seed, players=players,
                opening_plies=arena.opening_plies, opening_agent=opening_agent,
                progress=lambda label, done, total: progress(done, total, label),
            )
            progress.close()
            print(format_matches(ladder.matches))
            print()
            print(format_elo(ladder.fit))
            if ladder.csv_path is not None:
                print(f"\nwrote {ladder.csv_path} and {ladder.plot_path}")
    finally:
        progress.close()
    return 0


def build_agent(factory: AgentFactory, spec: str, temperature: float = 0.0):
    """The agent of `spec`; ConfigError for a spec naming no usable agent (say "champion"
    without one). A damaged checkpoint or registry raises its own error, printed as such."""
    try:
        return factory(spec, temperature=temperature)
    except ValueError as error:
        if isinstance(error, file_errors()):
            raise
        raise ConfigError(f"arena: {error}") from error


def checkpoint_step_of(spec: str) -> int:
    """Training step from a candidate's file name (-1 when it has none)."""
    from pathlib import Path

    step = checkpoint_step(Path(parse_agent_spec(spec).path or spec))
    return -1 if step is None else step
