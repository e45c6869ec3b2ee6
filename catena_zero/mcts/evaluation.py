"""The search's view of a network: `EvaluateFn(states) -> Evaluation`, plus a free evaluator."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from catena_zero.rules import GameState


@dataclass
class Evaluation:
    """Network output for a batch of positions, all from the side to move's view."""

    policy_logits: np.ndarray  # [B, A] float32 (illegal entries are masked by the search)
    value: np.ndarray  # [B] float32 in [-1, 1], side to move's view (win 1, draw 0, loss -1)
    score: np.ndarray | None = None  # [B] expected margin, side to move's view
    ownership: np.ndarray | None = None  # [B, C] in [-1, 1], side to move's view

    @property
    def batch_size(self) -> int:
        return int(self.value.shape[0])

    def check(self, batch_size: int, num_actions: int) -> None:
        """Raise ValueError naming the field when the shapes do not fit a batch of positions."""
        logits = np.asarray(self.policy_logits)
        value = np.asarray(self.value)
        if logits.shape != (batch_size, num_actions):
            raise ValueError(
                f"Evaluation.policy_logits has shape {logits.shape}; "
                f"expected {(batch_size, num_actions)}"
            )
        not_below_inf = ~(logits < np.inf)  # NaN or +inf; -inf (a masked entry) is fine
        if not_below_inf.any():
            row, column = (int(i[0]) for i in np.nonzero(not_below_inf))
            raise ValueError(
                f"Evaluation.policy_logits[{row}, {column}] = {logits[row, column]}; "
                "logits must be finite or -inf"
            )
        if value.shape != (batch_size,):
            raise ValueError(f"Evaluation.value has shape {value.shape}; expected {(batch_size,)}")
        if not np.all(np.isfinite(value)):
            bad = int(np.flatnonzero(~np.isfinite(value))[0])
            raise ValueError(f"Evaluation.value[{bad}] = {value[bad]} is not finite")

    @staticmethod
    def concatenate_into(
        batch_size: int, parts: list[tuple[np.ndarray, Evaluation]], num_actions: int
    ) -> Evaluation:
        """Scatter evaluations of subsets (index [k], Evaluation of k) into one of `batch_size`.

        Rows no part covers get zero logits and zero value; score/ownership are kept only when
        every part has them.
        """
        logits = np.zeros((batch_size, num_actions), dtype=np.float32)
        value = np.zeros(batch_size, dtype=np.float32)
        with_score = bool(parts) and all(part.score is not None for _, part in parts)
        with_ownership = bool(parts) and all(part.ownership is not None for _, part in parts)
        score = np.zeros(batch_size, dtype=np.float32) if with_score else None
        ownership = None
        if with_ownership:
            num_cells = np.asarray(parts[0][1].ownership).shape[1]
            ownership = np.zeros((batch_size, num_cells), dtype=np.float32)
        for index, part in parts:
            logits[index] = part.policy_logits
            value[index] = part.value
            if score is not None:
                score[index] = part.score
            if ownership is not None:
                ownership[index] = part.ownership
        return Evaluation(logits, value, score, ownership)


EvaluateFn = Callable[[GameState], Evaluation]


class UniformEvaluator:
    """A free evaluate_fn: uniform logits and value 0. Measures search overhead; test baseline."""

    def __init__(self, num_actions: int) -> None:
        self.num_actions = int(num_actions)
        self.calls = 0  # number of evaluate calls so far
        self.positions = 0  # number of positions evaluated so far

    def __call__(self, states: GameState) -> Evaluation:
        batch_size = int(states.to_move.shape[0])
        self.calls += 1
        self.positions += batch_size
        return Evaluation(
            policy_logits=np.zeros((batch_size, self.num_actions), dtype=np.float32),
            value=np.zeros(batch_size, dtype=np.float32),
        )
