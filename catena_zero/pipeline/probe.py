"""The strength probe: a few games of the run's current net against fixed baselines on each
track, every `probe.every` iterations, so that a strength curve is drawn while training runs
(AlphaZero.jl benchmarks against baselines every iteration the same way).

Each track plays at its current fair-komi centre (rounded into the track's komi range, as
self-play's komis are), so a win rate measures play rather than the colour drawn. The net
searches with `probe.simulations` simulations per move; colours alternate per pair of games
from `probe.opening_plies` random placements (`catena_zero.arena.match.play_match`).

    scalars = run_probe(players, tracks, state.fair_komis, config.search, config.loop.probe,
                        seed=iteration)
    # {"probe/side4-komi-standard/greedy/win_rate": 0.75, ..., "probe/seconds": 3.2}
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence

from catena_zero.arena.agents import SearchAgent
from catena_zero.arena.match import play_match
from catena_zero.arena.specs import AgentFactory, parse_agent_spec
from catena_zero.mcts.config import SearchConfig
from catena_zero.pipeline.config import LoopConfig, ProbeConfig
from catena_zero.rules import Track


def probe_due(loop: LoopConfig, iteration: int, last: bool = False) -> bool:
    """Whether the probe plays after iteration `iteration` (1-based count of iterations
    done): every `probe.every`-th, and after a run's last one."""
    every = loop.probe.every
    return bool(every) and (iteration % every == 0 or last)


def probed_tracks(tracks: Sequence[Track], probe: ProbeConfig) -> list[Track]:
    """The run's tracks the probe plays: those of `probe.tracks` (empty: all), in the run's
    order."""
    if not probe.tracks:
        return list(tracks)
    chosen = {Track.parse(text) for text in probe.tracks}
    return [track for track in tracks if track in chosen]


def baseline_tag(spec: str) -> str:
    """The spec as a scalar-name part: `uct:16` -> `uct16`."""
    return str(parse_agent_spec(spec)).replace(":", "")


def run_probe(players, tracks: Sequence[Track], fair_komis: Mapping[str, float],
              search: SearchConfig, probe: ProbeConfig, seed: int = 0) -> dict[str, float]:
    """Win rates (draws as half) of the net of `players` (a `TrackPlayers`) on each probed
    track (`probed_tracks`) against each baseline, as `probe/<track>/<baseline>/win_rate`,
    with the komi each track played at (`probe/<track>/komi`) and the seconds it all took
    (`probe/seconds`)."""
    started = time.perf_counter()
    probe_search = dataclasses.replace(search, num_simulations=probe.simulations)
    scalars: dict[str, float] = {}
    for track in probed_tracks(tracks, probe):
        engine, evaluator, _ = players.of(track)
        rules = engine.rules
        komi = rules.nearest_komi(fair_komis.get(track.key))
        net = SearchAgent(evaluator, probe_search, name="net")
        factory = AgentFactory(rules)
        for number, spec in enumerate(probe.baselines):
            match = play_match(rules, net, factory(spec), probe.games, komi=komi,
                               seed=seed * 7919 + number, opening_plies=probe.opening_plies,
                               name_a="net", name_b=spec)
            scalars[f"probe/{track.key}/{baseline_tag(spec)}/win_rate"] = match.score
        scalars[f"probe/{track.key}/komi"] = float(komi)
    scalars["probe/seconds"] = time.perf_counter() - started
    return scalars
