"""Config dataclasses of the komi module (the CLI builds them from configs/solve.yaml and
configs/komi.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SolveConfig:
    """`catena-zero solve`: exact minimax of a small board."""

    cache_path: str = "runs/komi/solve_cache.json"  # JSON cache of results ("" = no cache)
    use_cache: bool = True  # reuse a cached result of the same side and rules
    max_positions: int = 40_000_000  # transposition-table budget; past it the solve stops
    move_values: bool = True  # also solve every first move exactly (optimal first moves)

    def __post_init__(self):
        if self.max_positions < 1:
            raise ValueError(f"max_positions must be >= 1, got {self.max_positions}")


@dataclass
class SweepConfig:
    """Empirical fair komi: the agent plays itself at a sweep of komi values."""

    komi_values: list[int] | None = None  # None = the scoring's default grid (see sweep.py)
    games_per_komi: int = 64  # seeded games at each komi value
    max_grid_points: int = 24  # komi values swept at most (a refined grid for quadratic)
    seed: int = 0  # games and bootstrap are reproducible from this seed

    def __post_init__(self):
        if self.games_per_komi < 1:
            raise ValueError(f"games_per_komi must be >= 1, got {self.games_per_komi}")
        if self.max_grid_points < 5:
            raise ValueError(f"max_grid_points must be >= 5, got {self.max_grid_points}")


@dataclass
class OpeningConfig:
    """nokomi: Black's win rate after each opening cell (one class per symmetry orbit)."""

    enabled: bool = True  # run the opening sweep when the game type is nokomi
    games_per_cell: int = 32  # seeded games after each distinct opening cell
    seed: int = 1  # reproducible games

    def __post_init__(self):
        if self.games_per_cell < 1:
            raise ValueError(f"games_per_cell must be >= 1, got {self.games_per_cell}")


@dataclass
class NetworkEstimateConfig:
    """The network's own fair komi: bisection over the komi input at the empty board."""

    enabled: bool = True  # skipped when the agent has no network (e.g. uct:200)
    simulations: int = 64  # search simulations per root evaluation

    def __post_init__(self):
        if self.simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {self.simulations}")


@dataclass
class KomiConfig:
    """`catena-zero komi`: every estimate for one track's champion or an agent spec."""

    agent: str = "champion"  # "champion", "solver" (exact, sides 2-3), an arena spec or a path
    registry_path: str = "runs/champions.json"  # champion registry used when agent=champion
    out_dir: str = "runs/komi"  # CSV and PNG files are written here
    device: str = "cpu"  # device of a network agent
    solver_cache: str = "runs/komi/solve_cache.json"  # exact values shown beside estimates
    sweep: SweepConfig = field(default_factory=SweepConfig)
    opening: OpeningConfig = field(default_factory=OpeningConfig)
    estimate: NetworkEstimateConfig = field(default_factory=NetworkEstimateConfig)
