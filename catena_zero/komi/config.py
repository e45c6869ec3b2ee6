"""Config dataclasses of the komi module (the CLI builds them from configs/solve.yaml and
configs/komi.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, field

from catena_zero.network.device import INFERENCE_PRECISIONS


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


GAME_TYPES = ("komi", "nokomi", "double")
SCORINGS = ("standard", "longest", "quadratic")
ATLAS_VARIANTS = [f"{game_type}/{scoring}" for game_type in GAME_TYPES for scoring in SCORINGS]
ATLAS_SIDES = list(range(2, 11))


@dataclass
class AtlasConfig:
    """`catena-zero komi atlas`: the balance of every side and variant from one model.

    The defaults are the full setting. A game costs about 0.13 s x (cells / 37)^2 at 8
    simulations with a 4-block, 32-channel net on the AVX2 dev CPU, so sides 9 and 10 take
    most of an atlas (docs/results/2026-12-01-komi-atlas-cost.md, measured when nokomi and
    double tracks played 2-16 games; they now play about a hundred). On the AMX dev CPU the
    18 solved tracks take 98 s at 8 simulations and 131 s at 32, and a komi/standard track of
    sides 4-6 narrowed at 32 simulations with a check at 8 (1,000 games a strength) 2-8
    minutes (docs/results/2026-12-02-komi-atlas-champion.md). `atlas=quick`
    (configs/atlas/quick.yaml) is the cheap setting."""

    sides: list[int] = field(default_factory=lambda: list(ATLAS_SIDES))  # board sides 2..10
    variants: list[str] = field(default_factory=lambda: list(ATLAS_VARIANTS))  # game_type/scoring
    output: str = "docs/komi/atlas.json"  # the atlas; atlas.md and the figures go beside it
    estimates: bool = True  # false: only the exact values (sides in exact_sides)
    exact_sides: list[int] = field(default_factory=lambda: [2, 3])  # solved exactly (<= 3)
    solver_cache: str = "runs/komi/solve_cache.json"  # exact solutions reused from here
    simulations: int = 8  # search simulations per move in the self-play games
    opening_share: float = 0.09  # games differ by their first round(share x cells) moves (at
    #   least 1: 1 on side 2, 8 on side 6, 24 on side 10), sampled from the search's visits,
    #   then the search plays its own choice without noise; 0: root noise on every move
    opening_moves: int = 0  # > 0: this many opening moves on every side (opening_share unused)
    start: str = "network"  # komi: first sweep around the network's fair komi, or "grid"
    coarse_points: int = 5  # komi game type: komi values of the first, coarse sweep
    coarse_games: int = 4  # games at each coarse and refining komi value
    refine_points: int = 3  # komi values added inside the crossing's bracket per round
    bracket_games: int = 12  # games at each komi of the outward walk that sets the bracket
    network_estimate: bool = True  # komi game type: also the network's own fair komi
    stone_simulations: int = 32  # nokomi: search simulations valuing each first stone
    stone_games: int = 1  # nokomi: self-play games after each distinct first stone (0: none)
    fair_stone_games: int = 96  # nokomi: more games after the fairest stone (about +-0.1)
    even_margin: float = 0.1  # nokomi: a swap is close to even within 1/2 +- this
    double_games: int = 96  # double: self-play games from the empty board (about +-0.1)
    resamples: int = 1000  # bootstrap resamples of the komi crossing
    seed: int = 0  # games and bootstrap are reproducible from this seed
    threads: int = 1  # torch threads of the model (the results do not depend on it)
    workers: int = 1  # tracks measured at once, each in its own process (same results)
    check_simulations: int = 0  # also measure at this search strength (0: off); see komi.md
    target_width: float = 0.0  # komi: narrow the bracket to this width in komi units (points;
    #   1/60 of the range, 17 points, in quadratic scoring) (0: no narrowing stage)
    max_games: int = 2000  # komi: the narrowing stage stops when the sweep has this many games
    strength_games: int = 8  # exact sides: self-play games whose every move the solver checks
    min_optimal_share: float = 0.8  # below this share of margin-optimal moves: flagged weak
    min_result_share: float = 0.95  # below this share of result-keeping moves: flagged weak (a
    #   side-2 game is 6 moves: one decisive mistake a game leaves 83% margin-optimal)

    def __post_init__(self):
        bad_sides = [side for side in self.sides if not 2 <= int(side) <= 10]
        if not self.sides or bad_sides:
            raise ValueError(f"atlas.sides must be board sides 2..10, got {list(self.sides)}")
        bad = [variant for variant in self.variants if variant not in ATLAS_VARIANTS]
        if not self.variants or bad:
            raise ValueError(f"atlas.variants: unknown {bad or 'empty list'}; choose from "
                             f"{', '.join(ATLAS_VARIANTS)}")
        if any(not 2 <= int(side) <= 3 for side in self.exact_sides):
            raise ValueError(f"atlas.exact_sides: the solver fits sides 2 and 3 only, got "
                             f"{list(self.exact_sides)}")
        for name in ("simulations", "coarse_games", "bracket_games", "stone_simulations",
                     "double_games", "resamples", "refine_points"):
            if getattr(self, name) < 1:
                raise ValueError(f"atlas.{name} must be >= 1, got {getattr(self, name)}")
        if self.start not in ("network", "grid"):
            raise ValueError(f"atlas.start must be network or grid, got {self.start!r}")
        if self.coarse_points < 2:
            raise ValueError(f"atlas.coarse_points must be >= 2, got {self.coarse_points}")
        if self.threads < 1 or self.workers < 1:
            raise ValueError(f"atlas.threads and atlas.workers must be >= 1, got "
                             f"{self.threads} and {self.workers}")
        if self.opening_moves < 0:
            raise ValueError(f"atlas.opening_moves must be >= 0, got {self.opening_moves}")
        if not 0 <= self.opening_share < 1:
            raise ValueError(f"atlas.opening_share must be in [0, 1), got {self.opening_share}")
        if self.stone_games < 0 or self.fair_stone_games < 0:
            raise ValueError(f"atlas.stone_games and atlas.fair_stone_games must be >= 0, got "
                             f"{self.stone_games} and {self.fair_stone_games}")
        if self.target_width < 0 or self.max_games < 0:
            raise ValueError(f"atlas.target_width and atlas.max_games must be >= 0, got "
                             f"{self.target_width} and {self.max_games}")
        if self.check_simulations < 0 or self.check_simulations == self.simulations:
            raise ValueError(f"atlas.check_simulations must be >= 0 and differ from "
                             f"atlas.simulations ({self.simulations}), got "
                             f"{self.check_simulations}")
        if self.strength_games < 0 or self.strength_games % 2:
            raise ValueError(f"atlas.strength_games must be an even number >= 0 (colours "
                             f"alternate), got {self.strength_games}")
        if not 0.0 <= self.min_optimal_share <= 1.0:
            raise ValueError(f"atlas.min_optimal_share must be in [0, 1], got "
                             f"{self.min_optimal_share}")
        if not 0.0 <= self.min_result_share <= 1.0:
            raise ValueError(f"atlas.min_result_share must be in [0, 1], got "
                             f"{self.min_result_share}")
        if not 0.0 < self.even_margin < 0.5:
            raise ValueError(f"atlas.even_margin must be in (0, 0.5), got {self.even_margin}")


@dataclass
class CurveConfig:
    """`catena-zero komi curve`: the atlas's komi tracks measured at several search
    strengths of the same model (catena_zero.komi.atlas.curve): where the fair komi settles
    as play gets stronger. Each strength is an atlas of its own under `output_dir`, with the
    `atlas` group's other settings (resumable per track); then curve.json, curve.md and
    curve.png beside them."""

    sides: list[int] = field(default_factory=lambda: [2, 3, 4, 5, 6, 7, 8])  # board sides
    variants: list[str] = field(default_factory=lambda: ["komi/standard"])  # komi tracks
    simulations: list[int] = field(default_factory=lambda: [8, 16, 32, 64])  # strengths
    extra: list[str] = field(default_factory=list)  # "SIDE:SIMULATIONS": more strengths on
    #   some sides only (the strongest the budget allows on small boards), e.g. "4:128"
    output_dir: str = "runs/komi/curve"  # sims<N>/atlas.json a strength, and the curve files

    def extra_pairs(self) -> list[tuple[int, int]]:
        """`extra` as (side, simulations) pairs."""
        pairs = []
        for item in self.extra:
            side, _, simulations = str(item).partition(":")
            try:
                pairs.append((int(side), int(simulations)))
            except ValueError:
                raise ValueError(f"curve.extra: {item!r} is not SIDE:SIMULATIONS") from None
        return pairs

    def __post_init__(self):
        bad_sides = [side for side in self.sides if not 2 <= int(side) <= 10]
        if not self.sides or bad_sides:
            raise ValueError(f"curve.sides must be board sides 2..10, got {list(self.sides)}")
        bad = [variant for variant in self.variants
               if variant not in ATLAS_VARIANTS or not variant.startswith("komi/")]
        if not self.variants or bad:
            raise ValueError(f"curve.variants: {bad or 'empty list'} are not komi tracks; "
                             f"choose from komi/standard, komi/longest, komi/quadratic")
        if not self.simulations or any(int(count) < 1 for count in self.simulations):
            raise ValueError(f"curve.simulations must be search strengths >= 1, got "
                             f"{list(self.simulations)}")
        for side, simulations in self.extra_pairs():
            if not 2 <= side <= 10 or simulations < 1:
                raise ValueError(f"curve.extra: side {side} at {simulations} simulations is "
                                 f"not a board side 2..10 at >= 1 simulation")


@dataclass
class KomiConfig:
    """`catena-zero komi`: every estimate for one track's champion or an agent spec."""

    mode: str = "track"  # track: one track's estimates; atlas: every side and variant;
    #   curve: the atlas's komi tracks at several search strengths (`curve`)
    agent: str = "champion"  # "champion", "solver" (exact, sides 2-3), an arena spec or a path
    model: str = ""  # atlas: a model file or checkpoint; "" = the bundled general/side model
    registry_path: str = "runs/champions.json"  # champion registry used when agent=champion
    out_dir: str = "runs/komi"  # CSV and PNG files are written here
    device: str = "cpu"  # device of a network agent
    inference_precision: str = "auto"  # atlas: the model's arithmetic in its games: auto
    #   (bfloat16 on a CPU with AMX or AVX512-BF16, else float32), float32 or bfloat16; a
    #   track measured in another arithmetic than its record's is measured again
    solver_cache: str = "runs/komi/solve_cache.json"  # exact values shown beside estimates
    sweep: SweepConfig = field(default_factory=SweepConfig)
    opening: OpeningConfig = field(default_factory=OpeningConfig)
    estimate: NetworkEstimateConfig = field(default_factory=NetworkEstimateConfig)
    atlas: AtlasConfig = field(default_factory=AtlasConfig)
    curve: CurveConfig = field(default_factory=CurveConfig)

    def __post_init__(self):
        if self.mode not in ("track", "atlas", "curve"):
            raise ValueError(f"mode must be track, atlas or curve, got {self.mode!r}")
        if self.inference_precision not in INFERENCE_PRECISIONS:
            raise ValueError(f"inference_precision must be one of {INFERENCE_PRECISIONS}, "
                             f"got {self.inference_precision!r}")
