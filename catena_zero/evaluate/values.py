"""What a net's value says: along its games (trajectories) and on fresh positions
(generalisation).

Trajectories: where a net's search loses. The net plays `games` games as Black and as many
as White, all from the empty board at one komi (`loading.komi_to_play`), against one
baseline. At every move of the net it keeps the search's root value (the net's own view, in
[-1, 1]). Reported: the wins per colour, the mean root value at each of the net's moves in
won and in lost games, and for lost games the net's last move that still expected a win
(value > 0): a late last "winning" move with a collapse after it points at endgame
misjudgement, an early one at the opening.

Generalisation: does the value head overfit its replay window? The net plays `games` fresh
self-play games with the run's own self-play and search settings (komis drawn around its
fair-komi estimate as in training, or around `komi`); the value head's win/draw/loss
cross-entropy on the fresh positions is reported beside the same loss on the run's newest
`shards` shards, which the net was trained on. Equal losses mean the value head generalises
and its plateau is the noise of the game outcomes (or capacity), not memorised samples; a
fresh loss well above the shards' means overfitting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from catena_zero.arena.agents import SearchAgent
from catena_zero.data import Samples, list_shards, read_shard
from catena_zero.evaluate.config import EvaluateConfig, EvaluationError
from catena_zero.evaluate.learning import REPORT_FORMAT_VERSION, baseline, write_report
from catena_zero.evaluate.loading import load_net, net_at_komi, stored_config
from catena_zero.komi.fair import estimate_fair_komi
from catena_zero.mcts.config import SearchConfig
from catena_zero.rules import BLACK, NO_ACTION, WHITE, Engine
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.selfplay.selfplay import KomiSampler, SelfPlay


def trace_games(engine: Engine, agent: SearchAgent, opponent, colour: int, games: int,
                komi: int, rng: np.random.Generator) -> tuple[np.ndarray, list[list[float]]]:
    """(won [G] bool, root values of the agent's moves per game), all games played together
    from the empty board with the agent playing `colour`."""
    states = engine.new_games(games, komi=komi)
    values: list[list[float]] = [[] for _ in range(games)]
    while not states.terminal.all():
        live = np.flatnonzero(~states.terminal)
        actions = np.full(games, NO_ACTION, dtype=np.int64)
        ours = live[states.to_move[live] == colour]
        theirs = live[states.to_move[live] != colour]
        if ours.size:
            actions[ours] = agent.select_actions(engine, states.take(ours), rng)
            for game, value in zip(ours, agent.last_output.root_value, strict=True):
                values[game].append(float(value))
        if theirs.size:
            actions[theirs] = opponent.select_actions(engine, states.take(theirs), rng)
        engine.step(states, actions)
    return engine.result(states).winner == colour, values


def mean_by_move(trajectories: list[list[float]]) -> list[float | None]:
    """Mean value at the agent's k-th move over the games that reached it."""
    length = max((len(t) for t in trajectories), default=0)
    means = []
    for k in range(length):
        reached = [t[k] for t in trajectories if len(t) > k]
        means.append(round(float(np.mean(reached)), 3) if reached else None)
    return means


def last_winning_move(trajectory: list[float]) -> int:
    """Index of the last move whose value was > 0 (-1 if none)."""
    positive = [k for k, value in enumerate(trajectory) if value > 0]
    return positive[-1] if positive else -1


def summarise_trajectories(won: np.ndarray, values: list[list[float]]) -> dict:
    """Wins, the mean value per move of won and of lost games, the lost games' last move
    still expecting a win and their lengths."""
    lost = [values[g] for g in np.flatnonzero(~won)]
    last = [last_winning_move(t) for t in lost]
    return {
        "games": int(won.size),
        "wins": int(won.sum()),
        "mean_value_won": mean_by_move([values[g] for g in np.flatnonzero(won)]),
        "mean_value_lost": mean_by_move(lost),
        "lost_last_winning_move": last,
        "lost_moves": [len(t) for t in lost],
    }


def value_trajectories(config: EvaluateConfig,
                       search_overrides: Mapping[str, Any] | None = None,
                       log: Callable[[str], None] = print) -> dict:
    """Trace the net's root values as Black and as White (module doc); the JSON report with
    every trajectory (also written to config.json)."""
    evaluated = net_at_komi(config, search_overrides)
    net, komi = evaluated.net, evaluated.komi
    agent = SearchAgent(net.evaluator, evaluated.search)
    opponent = baseline(config.opponents[0], config)
    rng = np.random.default_rng(config.seed)
    simulations = evaluated.search.num_simulations
    report = {"format": "catena_zero.evaluation.trajectories",
              "format_version": REPORT_FORMAT_VERSION,
              "checkpoint": str(net.path), "komi": komi.komi,
              "fair_komi_estimate": komi.fair_komi_estimate,
              "selfplay_fair_komi": komi.selfplay, "komi_from": komi.source,
              "simulations": simulations, "opponent": opponent.name}
    log(f"{net.label}; {komi.text}; {simulations} simulations against "
        f"{opponent.name}")
    for name, colour in (("black", BLACK), ("white", WHITE)):
        won, values = trace_games(net.engine, agent, opponent, colour, config.games, komi.komi,
                                  rng)
        summary = summarise_trajectories(won, values) | {"trajectories": values}
        report[name] = summary
        last = summary["lost_last_winning_move"]
        log(f"as {name}: {summary['wins']}/{summary['games']} won")
        log(f"  mean value per move, won : {summary['mean_value_won']}")
        log(f"  mean value per move, lost: {summary['mean_value_lost']}")
        if last:
            log(f"  lost games: last move still expecting a win, median "
                f"{float(np.median(last)):.1f} of {float(np.median(summary['lost_moves'])):.1f}"
                f" moves; never expected one in {sum(k < 0 for k in last)} of {len(last)}")
    write_report(config.json, report, indent=1)
    return report


def value_cross_entropy(net: torch.nn.Module, samples: Samples, batch_size: int = 1024) -> float:
    """Mean cross-entropy of the value head's win/draw/loss against the samples' targets."""
    net.eval()
    total, count = 0.0, 0
    with torch.inference_mode():
        for start in range(0, len(samples.planes), batch_size):
            stop = start + batch_size
            output = net(torch.as_tensor(samples.planes[start:stop], dtype=torch.float32),
                         torch.as_tensor(samples.globals[start:stop], dtype=torch.float32))
            log_probability = torch.log_softmax(output.value_logits.float(), dim=1)
            target = torch.as_tensor(samples.value_target[start:stop], dtype=torch.float32)
            total += float(-(target * log_probability).sum())
            count += target.shape[0]
    if count == 0:
        raise EvaluationError("no samples to measure the value loss on")
    return total / count


def value_generalisation(config: EvaluateConfig, log: Callable[[str], None] = print) -> dict:
    """Fresh self-play positions against the run's newest shards (module doc); the JSON
    report (also written to config.json). The run's own search plays: no overrides."""
    torch.set_num_threads(config.threads)
    net = load_net(config)
    network = net.network
    fair_komi = estimate_fair_komi(net.engine, net.evaluator)
    # fresh games start on the empty board, whatever games file the run started some inside,
    # and the network plays both colours, whatever league the run played some games against
    selfplay_config = stored_config(SelfPlayConfig, net.stored_config, "selfplay",
                                    start_share=0.0, opponent_share=0.0)
    search_config = stored_config(SearchConfig, net.stored_config, "mcts")
    centre = fair_komi if config.komi is None else config.komi
    sampler = KomiSampler(net.engine, selfplay_config, centre)
    fresh, stats = SelfPlay(net.engine, net.evaluator, search_config, selfplay_config,
                            sampler).play_games(config.games, np.random.default_rng(config.seed))
    report = {"format": "catena_zero.evaluation.generalisation",
              "format_version": REPORT_FORMAT_VERSION,
              "checkpoint": str(net.path), "fair_komi_estimate": fair_komi,
              "fresh": {"games": stats.games, "positions": len(fresh.planes),
                        "value_cross_entropy": value_cross_entropy(network, fresh)},
              "shards": []}
    log(f"{net.label}; fair komi {fair_komi:.2f}")
    log(f"fresh games  {stats.games:4d} games {len(fresh.planes):6d} positions  "
        f"value cross-entropy {report['fresh']['value_cross_entropy']:.4f}")
    shard_dir = net.path.parent.parent / "shards"
    for shard in (list_shards(shard_dir)[-config.shards:] if config.shards else []):
        samples, _ = read_shard(shard)
        loss = value_cross_entropy(network, samples)
        report["shards"].append({"shard": shard.name, "positions": len(samples.planes),
                                 "value_cross_entropy": loss})
        log(f"{shard.name}  {len(samples.planes):6d} positions  value cross-entropy {loss:.4f}")
    write_report(config.json, report, indent=2)
    return report
