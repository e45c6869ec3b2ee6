"""Search settings: one dataclass shared by the batched search, the agents and the CLI."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

ALGORITHMS = ("gumbel", "puct", "uct")
FPU_MODES = ("parent", "absolute")


@dataclass
class SearchConfig:
    """Settings of `catena_zero.mcts.search`, validated on construction (errors name the field).

    The search itself never samples with a temperature: it returns the argmax of the visits
    (PUCT/UCT) or the Gumbel choice; callers that want exploration sample from the output.
    """

    algorithm: str = "gumbel"  # root and interior rule: "gumbel" (Gumbel AlphaZero), "puct", "uct"
    num_simulations: int = 32  # simulations per move, i.e. evaluate_fn calls after the root one
    c_puct: float = 1.25  # PUCT exploration constant (AlphaZero's c_init)
    c_puct_base: float = 19652.0  # PUCT log growth of the exploration term (AlphaZero's c_base)
    c_uct: float = 1.0  # UCB1 exploration constant for algorithm "uct" (values lie in [-1, 1])
    dirichlet_alpha: float = 0.3  # PUCT root noise concentration
    dirichlet_fraction: float = 0.25  # PUCT root noise weight; 0 disables the noise
    fpu_mode: str = "parent"  # value of unvisited children: "parent" mean - reduction, "absolute"
    fpu_reduction: float = 0.0  # subtracted from the parent's mean value in fpu_mode "parent"
    fpu_value: float = 0.0  # value of unvisited children in fpu_mode "absolute", in [-1, 1]
    max_considered_actions: int = 16  # Gumbel: actions sampled at the root by Gumbel-top-k
    gumbel_scale: float = 1.0  # Gumbel: noise scale; 0 gives a deterministic search (evaluation)
    c_visit: float = 50.0  # Gumbel: sigma(q) = (c_visit + max visits) * c_scale * q
    c_scale: float = 0.1  # Gumbel: sigma(q) scale, see c_visit
    score_utility_weight: float = 0.0  # w: a leaf's utility is (1-w) value + w tanh(score term)
    score_utility_scale: float = 5.0  # margin points of the tanh's unit in the score term
    score_utility_centered: bool = True  # score term relative to the root's expected margin
    tree_reuse_max_nodes: int = 4096  # a reused subtree larger than this is dropped (memory)
    exact_endgame_cells: int = 0  # leaves with <= this many legal cells get the exact value; 0 off
    leaves_per_call: int = 1  # leaves one tree gathers per network call (virtual visits); 1 off
    rollout_mix: float = 0.0  # w: a leaf's value is (1-w) network + w random playouts; 0 off
    rollout_mix_playouts: int = 1  # random playouts per leaf averaged when rollout_mix > 0

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(
                f"SearchConfig.algorithm={self.algorithm!r}; expected one of {ALGORITHMS}"
            )
        if self.fpu_mode not in FPU_MODES:
            raise ValueError(
                f"SearchConfig.fpu_mode={self.fpu_mode!r}; expected one of {FPU_MODES}"
            )
        _require(self, "num_simulations", self.num_simulations >= 1, ">= 1")
        _require(self, "c_puct", self.c_puct >= 0, ">= 0")
        _require(self, "c_puct_base", self.c_puct_base > 0, "> 0")
        _require(self, "c_uct", self.c_uct >= 0, ">= 0")
        _require(self, "dirichlet_alpha", self.dirichlet_alpha > 0, "> 0")
        _require(self, "dirichlet_fraction", 0 <= self.dirichlet_fraction <= 1, "in [0, 1]")
        _require(self, "fpu_value", -1 <= self.fpu_value <= 1, "in [-1, 1]")
        _require(self, "max_considered_actions", self.max_considered_actions >= 1, ">= 1")
        _require(self, "gumbel_scale", self.gumbel_scale >= 0, ">= 0")
        _require(self, "c_visit", self.c_visit >= 0, ">= 0")
        _require(self, "c_scale", self.c_scale >= 0, ">= 0")
        _require(self, "score_utility_weight", 0 <= self.score_utility_weight <= 1, "in [0, 1]")
        _require(self, "score_utility_scale", self.score_utility_scale > 0, "> 0")
        _require(self, "tree_reuse_max_nodes", self.tree_reuse_max_nodes >= 1, ">= 1")
        _require(self, "leaves_per_call",
                 isinstance(self.leaves_per_call, numbers.Integral)
                 and not isinstance(self.leaves_per_call, bool)
                 and self.leaves_per_call >= 1, "an int >= 1")
        _require(self, "rollout_mix", 0 <= self.rollout_mix <= 1, "in [0, 1]")
        _require(self, "rollout_mix_playouts",
                 isinstance(self.rollout_mix_playouts, numbers.Integral)
                 and not isinstance(self.rollout_mix_playouts, bool)
                 and self.rollout_mix_playouts >= 1, "an int >= 1")
        _require(self, "exact_endgame_cells",
                 isinstance(self.exact_endgame_cells, numbers.Integral)
                 and not isinstance(self.exact_endgame_cells, bool)
                 and self.exact_endgame_cells >= 0, "an int >= 0")


def _require(config: SearchConfig, field_name: str, ok: bool, condition: str) -> None:
    if not ok:
        value = getattr(config, field_name)
        raise ValueError(f"SearchConfig.{field_name}={value!r}; must be {condition}")
