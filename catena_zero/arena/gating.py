"""Gating: a new checkpoint plays the champion of its track and may replace it.

The candidate is promoted when it scores at least `GateConfig.threshold` (draws
as half) over `num_games` games, or, with `use_sprt`, as soon as the SPRT
accepts H1 (and it is rejected as soon as the SPRT accepts H0; a match that
reaches `num_games` undecided falls back to the threshold). The first checkpoint
of a track becomes champion without a match. Promotion is a compare-and-set on
the registry: if another process changed the champion while the match was being
played, the candidate has not beaten the new one and is not promoted ("stale").
Each track has its own champion; a run that trains one network on a mix of tracks
gates a checkpoint on each of them (`track=`), at that track's fair komi.

From the training loop (`make_training_gate` wraps this in the crash-safe hook of
`catena_zero.arena.training_gate`):

    callback = make_gating_callback(rules, GateConfig(registry="runs/champions.json"),
                                    search_config=search_config)
    train_loop(loop_config, on_checkpoint=callback)   # each CheckpointEvent is gated
    result = callback("runs/a/checkpoints/checkpoint-step000000500-iter000010.pt", 500)
    print(result.summary(), result.scalars())
    result = callback(path, 500, fair_komi=2.4, track="4/komi/standard")   # another track
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from catena_zero.arena.config import GateConfig, TrainingGateConfig
from catena_zero.arena.gate_result import GateResult, MixGateResult, finite_or_none
from catena_zero.arena.match import MatchResult, ProgressFn, combine_results, play_match
from catena_zero.arena.registry import (
    ChampionEntry,
    ChampionRegistry,
    StaleChampionError,
    Track,
)
from catena_zero.arena.specs import AgentFactory, parse_agent_spec
from catena_zero.arena.sprt import SprtDecision, SprtResult, sprt
from catena_zero.arena.training_gate import TrainingGate
from catena_zero.rules import Rules

# The gate's results (arena.gate_result) are part of this module's interface: callers take
# GateResult and MixGateResult from here with the functions that return them.
__all__ = ["GateResult", "MixGateResult", "finite_or_none", "gate_match", "make_gating_callback",
           "make_training_gate", "run_gate"]


def gate_match(
    rules: Rules,
    candidate: Any,
    champion: Any,
    config: GateConfig,
    komi: int = 0,
    seed: int = 0,
    progress: ProgressFn | None = None,
    opening_plies: int = 2,
    opening_agent: Any = None,
    names: tuple[str, str] = ("candidate", "champion"),
) -> tuple[bool, str, MatchResult, SprtResult | None]:
    """Play the candidate (A) against the champion (B) and decide.

    Returns (promote, reason, match, last SPRT result or None); reason is
    "threshold" or "sprt".
    """
    chunk = config.chunk_games if config.use_sprt else config.num_games
    results: list[MatchResult] = []
    last_sprt: SprtResult | None = None
    played = 0
    while played < config.num_games:
        games = min(chunk, config.num_games - played)

        def chunk_progress(finished: int, _total: int, offset: int = played) -> None:
            if progress is not None:
                progress(offset + finished, config.num_games)

        results.append(play_match(
            rules, candidate, champion, games, komi=komi, seed=seed + 7919 * len(results),
            progress=chunk_progress, opening_plies=opening_plies, opening_agent=opening_agent,
            name_a=names[0], name_b=names[1],
        ))
        played += games
        if config.use_sprt:
            match = combine_results(results)
            last_sprt = sprt(match.wins, match.draws, match.losses, config.sprt)
            if last_sprt.decision is not SprtDecision.CONTINUE:
                return last_sprt.decision is SprtDecision.ACCEPT, "sprt", match, last_sprt
    match = combine_results(results)
    return match.score >= config.threshold, "threshold", match, last_sprt


def _checkpoint_path(candidate: str | os.PathLike) -> str:
    text = str(candidate)
    if text.startswith("checkpoint:") or Path(text).is_file():
        return parse_agent_spec(text).path
    raise ValueError(f"gate candidate must be a checkpoint (checkpoint:PATH or a file), "
                     f"got {text!r}")


def run_gate(
    rules: Rules,
    candidate: str | os.PathLike,
    config: GateConfig,
    factory: Callable[[str], Any] | None = None,
    step: int = -1,
    komi: int = 0,
    seed: int = 0,
    progress: ProgressFn | None = None,
    opening_plies: int = 2,
    opening_agent: Any = None,
    fair_komi: float | None = None,
) -> GateResult:
    """Gate one checkpoint against the champion of the track of `rules` and update the
    registry.

    factory: builds agents from specs for `rules` (default: an AgentFactory with the default
    SearchConfig). The champion is rebuilt from its registry path. fair_komi: the run's
    estimate for this track, kept in a promotion's registry entry.
    """
    candidate_path = _checkpoint_path(candidate)
    registry = ChampionRegistry(config.registry)
    track = Track.from_rules(rules)
    factory = factory or AgentFactory(rules, registry=config.registry)
    current = registry.champion(track)
    if current is None:
        return _promote(registry, track, candidate_path, None, step, "first", None, None,
                        komi, fair_komi)
    if Path(current.checkpoint).resolve() == Path(candidate_path).resolve():
        raise ValueError(f"candidate {candidate_path!r} is already the champion of {track.key}")
    candidate_agent = factory(f"checkpoint:{candidate_path}")
    champion_agent = factory(f"checkpoint:{current.checkpoint}")
    promote, reason, match, last_sprt = gate_match(
        rules, candidate_agent, champion_agent, config, komi=komi, seed=seed,
        progress=progress, opening_plies=opening_plies, opening_agent=opening_agent,
        names=(candidate_path, current.checkpoint),
    )
    if not promote:
        return GateResult(track.key, candidate_path, current.checkpoint, step, False, reason,
                          match, last_sprt, komi)
    return _promote(registry, track, candidate_path, current.checkpoint, step, reason, match,
                    last_sprt, komi, fair_komi)


def _promote(registry: ChampionRegistry, track: Track, candidate: str, previous: str | None,
             step: int, reason: str, match: MatchResult | None, last_sprt: SprtResult | None,
             komi: int, fair_komi: float | None) -> GateResult:
    extra: dict[str, Any] = {"komi": int(komi)}
    if match is not None:
        extra.update(wins=match.wins, draws=match.draws, losses=match.losses,
                     interval=list(match.interval))
    if last_sprt is not None:
        extra["sprt_llr"] = last_sprt.llr
    entry = ChampionEntry(
        checkpoint=candidate, step=int(step), reason=reason,
        score=None if match is None else match.score,
        games=0 if match is None else match.num_games, extra=extra,
        fair_komi=finite_or_none(fair_komi),
    )
    try:
        registry.promote(track, entry, expected_previous=previous)
    except StaleChampionError:
        return GateResult(track.key, candidate, previous, step, False, "stale", match, last_sprt,
                          komi)
    return GateResult(track.key, candidate, previous, step, True, reason, match, last_sprt, komi)


def make_gating_callback(
    rules: Rules,
    config: GateConfig,
    search_config: Any = None,
    device: str = "auto",
    komi: int | None = None,
    seed: int = 0,
    opening_plies: int = 2,
    log: Callable[[str], None] | None = print,
    factory: Callable[[str], Any] | None = None,
) -> Callable[..., GateResult]:
    """A gating callback for the training loop.

    `callback(event)` takes the loop's CheckpointEvent (`.path`, `.counters.step`,
    `.fair_komi`), so it can be passed as `train_loop(config, on_checkpoint=callback)`;
    `callback(path, step, fair_komi=None, track=None)` works too. Each call gates the
    checkpoint against the current champion of `track` (a Track or its "6/komi/standard"
    form; None: the track of `rules`), playing that track's rules (seeded by `seed + step`),
    and logs a one-line summary through `log`. komi None: the fair-komi estimate rounded into
    the track's range (0 without one). search_config (a SearchConfig) and device configure
    the checkpoint agents; `factory` replaces the default AgentFactory (tests, custom agents;
    one without `for_rules` plays every track with its own rules).
    """
    factory = factory or AgentFactory(rules, search_config=search_config, device=device,
                                      registry=config.registry)
    home = Track.from_rules(rules)

    def callback(event: Any, step: int | None = None, fair_komi: float | None = None,
                 track: Track | str | None = None) -> GateResult:
        if hasattr(event, "path") and hasattr(event, "counters"):
            path, step = event.path, int(event.counters.step)
            estimate = getattr(event, "fair_komi", None)
        else:
            path, estimate = event, fair_komi
            if step is None:
                raise ValueError(f"gating callback needs the step of {str(event)!r}")
        played = home if track is None else Track.parse(track)
        track_rules = rules if played == home else played.rules()
        track_factory = factory
        if played != home and hasattr(factory, "for_rules"):
            track_factory = factory.for_rules(track_rules)
        game_komi = komi if komi is not None else track_rules.nearest_komi(estimate)
        result = run_gate(track_rules, f"checkpoint:{path}", config, factory=track_factory,
                          step=int(step), komi=game_komi, seed=seed + int(step),
                          opening_plies=opening_plies, fair_komi=finite_or_none(estimate))
        if log is not None:
            log(result.summary())
        return result

    return callback




def make_training_gate(rules: Rules, config: TrainingGateConfig, search_config: Any = None,
                       device: str = "auto", seed: int = 0,
                       log: Callable[[str], None] | None = print) -> Callable[..., Any] | None:
    """The training loop's `on_checkpoint` hook: gates every `every_iterations`-th checkpoint
    exactly once on each track of the run's mix (or of `config.tracks`), across crashes
    (`catena_zero.arena.training_gate.TrainingGate`); None when gating is disabled. `rules`
    are the run's (its only track when its CheckpointEvents name no mix)."""
    if not config.enabled:
        return None
    return TrainingGate(
        make_gating_callback(rules, config.gate, search_config=search_config, device=device,
                             seed=seed, opening_plies=config.opening_plies, log=log),
        config.every_iterations, rules, config.gate.registry, log=log, tracks=config.tracks)
