"""Batched matches between two agents.

All games of a match advance together: at every step each agent is asked once,
for the batch of unfinished games where it is to move. Games come in pairs that
share an opening: in game 2k agent A plays Black, in game 2k+1 White. Every pair
starts from its own seeded stochastic opening (a few uniformly random placements,
or moves sampled from an opening agent), re-drawn where two pairs would start
from the same position, so that games are not duplicates of each other.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from catena_zero.arena.agents import Agent
from catena_zero.arena.stats import elo_from_score, match_score, wilson_interval
from catena_zero.rules import (
    BLACK,
    EMPTY,
    NO_ACTION,
    WHITE,
    Engine,
    GameState,
    Rules,
    result_string,
)

# Rounds of re-drawing duplicated openings before accepting the duplicates (a
# small board can have fewer distinct openings than pairs).
_OPENING_REDRAW_ROUNDS = 20


ProgressFn = Callable[[int, int], None]  # (finished games, total games)


@dataclass(frozen=True)
class ColourRecord:
    wins: int  # games agent A won with this colour
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses


@dataclass(frozen=True)
class GameRecord:
    index: int  # game number in the match
    pair: int  # opening pair (games 2k and 2k+1 share opening k)
    a_colour: str  # "black" or "white": agent A's colour
    opening_plies: int  # how many of `actions` belong to the opening
    actions: list[int]  # every action of the game, opening included
    result: str  # "B+3.5", "W+2" or "0" (RULES.md ruling 6)
    a_points: float  # 1 win, 0.5 draw, 0 loss for agent A


@dataclass
class MatchResult:
    name_a: str
    name_b: str
    rules: str  # e.g. "side4-komi-standard"
    komi: int
    seed: int
    wins: int  # of agent A
    draws: int
    losses: int
    a_as_black: ColourRecord
    a_as_white: ColourRecord
    score: float  # A's points / games, draws as half
    interval: tuple[float, float]  # Wilson 95% interval of the score
    distinct_openings: int  # distinct opening positions among the pairs
    games: list[GameRecord] = field(default_factory=list)
    seconds: float = 0.0  # wall-clock time of the match

    @property
    def num_games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def elo_difference(self) -> float:
        """Logistic Elo of A over B implied by the score (+-inf at 100% / 0%)."""
        return float(elo_from_score(self.score))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["interval"] = list(self.interval)
        data["num_games"] = self.num_games
        data["elo_difference"] = self.elo_difference
        return data


def _agent_name(agent: Any) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


def _position_keys(state: GameState) -> list[bytes]:
    """One hashable key per game of the position (stones, mover, button, stones left)."""
    parts = np.concatenate(
        [state.stones.astype(np.int8),
         np.stack([state.to_move, state.button, state.stones_left], axis=1).astype(np.int8)],
        axis=1,
    )  # [B, C + 3]
    return [row.tobytes() for row in parts]


def _random_placements(engine: Engine, state: GameState, rng: np.random.Generator
                       ) -> np.ndarray:
    """Uniform random legal placement per game (the button excluded). int [B]"""
    legal = engine.legal_actions(state)[:, : engine.rules.board.num_cells]  # [B, C]
    counts = legal.sum(axis=1)
    # Inverse-CDF sampling over each row's legal cells, all rows at once.
    targets = (rng.random(len(counts)) * np.maximum(counts, 1)).astype(np.int64)
    cumulative = np.cumsum(legal, axis=1)  # [B, C]
    actions = np.argmax(cumulative > targets[:, None], axis=1)
    return np.where((counts > 0) & ~state.terminal, actions, NO_ACTION)


def make_openings(
    engine: Engine,
    num_pairs: int,
    plies: int,
    komi: int | np.ndarray,
    seed: int,
    opening_agent: Agent | None = None,
) -> tuple[GameState, np.ndarray, int]:
    """Distinct seeded openings: (states [P], actions int [P, plies], distinct count).

    Each opening is `plies` actions from the empty board: uniform random placements,
    or the opening agent's choices. Pairs whose position duplicates an earlier pair's
    are re-drawn (up to a fixed number of rounds).
    """
    if plies < 0:
        raise ValueError(f"opening plies must be >= 0, got {plies}")
    komi_array = np.broadcast_to(np.asarray(komi, dtype=np.int64), (num_pairs,))
    states = engine.new_games(num_pairs, komi=komi_array.copy())
    history = np.full((num_pairs, plies), NO_ACTION, dtype=np.int64)
    redraw = np.arange(num_pairs)
    for round_index in range(_OPENING_REDRAW_ROUNDS + 1):
        rng = np.random.default_rng([seed, round_index])
        fresh = engine.new_games(len(redraw), komi=komi_array[redraw].copy())
        fresh_history = np.full((len(redraw), plies), NO_ACTION, dtype=np.int64)
        for ply in range(plies):
            if opening_agent is None:
                actions = _random_placements(engine, fresh, rng)
            else:
                actions = np.full(len(redraw), NO_ACTION, dtype=np.int64)
                active = np.flatnonzero(~fresh.terminal)
                if len(active):
                    actions[active] = opening_agent.select_actions(engine, fresh.take(active), rng)
            engine.step(fresh, actions)
            fresh_history[:, ply] = actions
        states.put(redraw, fresh)
        history[redraw] = fresh_history
        keys = _position_keys(states)
        seen: set[bytes] = set()
        duplicates = []
        for pair, key in enumerate(keys):
            if key in seen:
                duplicates.append(pair)
            seen.add(key)
        if not duplicates or round_index == _OPENING_REDRAW_ROUNDS:
            return states, history, len(seen)
        redraw = np.array(duplicates, dtype=np.int64)
    raise AssertionError("unreachable")


def play_match(
    rules: Rules,
    agent_a: Agent,
    agent_b: Agent,
    num_games: int,
    komi: int = 0,
    seed: int = 0,
    progress: ProgressFn | None = None,
    opening_plies: int = 2,
    opening_agent: Agent | None = None,
    name_a: str | None = None,
    name_b: str | None = None,
) -> MatchResult:
    """Play `num_games` (even) games of A against B, all advancing together.

    Game 2k: A is Black; game 2k+1: A is White; both start from opening k.
    `progress(finished, total)` is called after every step.
    """
    if not isinstance(num_games, int | np.integer) or num_games < 2 or num_games % 2:
        raise ValueError(f"num_games must be an even int >= 2 (colours alternate per pair), "
                         f"got {num_games!r}")
    rules.validate_komi(komi)
    started = time.perf_counter()
    engine = Engine(rules)
    num_pairs = num_games // 2
    openings, opening_history, distinct = make_openings(
        engine, num_pairs, opening_plies, komi, seed, opening_agent)
    pair_of_game = np.repeat(np.arange(num_pairs), 2)  # [G]
    states = openings.take(pair_of_game)
    a_colour = np.where(np.arange(num_games) % 2 == 0, BLACK, WHITE).astype(np.int8)  # [G]
    rng_a = np.random.default_rng([seed, 1_000_003])
    rng_b = np.random.default_rng([seed, 2_000_003])
    # A game takes at most one action per cell plus the button.
    max_steps = rules.board.num_actions + 1
    history = np.full((num_games, max_steps), NO_ACTION, dtype=np.int64)
    for step_index in range(max_steps + 1):
        if progress is not None:
            progress(int(states.terminal.sum()), num_games)
        if states.terminal.all():
            break
        if step_index == max_steps:
            raise RuntimeError(f"match did not finish within {max_steps} steps")
        actions = np.full(num_games, NO_ACTION, dtype=np.int64)
        a_to_move = states.to_move == a_colour
        for agent, rng, movers in ((agent_a, rng_a, a_to_move), (agent_b, rng_b, ~a_to_move)):
            index = np.flatnonzero(movers & ~states.terminal)
            if len(index):
                chosen = np.asarray(agent.select_actions(engine, states.take(index), rng))
                if chosen.shape != (len(index),):
                    raise ValueError(f"agent {_agent_name(agent)} returned actions of shape "
                                     f"{chosen.shape}, expected ({len(index)},)")
                actions[index] = chosen
        engine.step(states, actions)
        history[:, step_index] = actions

    result = engine.result(states)
    winner = np.asarray(result.winner)
    a_points = np.where(winner == a_colour, 1.0, np.where(winner == EMPTY, 0.5, 0.0))  # [G]
    summary = _summarise(rules, komi, seed, name_a or _agent_name(agent_a),
                         name_b or _agent_name(agent_b), a_colour, a_points, winner,
                         np.asarray(result.margin), opening_history, pair_of_game, history,
                         distinct)
    summary.seconds = time.perf_counter() - started
    return summary


def _summarise(rules, komi, seed, name_a, name_b, a_colour, a_points, winner, margin,
               opening_history, pair_of_game, history, distinct) -> MatchResult:
    def record(colour: int) -> ColourRecord:
        points = a_points[a_colour == colour]
        return ColourRecord(int((points == 1).sum()), int((points == 0.5).sum()),
                            int((points == 0).sum()))

    as_black, as_white = record(BLACK), record(WHITE)
    wins = as_black.wins + as_white.wins
    draws = as_black.draws + as_white.draws
    losses = as_black.losses + as_white.losses
    score = float(match_score(wins, draws, losses))
    lower, upper = wilson_interval(wins + 0.5 * draws, wins + draws + losses)
    games = []
    for game in range(len(a_points)):
        opening = [int(a) for a in opening_history[pair_of_game[game]] if a != NO_ACTION]
        played = [int(a) for a in history[game] if a != NO_ACTION]
        games.append(GameRecord(
            index=game, pair=int(pair_of_game[game]),
            a_colour="black" if a_colour[game] == BLACK else "white",
            opening_plies=len(opening), actions=opening + played,
            result=result_string(int(winner[game]), float(margin[game])),
            a_points=float(a_points[game]),
        ))
    track = f"side{rules.side}-{_enum_value(rules.game_type)}-{_enum_value(rules.scoring)}"
    return MatchResult(
        name_a=name_a, name_b=name_b, rules=track, komi=int(komi), seed=int(seed),
        wins=wins, draws=draws, losses=losses, a_as_black=as_black, a_as_white=as_white,
        score=score, interval=(float(lower), float(upper)), distinct_openings=int(distinct),
        games=games,
    )


def _enum_value(value: Any) -> str:
    return str(getattr(value, "value", value))


def combine_results(results: list[MatchResult]) -> MatchResult:
    """One result from several matches between the same two agents (games renumbered)."""
    if not results:
        raise ValueError("combine_results needs at least one result")
    first = results[0]
    for other in results[1:]:
        if (other.name_a, other.name_b, other.rules) != (first.name_a, first.name_b, first.rules):
            raise ValueError(f"cannot combine {other.name_a} vs {other.name_b} ({other.rules}) "
                             f"with {first.name_a} vs {first.name_b} ({first.rules})")

    def add(records: list[ColourRecord]) -> ColourRecord:
        return ColourRecord(sum(r.wins for r in records), sum(r.draws for r in records),
                            sum(r.losses for r in records))

    games: list[GameRecord] = []
    pair_offset = 0
    for result in results:
        for game in result.games:
            games.append(GameRecord(**{**asdict(game), "index": len(games),
                                       "pair": game.pair + pair_offset}))
        pair_offset += result.num_games // 2
    wins = sum(r.wins for r in results)
    draws = sum(r.draws for r in results)
    losses = sum(r.losses for r in results)
    lower, upper = wilson_interval(wins + 0.5 * draws, wins + draws + losses)
    return MatchResult(
        name_a=first.name_a, name_b=first.name_b, rules=first.rules, komi=first.komi,
        seed=first.seed, wins=wins, draws=draws, losses=losses,
        a_as_black=add([r.a_as_black for r in results]),
        a_as_white=add([r.a_as_white for r in results]),
        score=float(match_score(wins, draws, losses)), interval=(float(lower), float(upper)),
        distinct_openings=sum(r.distinct_openings for r in results), games=games,
        seconds=sum(r.seconds for r in results),
    )
