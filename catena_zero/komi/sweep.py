"""Empirical fair komi: an agent plays itself at a sweep of komi values; a logistic fit.

All games of a sweep (every komi value, every seed) advance together in one batch: the
engine keeps komi per game, and one agent plays both colours, so each step is a single
`select_actions` call on the unfinished games.

Fit: P(Black wins at komi k) = sigmoid(slope * (fair - k)), maximum likelihood over the
binomial counts (a draw counts half a win). The fair komi's 95% interval is the profile
likelihood interval: every `fair` whose best slope leaves the log likelihood within
chi2(1, 0.95)/2 of the maximum. When the data are separated (Black always wins below some
komi and always loses above it, e.g. perfect players) the likelihood is flat over that gap;
the estimate is then the gap's midpoint and the interval the gap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catena_zero.arena.stats import wilson_interval
from catena_zero.komi.config import SweepConfig
from catena_zero.rules import BLACK, EMPTY, NO_ACTION, Engine, GameState, Rules

CHI2_95_HALF = 3.841458820694124 / 2  # likelihood drop bounding a 95% profile interval
MAX_SLOPE = 60.0  # slopes beyond this are numerically a step; caps separated fits
GRID_POINTS_LIMIT = 20_000  # profile grid resolution budget


def play_out(engine: Engine, agent, states: GameState, rng: np.random.Generator,
             ) -> GameState:
    """Self-play every game of `states` to the end (in place); returns it."""
    max_steps = engine.rules.board.num_actions * 2 + 2
    for _ in range(max_steps):
        active = np.flatnonzero(~states.terminal)
        if not len(active):
            return states
        actions = np.full(states.batch_size, NO_ACTION, dtype=np.int64)
        actions[active] = np.asarray(agent.select_actions(engine, states.take(active), rng))
        engine.step(states, actions)
    raise RuntimeError(f"self-play did not finish within {max_steps} steps")


def black_points(engine: Engine, states: GameState) -> tuple[np.ndarray, np.ndarray]:
    """Black's points per finished game (1 win, 0.5 draw, 0 loss) and margins.  # [B], [B]"""
    result = engine.result(states)
    winner = np.asarray(result.winner)
    points = np.where(winner == BLACK, 1.0, np.where(winner == EMPTY, 0.5, 0.0))
    return points, np.asarray(result.margin, dtype=np.float64)


def default_komi_values(rules: Rules, max_points: int) -> list[int]:
    """Every komi of the rules' range, or `max_points` evenly spread over a wide range."""
    low, high = rules.komi_range
    if high - low + 1 <= max_points:
        return list(range(low, high + 1))
    return sorted({int(round(x)) for x in np.linspace(low, high, max_points)})


@dataclass
class SweepTable:
    """Per-komi results of a sweep. Every field is an array [K] over komi values."""

    komi: np.ndarray
    games: np.ndarray
    black_wins: np.ndarray
    draws: np.ndarray
    black_score: np.ndarray  # (wins + draws / 2) / games
    wilson_low: np.ndarray  # Wilson 95% interval of black_score
    wilson_high: np.ndarray
    mean_margin: np.ndarray  # mean Black-view result margin
    half_point: np.ndarray  # games decided by half a point (the button's, without komi parity)
    mean_moves: np.ndarray  # mean moves a game (placements and button takes)
    # the margin's standard deviation over the games (population: pools exactly); NaN where
    # unknown (a table made before it was kept)
    margin_sd: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.margin_sd is None:
            self.margin_sd = np.full(len(self.komi), np.nan)

    def rows(self) -> list[dict]:
        names = list(self.__dataclass_fields__)
        return [{name: getattr(self, name)[i].item() for name in names}
                for i in range(len(self.komi))]

    @staticmethod
    def from_columns(columns: dict) -> SweepTable:
        """A table from its columns; tables written before `half_point`, `mean_moves` and
        `margin_sd` were kept read them as unknown (NaN)."""
        size = len(columns["komi"])
        return SweepTable(**{name: np.asarray(columns.get(name, np.full(size, np.nan)))
                             for name in SweepTable.__dataclass_fields__})


