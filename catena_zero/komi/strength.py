"""Is the model strong enough for its komi answer to mean anything? The exact solver says, on
the boards it solves (sides 2 and 3).

A fair-komi estimate measures the play that produced it: where that play throws away points,
the crossing it finds is the weak play's, not the game's. On a solved board every move of the
model's own games can be checked: `OptimalityProbe` plays an agent's moves and counts how many
the solver finds margin-optimal (the best final margin for the mover) and result-keeping (the
game-theoretic result for the mover stays what it was). `solver_check` plays the model's
self-play games at the track's exact fair komi through the probe and says whether the share
of margin-optimal moves clears a bar; the atlas then reports a track below it as "model not
strong enough" with that share, instead of a confident interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from catena_zero.arena.match import play_match
from catena_zero.arena.stats import wilson_interval
from catena_zero.komi.solver_agent import SolverAgent
from catena_zero.rules import BLACK, Rules

NOT_STRONG_ENOUGH = "model not strong enough"


class OptimalityProbe:
    """An arena agent that plays `agent`'s moves and counts how many the exact solver finds
    margin-optimal and result-keeping (module docstring)."""

    def __init__(self, agent: Any, solver: SolverAgent | None = None) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", "model")
        self.solver = solver or SolverAgent()
        self.moves = self.margin_optimal = self.result_keeping = 0

    def select_actions(self, engine, states, rng: np.random.Generator) -> np.ndarray:
        actions = np.asarray(self.agent.select_actions(engine, states, rng))
        for game in np.flatnonzero(~states.terminal):
            sign = 1 if int(states.to_move[game]) == BLACK else -1  # values are Black's
            values = {action: sign * value for action, value in
                      self.solver.move_values(engine, states, game).items()}
            best, chosen = max(values.values()), values[int(actions[game])]
            self.moves += 1
            self.margin_optimal += chosen == best
            self.result_keeping += np.sign(chosen) == np.sign(best)
        return actions

    def report(self) -> dict:
        """Counts, shares and Wilson 95% intervals of both kinds of optimal moves."""
        shares: dict[str, Any] = {}
        for key, count in (("margin_optimal", self.margin_optimal),
                           ("result_keeping", self.result_keeping)):
            low, high = wilson_interval(count, self.moves)
            shares[key] = {"moves": int(count), "share": count / max(self.moves, 1),
                           "interval": [float(low), float(high)]}
        return {"moves": self.moves, **shares}


def solver_check(rules: Rules, agent: Any, games: int, min_share: float, komi: int = 0,
                 seed: int = 0) -> dict:
    """Play `games` (even) self-play games of `agent` at `komi` through the probe.

    Returns the probe's report plus `komi`, `games`, `min_share` and `strong_enough` (the
    share of margin-optimal moves >= min_share).
    """
    probe = OptimalityProbe(agent)
    play_match(rules, probe, probe, games, komi=komi, seed=seed, name_a="model",
               name_b="model")
    report = probe.report()
    report.update(komi=int(komi), games=int(games), min_share=float(min_share),
                  strong_enough=bool(report["margin_optimal"]["share"] >= min_share))
    return report


def strength_note(check: dict | None) -> str | None:
    """The atlas's line for a failed check: "model not strong enough (62% of 310 moves
    margin-optimal, bar 80%)"; None when the check passed or did not run."""
    if not check or check.get("strong_enough", True):
        return None
    share = check["margin_optimal"]["share"]
    return (f"{NOT_STRONG_ENOUGH} ({100 * share:.0f}% of {check['moves']} moves "
            f"margin-optimal, bar {100 * check['min_share']:.0f}%)")


def exact_miss_note(interval: list, exact: float | None, check: dict | None) -> str:
    """The atlas's line for a solved track whose estimate's interval misses the exact value:
    the model's games do not play the game as perfect play does, whatever share of its
    moves the check found optimal: "model not strong enough (its interval [0.38, 0.69] misses
    the exact 0; 91% of 310 moves margin-optimal)"."""
    low, high = (interval or [None, None])[:2]
    low_text = "-inf" if low is None else f"{low:.4g}"
    bounds = f"[{low_text}, {'+inf' if high is None else f'{high:.4g}'}]"
    exact_text = "value: above the range" if exact is None else f"{exact:g}"
    evidence = ""
    if check:
        evidence = (f"; {100 * check['margin_optimal']['share']:.0f}% of {check['moves']} moves "
                    f"margin-optimal")
    return f"{NOT_STRONG_ENOUGH} (its interval {bounds} misses the exact {exact_text}{evidence})"
