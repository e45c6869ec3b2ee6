"""Helpers that drive the fast batched engine and the definitional reference side by side.

The reference (`reference_engine.RefGame`) chooses every move; the same actions are fed
to one fast `Engine` per scoring type (the game trajectory does not depend on the
scoring, only the result and the komi range do), and after every action the whole
public state of each fast game is compared with the reference. Any difference raises
AssertionError with a reproducible description (side, variant, komi, move list).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from catena_zero.rules import NO_ACTION, Engine, Rules, result_string
from tests.rules.reference_engine import (
    EMPTY,
    GAME_TYPES,
    SCORINGS,
    RefGame,
    komi_range,
)

VARIANTS = [(game_type, scoring) for game_type in GAME_TYPES for scoring in SCORINGS]


@dataclass
class CrosscheckCount:
    trajectories: int = 0  # reference games played
    fast_games: int = 0  # fast-engine games compared move by move (trajectories x scorings)
    actions: int = 0  # actions compared, summed over fast games
    events: Counter = field(default_factory=Counter)  # rule situations met by the reference


def describe(ref: RefGame, komi: int, scoring: str) -> str:
    moves = " ".join(ref.board.action_name(action) for action in ref.history)
    return (f"side={ref.side} game_type={ref.game_type} scoring={scoring} komi={komi} "
            f"moves: {moves}")


def random_komi(rng: random.Random, game_type: str, scoring: str) -> int:
    low, high = komi_range(game_type, scoring)
    # Half the games use a small komi so that the result is not always decided by it.
    return rng.randint(low, min(high, 15) if rng.random() < 0.5 else high)


def choose_action(ref: RefGame, mask: list[bool], rng: random.Random, extend_bias: float) -> int:
    """Uniform over legal actions, or with probability `extend_bias` a legal cell next to a
    stone (grows long ribbons, stressing joins, limits and claims)."""
    legal = [action for action, ok in enumerate(mask) if ok]
    if rng.random() < extend_bias:
        touching = [action for action in legal if action < ref.board.num_cells and any(
            ref.stones[other] != EMPTY for other in ref.board.neighbours[action])]
        if touching:
            return rng.choice(touching)
    return rng.choice(legal)


def compare_state(ref: RefGame, engine: Engine, state, index: int, fast_legal: np.ndarray,
                  ref_legal: list[bool], komi: int, scoring: str) -> None:
    """Compare game `index` of the fast batch with the reference position."""
    where = describe(ref, komi, scoring)
    board = ref.board
    stones = state.stones[index].astype(int).tolist()
    assert stones == ref.stones, (
        f"stones differ at {where}\n fast: {stones}\n  ref: {ref.stones}")
    assert bool(state.terminal[index]) == ref.terminal, f"terminal differs at {where}"
    assert fast_legal.astype(bool).tolist() == ref_legal, (
        f"legal actions differ at {where}\n fast: "
        f"{[board.action_name(a) for a in np.flatnonzero(fast_legal)]}\n  ref: "
        f"{[board.action_name(a) for a, ok in enumerate(ref_legal) if ok]}")
    degree = [sum(1 for other in board.neighbours[cell] if ref.stones[other] != EMPTY)
              for cell in range(board.num_cells)]
    assert state.degree[index].astype(int).tolist() == degree, f"degree differs at {where}"
    assert int(state.move_number[index]) == ref.move_number, f"move_number differs at {where}"
    assert int(state.komi[index]) == komi, f"komi differs at {where}"
    assert int(state.last_placer[index]) == ref.last_placer, f"last_placer differs at {where}"
    if ref.has_button:
        assert int(state.button[index]) == ref.button, f"button differs at {where}"
    if not ref.terminal:
        assert int(state.to_move[index]) == ref.to_move, f"to_move differs at {where}"
        assert int(state.stones_left[index]) == ref.stones_left, (
            f"stones_left differs at {where}")
        ribbon_legal = ref.ribbon_legal_cells()
        assert state.legal_cells[index].astype(bool).tolist() == ribbon_legal, (
            f"legal_cells differ at {where}")
    if not (ref.terminal and ref.game_type == "double"):
        # At the end of a double game unlimited ribbons are claimed without being limited.
        assert state.limited[index].astype(bool).tolist() == ref.limited, (
            f"limited differs at {where}")


def crosscheck(side: int, game_type: str, num_games: int, seed: int,
               extend_bias: float = 0.7, biased_fraction: float = 0.5) -> CrosscheckCount:
    """Play `num_games` reference trajectories of one game type on one side, each replayed
    in three fast engines (standard, longest, quadratic), comparing after every action."""
    rng = random.Random(seed)
    count = CrosscheckCount()
    engines, states, komis = {}, {}, {}
    for scoring in SCORINGS:
        engines[scoring] = Engine(Rules(side=side, game_type=game_type, scoring=scoring))
        komis[scoring] = [random_komi(rng, game_type, scoring) for _ in range(num_games)]
        states[scoring] = engines[scoring].new_games(
            num_games, komi=np.array(komis[scoring], dtype=np.int64))
    refs = [RefGame(side, game_type, "standard", 0) for _ in range(num_games)]
    biases = [extend_bias if rng.random() < biased_fraction else 0.0 for _ in range(num_games)]
    while True:
        fast_masks = {scoring: engines[scoring].legal_actions(states[scoring])
                      for scoring in SCORINGS}
        actions = np.full(num_games, NO_ACTION, dtype=np.int64)
        ref_masks = []
        for index, ref in enumerate(refs):
            mask = ref.legal_actions()
            ref_masks.append(mask)
            for scoring in SCORINGS:
                compare_state(ref, engines[scoring], states[scoring], index,
                              fast_masks[scoring][index], mask, komis[scoring][index], scoring)
            if not ref.terminal:
                actions[index] = choose_action(ref, mask, rng, biases[index])
        if (actions == NO_ACTION).all():
            break
        for scoring in SCORINGS:
            engines[scoring].step(states[scoring], actions.copy())
        for index, ref in enumerate(refs):
            if actions[index] != NO_ACTION:
                ref.step(int(actions[index]), ref_masks[index])
                count.actions += len(SCORINGS)
    for scoring in SCORINGS:
        result = engines[scoring].result(states[scoring])
        for index, ref in enumerate(refs):
            scored = ref.copy()
            scored.scoring, scored.komi = scoring, komis[scoring][index]
            winner, margin = scored.result()
            count.events.update(scored.events)
            where = describe(ref, komis[scoring][index], scoring)
            fast_winner = int(result.winner[index])
            fast_margin = float(result.margin[index])
            assert fast_winner == winner, f"winner {fast_winner} != {winner} at {where}"
            assert fast_margin == margin, f"margin {fast_margin} != {margin} at {where}"
            assert result_string(fast_winner, fast_margin) == scored.result_string(), (
                f"result string differs at {where}")
    for ref in refs:
        count.events.update(ref.events)
    count.trajectories += num_games
    count.fast_games += num_games * len(SCORINGS)
    return count


def crosscheck_with_restarts(side: int, game_type: str, scoring: str, slots: int,
                             total_games: int, seed: int) -> CrosscheckCount:
    """Like `crosscheck`, but a finished game's slot is refilled with a new game through
    `take`/`put` (as self-play does), so no state may leak from one game to the next."""
    rng = random.Random(seed)
    engine = Engine(Rules(side=side, game_type=game_type, scoring=scoring))
    count = CrosscheckCount()

    def fresh_game() -> tuple[RefGame, int]:
        return RefGame(side, game_type, "standard", 0), random_komi(rng, game_type, scoring)

    games = [fresh_game() for _ in range(slots)]
    state = engine.new_games(slots, komi=np.array([komi for _, komi in games]))
    started = slots
    while games:
        fast_legal = engine.legal_actions(state)
        actions = np.full(len(games), NO_ACTION, dtype=np.int64)
        masks = []
        for index, (ref, komi) in enumerate(games):
            mask = ref.legal_actions()
            masks.append(mask)
            compare_state(ref, engine, state, index, fast_legal[index], mask, komi, scoring)
            if not ref.terminal:
                actions[index] = choose_action(ref, mask, rng, 0.5)
        finished = [index for index, (ref, _) in enumerate(games) if ref.terminal]
        if finished:
            result = engine.result(state)
            for index in finished:
                ref, komi = games[index]
                scored = ref.copy()
                scored.scoring, scored.komi = scoring, komi
                winner, margin = scored.result()
                where = describe(ref, komi, scoring)
                assert int(result.winner[index]) == winner, f"winner differs at {where}"
                assert float(result.margin[index]) == margin, f"margin differs at {where}"
                count.fast_games += 1
            refill = finished[:max(0, total_games - started)]
            if refill:
                for index in refill:
                    games[index] = fresh_game()
                    started += 1
                new = engine.new_games(len(refill),
                                       komi=np.array([games[i][1] for i in refill]))
                state.put(np.array(refill), new)
            keep = [index for index in range(len(games))
                    if index not in finished or index in refill]
            games = [games[index] for index in keep]
            state = state.take(np.array(keep, dtype=np.int64))
            continue  # compare the refilled slots before anyone moves
        engine.step(state, actions)
        for index, (ref, _) in enumerate(games):
            if actions[index] != NO_ACTION:
                ref.step(int(actions[index]), masks[index])
                count.actions += 1
    count.trajectories = count.fast_games
    return count
