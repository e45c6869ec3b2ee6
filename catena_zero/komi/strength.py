"""Is the model strong enough for its komi answer to mean anything? The exact solver says, on
the boards it solves (sides 2 and 3).

A fair-komi estimate measures the play that produced it: where that play throws away points,
the crossing it finds is the weak play's, not the game's. On a solved board every move of the
model's own games can be checked: `OptimalityProbe` plays an agent's moves and counts how many
the solver finds margin-optimal (the best final margin for the mover) and result-keeping (the
game-theoretic result for the mover, at the game's komi, stays what it was). `solver_check`
plays the model's self-play games as the sweep plays them (from the empty board, the model
drawing its own opening) at the komis on both sides of the track's exact fair komi, where the
result turns under perfect play, and says whether both shares clear their bars. A check that
let random moves open the games never saw the move that decides a side-2 game: White's first
reply (docs/reference/komi.md).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from catena_zero.arena.stats import wilson_interval
from catena_zero.komi.solver_agent import SolverAgent
from catena_zero.komi.sweep import sweep_komi
from catena_zero.rules import BLACK, Rules

PLAYER_TOO_WEAK = "player too weak"


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


def check_komis(rules: Rules, exact: float | None) -> list[int]:
    """The komis of the check: for the komi game type the two whole komis around the exact
    fair komi (Black wins at the lower under perfect play, White at the upper), inside the
    range; the range's top when Black wins at every komi (`exact` None); else 0."""
    low, high = rules.komi_range
    if low == high:
        return [low]
    if exact is None:
        return [high]
    below = min(max(math.floor(exact), low), high)
    return sorted({below, min(below + 1, high)})


def solver_check(rules: Rules, agent: Any, games: int, min_share: float,
                 komis: list[int] | tuple[int, ...] = (0,), seed: int = 0,
                 min_result_share: float = 0.0) -> dict:
    """Play `games` self-play games of `agent`, shared evenly among `komis`, through the probe,
    from the empty board as the sweep does (`sweep_komi`: the agent draws its own opening).

    Returns the probe's report plus `komis`, `games`, Black's score at each komi
    (`black_score`), both bars (`min_share`, `min_result_share`) and `strong_enough`: both
    shares at or above their bars.
    """
    komis = sorted({int(komi) for komi in komis})
    per_komi = max(1, games // len(komis))
    probe = OptimalityProbe(agent)
    table = sweep_komi(rules, probe, komis, per_komi, seed)
    report = probe.report()
    strong = (report["margin_optimal"]["share"] >= min_share
              and report["result_keeping"]["share"] >= min_result_share)
    report.update(komis=komis, games=per_komi * len(komis),
                  black_score={str(komi): float(score) for komi, score
                               in zip(table.komi.tolist(), table.black_score, strict=True)},
                  min_share=float(min_share), min_result_share=float(min_result_share),
                  strong_enough=bool(strong))
    return report


def strength_evidence(check: dict) -> str:
    """The solver's evidence in words: "70% of 80 moves margin-optimal (bar 80%)", and where
    the check had a result bar "; 92% of 48 moves result-keeping (bar 95%)"."""
    share = check["margin_optimal"]["share"]
    text = (f"{100 * share:.0f}% of {check['moves']} moves margin-optimal "
            f"(bar {100 * check['min_share']:.0f}%)")
    if "min_result_share" in check:
        kept = check["result_keeping"]["share"]
        text += (f"; {100 * kept:.0f}% of {check['moves']} moves result-keeping "
                 f"(bar {100 * check['min_result_share']:.0f}%)")
    return text


def strength_note(check: dict | None) -> str | None:
    """The atlas's line for a failed check: "player too weak: 62% of 310 moves
    margin-optimal (bar 80%); ..."; None when the check passed or did not run."""
    if not check or check.get("strong_enough", True):
        return None
    return f"{PLAYER_TOO_WEAK}: {strength_evidence(check)}"
