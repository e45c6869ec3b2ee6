"""A perfect player for small boards: plays a margin-optimal move chosen by the exact solver.

Used to validate the empirical fair-komi pipeline where the answer is known: two perfect
players win for Black exactly when komi < the exact fair komi, so a sweep between them
must recover it. Ties between optimal moves are broken at random (seeded by the caller's
rng), which gives seeded games genuine variety without ever giving up the result.
"""

from __future__ import annotations

import numpy as np

from catena_zero.mcts import Evaluation
from catena_zero.mcts.endgame import ExactEndgame
from catena_zero.mcts.solver import BLACK, ExactSolver, enum_value
from catena_zero.rules import NO_ACTION, Engine, GameState, Rules


class SolverAgent:
    """Arena agent (select_actions(engine, states, rng) -> int [B]) backed by ExactSolver.

    Margin-optimal play is optimal for winning at every komi, so one solver per komi key
    suffices (`ExactEndgame`). Positions are solved on demand and kept in the solvers'
    transposition tables.
    """

    def __init__(self, name: str = "solver", max_positions: int | None = 20_000_000) -> None:
        self.name = name
        self.max_positions = max_positions
        self._endgames: dict[Rules, ExactEndgame] = {}

    def endgame(self, rules: Rules) -> ExactEndgame:
        """The exact evaluator of `rules`, its tables kept for the agent's lifetime."""
        if rules not in self._endgames:
            self._endgames[rules] = ExactEndgame(rules, table_limit=None,
                                                 max_positions=self.max_positions,
                                                 symmetric_keys=True)
        return self._endgames[rules]

    def solver(self, engine: Engine, komi: int) -> ExactSolver:
        return self.endgame(engine.rules).solver(komi)

    def move_values(self, engine: Engine, states: GameState, game: int) -> dict[int, float]:
        """The exact value (Black's view, in half points, the game's komi included) after
        each legal move of game `game` of `states`."""
        komi = int(states.komi[game])
        solver = self.solver(engine, komi)
        # Standard and quadratic scoring share the komi-0 solver (ExactEndgame): its values
        # are shifted by the komi here, so that a value's sign is the result at this komi.
        shift = 0 if enum_value(engine.rules.scoring) == "longest" else 2 * komi
        position = solver.state_from_arrays(
            states.stones[game], states.limited[game], states.button[game],
            states.to_move[game], states.stones_left[game])
        return {action: solver.half_value(child) - shift
                for action, child in solver.children(position)}

    def select_actions(self, engine: Engine, states: GameState, rng: np.random.Generator
                       ) -> np.ndarray:
        """One margin-optimal action per game (int [B]); NO_ACTION for finished games."""
        actions = np.full(states.batch_size, NO_ACTION, dtype=np.int64)
        # Exact search is inherently one position at a time; the batch only shares tables.
        for game in np.flatnonzero(~states.terminal):
            values = self.move_values(engine, states, game)
            best = (max if int(states.to_move[game]) == BLACK else min)(values.values())
            optimal = sorted(action for action, value in values.items() if value == best)
            actions[game] = optimal[int(rng.integers(len(optimal)))]
        return actions


class SolverEvaluator:
    """An EvaluateFn with the exact game value: +1/-1/0 for the side to move (win/loss/draw)
    and the exact margin as score; uniform policy. A perfect stand-in for a network."""

    def __init__(self, rules, agent: SolverAgent | None = None) -> None:
        self.rules = rules
        self.agent = agent or SolverAgent()

    def __call__(self, states: GameState) -> Evaluation:
        value = np.zeros(states.batch_size, dtype=np.float32)
        score = np.zeros(states.batch_size, dtype=np.float32)
        live = np.flatnonzero(~states.terminal)
        if live.size:
            value[live], score[live] = self.agent.endgame(self.rules).mover_values(states, live)
        logits = np.zeros((states.batch_size, self.rules.board.num_actions), dtype=np.float32)
        return Evaluation(policy_logits=logits, value=value, score=score)
