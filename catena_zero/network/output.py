"""What the network says about a batch of positions (`NetOutput`), and the value it implies.

Example::

    out = net(planes, globals_)                  # NetOutput of tensors
    out.value                                    # [B] p(win) - p(loss), side to move's view
    out = net(padded_planes, globals_, sides=sides)
    rows, side6 = out.take_side(6)               # side 6's rows in its own layout [b, A_6]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from catena_zero.network.layout import padded_action_index

WIN, DRAW, LOSS = 0, 1, 2  # order of the value logits
# Policy logit of the padding cells of a padded batch: finite (0 * it stays 0) and far below
# any real logit, so even a softmax over the whole grid row gives them nothing.
OFF_BOARD_LOGIT = -1e9


@dataclass
class NetOutput:
    """Network heads, batch first. Tensors from `forward`, numpy from the inference wrapper.

    For a one-side batch C and A are that board's cells and actions. For a padded batch
    (`sides` set) the cells are the G * G grid positions: policy_logits [B, G*G + 1] (off-board
    logits OFF_BOARD_LOGIT, the button last), ownership [B, G*G] (0 off the board); `take_side`
    and `split_by_side` read each board's own cells out of it.
    """

    policy_logits: Any  # [B, A] cells then the button (A = C + 1)
    value_logits: Any  # [B, 3] win / draw / loss of the side to move
    score: Any  # [B] expected final margin in points, side to move's view
    ownership: Any  # [B, C] in [-1, 1]: +1 the side to move owns the cell at the end
    ownership_logit: Any = None  # [B, C] pre-tanh ownership (for the loss); None from inference
    score_belief_logits: Any = None  # [B, K] final-margin bins (for the loss); None if no head
    sides: Any = None  # int [B] board side of each row of a padded batch; None for one side

    @property
    def value(self) -> Any:
        """Expected outcome p(win) - p(loss) in [-1, 1]. # [B]"""
        return wdl_to_value(self.value_logits)

    @property
    def grid_size(self) -> int | None:
        """G of a padded output (None for a one-side output)."""
        if self.sides is None:
            return None
        return int(round((self.ownership.shape[1]) ** 0.5))

    def take_side(self, side: int) -> tuple[Any, NetOutput]:
        """(rows [b], outputs of those rows in the side-n layout: policy [b, A_n], ownership
        [b, C_n]) for the rows of a padded output whose board has side `side`."""
        if self.sides is None:
            raise ValueError("take_side needs a padded output (forward with sides=...)")
        if isinstance(self.sides, torch.Tensor):
            rows = torch.nonzero(self.sides == side).flatten()
        else:
            rows = np.flatnonzero(np.asarray(self.sides) == side)
        return rows, self.rows_on_side(rows, side)

    def rows_on_side(self, rows: Any, side: int) -> NetOutput:
        """Rows `rows` of a padded output, all of side `side`, in that side's layout."""
        grid = self.grid_size
        actions = padded_action_index(side, grid)
        cells = actions[:-1]
        def as_index(index: Any) -> Any:
            if isinstance(self.ownership, torch.Tensor):
                return torch.as_tensor(index, device=self.ownership.device)
            return index

        def pick(values: Any, columns: np.ndarray | None = None) -> Any:
            if values is None:
                return None
            picked = values[as_index(rows)]
            return picked if columns is None else picked[:, as_index(columns)]

        return NetOutput(
            policy_logits=pick(self.policy_logits, actions),
            value_logits=pick(self.value_logits),
            score=pick(self.score),
            ownership=pick(self.ownership, cells),
            ownership_logit=pick(self.ownership_logit, cells),
            score_belief_logits=pick(self.score_belief_logits),
        )

    def split_by_side(self) -> dict[int, tuple[Any, NetOutput]]:
        """{side: (rows, that side's rows in its own layout)} for each side of a padded output."""
        if self.sides is None:
            raise ValueError("split_by_side needs a padded output (forward with sides=...)")
        values = self.sides.cpu().numpy() if isinstance(self.sides, torch.Tensor) else self.sides
        return {int(side): self.take_side(int(side)) for side in np.unique(np.asarray(values))}


def wdl_to_value(value_logits: Any) -> Any:
    """[B, 3] win/draw/loss logits -> [B] p(win) - p(loss), for torch tensors or numpy arrays."""
    if isinstance(value_logits, torch.Tensor):
        probabilities = torch.softmax(value_logits.float(), dim=-1)
        return probabilities[..., WIN] - probabilities[..., LOSS]
    logits = np.asarray(value_logits, dtype=np.float64)
    logits = logits - logits.max(axis=-1, keepdims=True)
    probabilities = np.exp(logits)
    probabilities /= probabilities.sum(axis=-1, keepdims=True)
    return (probabilities[..., WIN] - probabilities[..., LOSS]).astype(np.float32)
