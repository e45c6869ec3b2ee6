"""Elo ratings by Bradley-Terry maximum likelihood over all pairwise results.

P(i beats j) = 1 / (1 + 10^((elo_j - elo_i) / 400)); a draw counts as half a win
for each side. The fit is anchored: the anchor player (uniform random by
convention) is fixed at 0. A weak Gaussian prior on every rating (standard
deviation `prior_sd_elo`, default 2000 Elo) keeps the maximum finite when a
player won or lost every game; with informative data its pull is negligible.
Standard errors come from the inverse of the negative Hessian of the
log-posterior at the optimum, intervals are +-1.96 standard errors.

Outputs: a CSV (atomic, with a format_version column), a PNG of Elo against
training step (matplotlib Agg) and TensorBoard scalars.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from catena_zero.arena.stats import ELO_PER_NATURAL_UNIT, Z_95
from catena_zero.data.atomic import atomic_open, atomic_write_text

ELO_CSV_FORMAT_VERSION = 1
ELO_CSV_COLUMNS = (
    "format_version", "player", "step", "elo", "elo_lower", "elo_upper", "stderr",
    "games", "score",
)


class PairwiseResults:
    """Accumulated results between named players.

    points[i, j]: points player i scored against j (win 1, draw 1/2)  # [P, P]
    games[i, j]: games between i and j (symmetric)                     # [P, P]
    """

    def __init__(self, names: list[str], steps: list[int | None] | None = None) -> None:
        if len(set(names)) != len(names):
            raise ValueError(f"player names must be unique, got {names}")
        if steps is not None and len(steps) != len(names):
            raise ValueError(f"got {len(steps)} steps for {len(names)} players")
        self.names = list(names)
        self.steps = list(steps) if steps is not None else [None] * len(names)
        self.points = np.zeros((len(names), len(names)))
        self.games = np.zeros((len(names), len(names)))

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise ValueError(f"unknown player {name!r}; players are {self.names}") from None

    def add(self, player_a: str, player_b: str, wins: float, draws: float, losses: float) -> None:
        """Record `wins`/`draws`/`losses` of player_a against player_b."""
        a, b = self.index(player_a), self.index(player_b)
        if a == b:
            raise ValueError(f"a player cannot play itself: {player_a!r}")
        if min(wins, draws, losses) < 0:
            raise ValueError(f"negative counts W={wins} D={draws} L={losses}")
        games = wins + draws + losses
        self.points[a, b] += wins + 0.5 * draws
        self.points[b, a] += losses + 0.5 * draws
        self.games[a, b] += games
        self.games[b, a] += games


@dataclass
class EloFit:
    names: list[str]
    steps: list[int | None]  # training step per player, None for baselines
    elo: np.ndarray  # [P] ratings, anchor at 0
    stderr: np.ndarray  # [P] standard errors (0 for the anchor)
    games: np.ndarray  # [P] games played
    score: np.ndarray  # [P] overall score fraction (NaN without games)
    anchor: str
    iterations: int  # Newton iterations used

    @property
    def lower(self) -> np.ndarray:
        return self.elo - Z_95 * self.stderr

    @property
    def upper(self) -> np.ndarray:
        return self.elo + Z_95 * self.stderr

    def rating(self, name: str) -> float:
        return float(self.elo[self.names.index(name)])


def _log_posterior(theta, points, games, prior_precision) -> float:
    difference = theta[:, None] - theta[None, :]  # [P, P]
    log_sigmoid = -np.logaddexp(0.0, -difference)
    return float(np.sum(points * log_sigmoid) - 0.5 * prior_precision * np.sum(theta**2))


def fit_bradley_terry(
    results: PairwiseResults,
    anchor: str = "random",
    prior_sd_elo: float = 2000.0,
    max_iterations: int = 100,
    tolerance: float = 1e-10,
) -> EloFit:
    """Maximum a-posteriori Bradley-Terry ratings (Elo scale) with the anchor at 0."""
    anchor_index = results.index(anchor)
    if not prior_sd_elo > 0:
        raise ValueError(f"prior_sd_elo must be positive, got {prior_sd_elo}")
    points, games = results.points, results.games
    num_players = len(results.names)
    prior_precision = (ELO_PER_NATURAL_UNIT / prior_sd_elo) ** 2
    free = np.array([i for i in range(num_players) if i != anchor_index], dtype=np.int64)
    theta = np.zeros(num_players)

    def gradient_and_hessian(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        probability = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))  # [P, P]
        gradient = np.sum(points - games * probability, axis=1) - prior_precision * theta
        curvature = games * probability * (1.0 - probability)  # [P, P]
        hessian = curvature - np.diag(curvature.sum(axis=1) + prior_precision)
        return gradient[free], hessian[np.ix_(free, free)]

    objective = _log_posterior(theta, points, games, prior_precision)
    iteration = 0
    for iteration in range(1, max_iterations + 1):  # noqa: B007 (reported in the fit)
        gradient, hessian = gradient_and_hessian(theta)
        step = np.linalg.solve(-hessian, gradient)
        # Damped Newton: halve the step until the log-posterior does not decrease.
        scale = 1.0
        while True:
            candidate = theta.copy()
            candidate[free] += scale * step
            candidate_objective = _log_posterior(candidate, points, games, prior_precision)
            if candidate_objective >= objective - 1e-12 or scale < 1e-8:
                break
            scale *= 0.5
        theta, improvement = candidate, candidate_objective - objective
        objective = candidate_objective
        if np.max(np.abs(scale * step)) < tolerance or abs(improvement) < tolerance * 1e-3:
            break

    _, hessian = gradient_and_hessian(theta)
    covariance = np.linalg.inv(-hessian)
    stderr = np.zeros(num_players)
    stderr[free] = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    total_games = games.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(total_games > 0, points.sum(axis=1) / total_games, np.nan)
    return EloFit(
        names=list(results.names),
        steps=list(results.steps),
        elo=theta * ELO_PER_NATURAL_UNIT,
        stderr=stderr * ELO_PER_NATURAL_UNIT,
        games=total_games,
        score=score,
        anchor=anchor,
        iterations=iteration,
    )


def write_elo_csv(path: str | os.PathLike, fit: EloFit) -> Path:
    """Write one row per player, sorted by rating, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(ELO_CSV_COLUMNS)
    for i in np.argsort(-fit.elo, kind="stable"):
        writer.writerow([
            ELO_CSV_FORMAT_VERSION, fit.names[i],
            "" if fit.steps[i] is None else int(fit.steps[i]),
            f"{fit.elo[i]:.2f}", f"{fit.lower[i]:.2f}", f"{fit.upper[i]:.2f}",
            f"{fit.stderr[i]:.2f}", int(fit.games[i]), f"{fit.score[i]:.4f}",
        ])
    atomic_write_text(path, buffer.getvalue())
    return path