def sweep_komi(rules: Rules, agent, komi_values, games_per_komi: int, seed: int) -> SweepTable:
    """Self-play `games_per_komi` games at each komi value, all in one batch."""
    komi_values = np.asarray(sorted(set(int(k) for k in komi_values)), dtype=np.int64)
    if komi_values.size == 0:
        raise ValueError("komi_values is empty")
    rules.validate_komi(komi_values)
    engine = Engine(rules)
    komi_of_game = np.repeat(komi_values, games_per_komi)  # [K * N]
    states = engine.new_games(len(komi_of_game), komi=komi_of_game)
    play_out(engine, agent, states, np.random.default_rng([seed, 17]))
    points, margins = black_points(engine, states)
    points = points.reshape(len(komi_values), games_per_komi)
    margins = margins.reshape(len(komi_values), games_per_komi)
    moves = np.asarray(states.move_number, dtype=np.float64).reshape(margins.shape)
    wins = (points == 1.0).sum(axis=1)
    draws = (points == 0.5).sum(axis=1)
    score_points = points.sum(axis=1)
    games = np.full(len(komi_values), games_per_komi)
    low, high = wilson_interval(score_points, games)
    return SweepTable(komi_values, games, wins, draws, score_points / games, low, high,
                      margins.mean(axis=1), (np.abs(margins) == 0.5).sum(axis=1),
                      moves.mean(axis=1), margins.std(axis=1))


def crossing_bracket(table: SweepTable, rules: Rules) -> tuple[int, int]:
    """(left, right): the largest swept komi where Black scores over one half, and the next
    swept komi above it (the range's ends where there is none)."""
    above = np.flatnonzero(table.black_score > 0.5)
    low, high = rules.komi_range
    left = int(table.komi[above.max()]) if above.size else low
    larger = table.komi[table.komi > left]
    return left, int(larger.min()) if larger.size else high


def run_sweep(rules: Rules, agent, config: SweepConfig) -> SweepTable:
    """The sweep of `config`: its komi values; the whole komi range when it has at most
    max_grid_points values; else a coarse grid of 5 values refined by rounds of 3 values
    inside the bracket where Black's score crosses one half (a 4-way bisection), until the
    bracket is one komi wide or max_grid_points values are used."""
    if config.komi_values is not None:
        return sweep_komi(rules, agent, config.komi_values, config.games_per_komi, config.seed)
    low, high = rules.komi_range
    if high - low + 1 <= config.max_grid_points:
        return sweep_komi(rules, agent, range(low, high + 1), config.games_per_komi, config.seed)
    table = sweep_komi(rules, agent, default_komi_values(rules, 5), config.games_per_komi,
                       config.seed)
    for round_index in range(1, config.max_grid_points):
        left, right = crossing_bracket(table, rules)
        inside = np.linspace(left, right, 5)[1:-1].round().astype(int)
        extra = sorted(set(inside.tolist()) - set(table.komi.tolist()))
        extra = extra[: config.max_grid_points - len(table.komi)]
        if not extra:
            break
        table = merge_tables(table, sweep_komi(rules, agent, extra, config.games_per_komi,
                                               config.seed + round_index))
    return table


def merge_tables(first: SweepTable, second: SweepTable) -> SweepTable:
    order = np.argsort(np.concatenate([first.komi, second.komi]), kind="stable")
    return SweepTable(**{name: np.concatenate([getattr(first, name), getattr(second, name)])[order]
                         for name in SweepTable.__dataclass_fields__})


def combine_tables(first: SweepTable, second: SweepTable) -> SweepTable:
    """One table of two sweeps; games at the same komi are pooled."""
    komi = np.union1d(first.komi, second.komi)
    games = np.zeros(komi.size)
    wins, draws, margin_sum = np.zeros(komi.size), np.zeros(komi.size), np.zeros(komi.size)
    half_point, move_sum = np.zeros(komi.size), np.zeros(komi.size)
    square_sum = np.zeros(komi.size)  # sum of squared margins: pools the spread exactly
    for table in (first, second):
        index = np.searchsorted(komi, table.komi)
        games[index] += table.games
        wins[index] += table.black_wins
        draws[index] += table.draws
        margin_sum[index] += table.mean_margin * table.games
        half_point[index] += table.half_point
        move_sum[index] += table.mean_moves * table.games
        square_sum[index] += (table.margin_sd ** 2 + table.mean_margin ** 2) * table.games
    points = wins + draws / 2
    low, high = wilson_interval(points, games)
    return SweepTable(komi.astype(np.int64), games.astype(np.int64), wins.astype(np.int64),
                      draws.astype(np.int64), points / games, low, high, margin_sum / games,
                      half_point, move_sum / games,
                      np.sqrt(np.maximum(square_sum / games - (margin_sum / games) ** 2, 0.0)))


@dataclass
class LogisticFit:
    fair_komi: float  # komi where Black's expected score is one half
    low: float  # 95% profile-likelihood interval of fair_komi
    high: float
    slope: float  # of sigmoid(slope * (fair_komi - k)); MAX_SLOPE when separated
    separated: bool  # the data are a clean step (perfect separation)