def read_elo_csv(path: str | os.PathLike) -> list[dict]:
    """Rows of an Elo CSV as dicts with typed values; refuses unknown formats."""
    path = Path(path)
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != ELO_CSV_COLUMNS:
            raise ValueError(f"{path}: columns {reader.fieldnames} are not {ELO_CSV_COLUMNS}")
        rows = []
        for line_number, row in enumerate(reader, start=2):
            if row["format_version"] != str(ELO_CSV_FORMAT_VERSION):
                raise ValueError(f"{path}:{line_number}: format_version "
                                 f"{row['format_version']!r}, expected {ELO_CSV_FORMAT_VERSION}")
            rows.append({
                "player": row["player"],
                "step": int(row["step"]) if row["step"] else None,
                **{k: float(row[k]) for k in ("elo", "elo_lower", "elo_upper", "stderr", "score")},
                "games": int(row["games"]),
            })
    return rows


def plot_elo(fit: EloFit, path: str | os.PathLike, title: str = "Elo ladder") -> Path:
    """PNG of checkpoint Elo (with 95% intervals) against training step; baselines as lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure, axes = plt.subplots(figsize=(7, 4.5))
    checkpoints = [i for i, step in enumerate(fit.steps) if step is not None]
    if checkpoints:
        order = sorted(checkpoints, key=lambda i: fit.steps[i])
        steps = np.array([fit.steps[i] for i in order])
        elo = fit.elo[order]
        axes.errorbar(steps, elo, yerr=Z_95 * fit.stderr[order], marker="o", capsize=3,
                      label="checkpoints")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, i in enumerate(i for i, step in enumerate(fit.steps) if step is None):
        colour = colours[(k + 1) % len(colours)]
        axes.axhline(fit.elo[i], linestyle="--", color=colour,
                     label=f"{fit.names[i]} ({fit.elo[i]:.0f})")
    axes.set_xlabel("training step")
    axes.set_ylabel(f"Elo ({fit.anchor} = 0)")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    try:
        with atomic_open(path) as handle:  # the format the name asks for, PNG without one
            figure.savefig(handle, dpi=100, format=path.suffix[1:].lower() or "png")
    finally:
        plt.close(figure)
    return path


def write_elo_tensorboard(fit: EloFit, log_dir: str | os.PathLike) -> None:
    """Scalars `elo/checkpoint` (x = step) and `elo/baseline/<name>` at the first and last step."""
    from torch.utils.tensorboard import SummaryWriter

    checkpoint_steps = sorted(step for step in fit.steps if step is not None)
    writer = SummaryWriter(log_dir=str(log_dir))
    try:
        for step, elo in zip(fit.steps, fit.elo, strict=True):
            if step is not None:
                writer.add_scalar("elo/checkpoint", float(elo), global_step=int(step))
        span = [checkpoint_steps[0], checkpoint_steps[-1]] if checkpoint_steps else [0]
        for name, step, elo in zip(fit.names, fit.steps, fit.elo, strict=True):
            if step is None:
                for x in sorted(set(span)):
                    writer.add_scalar(f"elo/baseline/{name}", float(elo), global_step=int(x))
    finally:
        writer.close()