def _log_likelihood(x: np.ndarray, slope: np.ndarray, points, games) -> np.ndarray:
    """Binomial log likelihood of sigmoid(slope * x); x [G, K], slope [G] -> [G]."""
    z = slope[:, None] * x
    log_p = -np.logaddexp(0.0, -z)
    log_q = -np.logaddexp(0.0, z)
    return (points * log_p + (games - points) * log_q).sum(axis=1)


def _best_slopes(x: np.ndarray, points, games, iterations: int = 40) -> np.ndarray:
    """Maximum-likelihood slope >= 0 for every row of x [G, K] (Newton, capped)."""
    slope = np.full(x.shape[0], 0.5)
    for _ in range(iterations):
        p = 0.5 * (1.0 + np.tanh(0.5 * slope[:, None] * x))  # sigmoid without overflow
        gradient = ((points - games * p) * x).sum(axis=1)
        curvature = (games * p * (1 - p) * x * x).sum(axis=1) + 1e-12
        slope = np.clip(slope + gradient / curvature, 0.0, MAX_SLOPE)
    return slope


def fit_logistic(komi, points, games) -> LogisticFit:
    """Maximum-likelihood logistic fit of Black's score against komi (see module doc).

    komi, points (Black's points), games: arrays [K]. fair_komi is NaN when the data put
    it outside the swept values (Black always or never wins)."""
    komi, points, games = (np.asarray(a, dtype=np.float64) for a in (komi, points, games))
    if komi.size < 1 or komi.shape != points.shape or komi.shape != games.shape:
        raise ValueError(f"komi, points and games must be equal-length arrays, got "
                         f"{komi.shape}, {points.shape}, {games.shape}")
    if np.any(games <= 0) or np.any(points < 0) or np.any(points > games):
        raise ValueError(f"need games > 0 and 0 <= points <= games, got points={points}, "
                         f"games={games}")
    step = 1 / 64
    span = komi.max() - komi.min() + 2
    if span / step > GRID_POINTS_LIMIT:
        step = 2.0 ** np.ceil(np.log2(span / GRID_POINTS_LIMIT))
    grid = np.arange(komi.min() - 1, komi.max() + 1 + step / 2, step)  # candidate fair komi
    x = grid[:, None] - komi[None, :]  # [G, K]
    slopes = _best_slopes(x, points, games)
    likelihood = _log_likelihood(x, slopes, points, games)
    best = likelihood.max()
    near_best = np.flatnonzero(likelihood >= best - 1e-9)
    inside = np.flatnonzero(likelihood >= best - CHI2_95_HALF)
    middle = near_best[len(near_best) // 2]
    if near_best.max() == len(grid) - 1:  # Black still wins beyond the largest komi swept
        return LogisticFit(np.nan, float(komi.max()), np.inf, float(slopes[-1]), False)
    if near_best.min() == 0:  # White wins even below the smallest komi swept
        return LogisticFit(np.nan, -np.inf, float(komi.min()), float(slopes[0]), False)
    if np.all(slopes[near_best] >= MAX_SLOPE - 1e-9):
        # A clean step: the likelihood is flat across the gap between the last komi Black
        # always wins and the first komi Black never wins; the estimate is its midpoint.
        score = points / games
        left = komi[score == 1.0].max() if np.any(score == 1.0) else -np.inf
        right = komi[score == 0.0].min() if np.any(score == 0.0) else np.inf
        fair = 0.5 * (left + right) if np.isfinite(left + right) else np.nan
        return LogisticFit(float(fair), float(left), float(right), MAX_SLOPE, True)
    return LogisticFit(float(grid[middle]), float(grid[inside.min()]), float(grid[inside.max()]),
                       float(slopes[middle]), False)


def interpolated_crossing(komi, score) -> float:
    """Where Black's score first falls through one half, by linear interpolation between
    the two swept komi values around it (NaN if it never does). Less smooth than the
    logistic fit, but not pulled by an agent that also loses easy wins far from the
    crossing.  komi, score: [K], komi increasing."""
    komi, score = np.asarray(komi, dtype=np.float64), np.asarray(score, dtype=np.float64)
    below = np.flatnonzero((score[1:] <= 0.5) & (score[:-1] > 0.5))
    if not below.size:
        return float("nan")
    i = below[-1]
    fraction = (score[i] - 0.5) / (score[i] - score[i + 1])
    return float(komi[i] + fraction * (komi[i + 1] - komi[i]))


def fit_table(table: SweepTable) -> LogisticFit:
    return fit_logistic(table.komi, table.black_score * table.games, table.games)
