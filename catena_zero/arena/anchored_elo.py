"""Elo on one scale fixed by outside anchor players, with a 95% interval for every rating and
for the difference of any two.

Players are named by strings; a record is one pairing's wins, draws and losses (a draw half
a win for each). The model is logistic (Bradley-Terry on the Elo scale):

    P(i scores against j) = 1 / (1 + 10^((elo_j - elo_i) / 400))

and the fit is the maximum of the likelihood of every record, each pairing that played
counting one more drawn game (a weak prior: a perfect or a null score stays finite, and a
single match's Elo is exactly the logistic of its score shrunk by half a game,
(W + D/2 + 1/2) / (N + 1), as `catena_zero.export.ratings.elo_from_record`).

The scale is fixed in two stages:

1. anchors: the fixed anchor (uct:200 by convention) is 0, and the other anchors connected
   to it by anchor-against-anchor records are placed by those records alone (what the
   players being rated did against them does not move them);
2. everyone else: the remaining players (the models, and anchors with no measured place)
   are fitted jointly against the placed anchors, which stay where stage 1 put them.

A player not connected to a placed anchor by records has no rating on the scale and is
left out. Each stage's covariance is the inverse of its Fisher information (the negative
Hessian of the log-likelihood at the maximum); stage 2 adds the placed anchors' own
uncertainty, propagated through the fit (delta method: d(theta_free)/d(theta_anchor) =
-I_ff^-1 I_fa). A 95% interval is the estimate +-1.96 standard errors, and the interval of
a lead A - B uses the covariance of A and B, so an anchor both played cancels out of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catena_zero.arena.stats import ELO_PER_NATURAL_UNIT, Z_95

FIXED_ANCHOR = "uct:200"
MAX_NEWTON_STEPS = 200
TOLERANCE = 1e-12  # natural units: far below the 0.01 Elo the ratings are kept to


@dataclass(frozen=True)
class MatchRecord:
    """`player`'s wins, draws and losses against `opponent` (one pairing's games)."""

    player: str
    opponent: str
    wins: int
    draws: int
    losses: int

    def __post_init__(self) -> None:
        if self.player == self.opponent:
            raise ValueError(f"a player cannot play itself: {self.player!r}")
        counts = (self.wins, self.draws, self.losses)
        if any(isinstance(count, bool) or not isinstance(count, int) or count < 0
               for count in counts) or sum(counts) == 0:
            raise ValueError(f"{self.player} against {self.opponent}: a record needs "
                             f"non-negative whole counts and a game, got "
                             f"{self.wins}-{self.draws}-{self.losses}")

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws


@dataclass
class AnchoredFit:
    """Ratings on the anchored scale: `elo[i]` of `names[i]`, `covariance` in Elo^2."""

    names: list[str]
    elo: np.ndarray  # [P]
    covariance: np.ndarray  # [P, P]

    def __contains__(self, name: str) -> bool:
        return name in self.names

    def rating(self, name: str) -> float:
        return float(self.elo[self.names.index(name)])

    def stderr(self, name: str) -> float:
        index = self.names.index(name)
        return float(np.sqrt(max(self.covariance[index, index], 0.0)))

    def interval(self, name: str) -> tuple[float, float]:
        """The 95% interval of `name`'s Elo."""
        centre, half = self.rating(name), Z_95 * self.stderr(name)
        return centre - half, centre + half

    def lead(self, leader: str, other: str) -> tuple[float, float, float]:
        """(lead, low, high): `leader`'s Elo minus `other`'s and its 95% interval."""
        a, b = self.names.index(leader), self.names.index(other)
        variance = (self.covariance[a, a] + self.covariance[b, b]
                    - 2.0 * self.covariance[a, b])
        lead = float(self.elo[a] - self.elo[b])
        half = Z_95 * float(np.sqrt(max(variance, 0.0)))
        return lead, lead - half, lead + half


def fit_anchored(records: list[MatchRecord], anchors: set[str] | frozenset[str],
                 fixed_anchor: str = FIXED_ANCHOR) -> AnchoredFit:
    """The two-stage fit of the module docstring. `anchors` names the outside players (the
    fixed one among them or not); an empty fit when `fixed_anchor` played no record."""
    anchors = set(anchors) | {fixed_anchor}
    played = {name for record in records for name in (record.player, record.opponent)}
    if fixed_anchor not in played:
        return AnchoredFit([], np.zeros(0), np.zeros((0, 0)))
    between_anchors = [record for record in records
                       if record.player in anchors and record.opponent in anchors]
    placed = _fit_stage(between_anchors, [fixed_anchor], np.zeros(1), np.zeros((1, 1)))
    rest = [record for record in records
            if not (record.player in placed.names and record.opponent in placed.names)]
    return _fit_stage(rest, placed.names, placed.elo / ELO_PER_NATURAL_UNIT,
                      placed.covariance / ELO_PER_NATURAL_UNIT ** 2)


def _connected(records: list[MatchRecord], start: list[str]) -> list[str]:
    """The players reachable from `start` through records, `start` first, then in order of
    first appearance (a stable order for equal inputs)."""
    reached = list(start)
    changed = True
    while changed:
        changed = False
        for record in records:
            for one, two in ((record.player, record.opponent), (record.opponent, record.player)):
                if one in reached and two not in reached:
                    reached.append(two)
                    changed = True
    return reached


def _fit_stage(records: list[MatchRecord], fixed: list[str], fixed_theta: np.ndarray,
               fixed_covariance: np.ndarray) -> AnchoredFit:
    """Maximum likelihood of the players connected to `fixed` (held at `fixed_theta`,
    natural units, with covariance `fixed_covariance`); every player's Elo and the joint
    covariance, the fixed players first."""
    names = _connected(records, fixed)
    index = {name: position for position, name in enumerate(names)}
    count, held = len(names), len(fixed)
    # points[i, j]: what i scored against j; games symmetric; one drawn game per pairing.
    points, games = np.zeros((count, count)), np.zeros((count, count))
    for record in records:
        if record.player not in index or record.opponent not in index:
            continue
        i, j = index[record.player], index[record.opponent]
        points[i, j] += record.points
        points[j, i] += record.games - record.points
        games[i, j] += record.games
        games[j, i] += record.games
    paired = games > 0
    points, games = points + 0.5 * paired, games + 1.0 * paired

    theta = np.zeros(count)
    theta[:held] = fixed_theta

    def log_likelihood(values: np.ndarray) -> float:
        difference = values[:, None] - values[None, :]
        return float(np.sum(points * -np.logaddexp(0.0, -difference)))

    def information(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        probability = 1.0 / (1.0 + np.exp(-(values[:, None] - values[None, :])))
        gradient = np.sum(points - games * probability, axis=1)
        curvature = games * probability * (1.0 - probability)
        return gradient, np.diag(curvature.sum(axis=1)) - curvature  # [P], [P, P]

    objective = log_likelihood(theta)
    for _ in range(MAX_NEWTON_STEPS):
        if count == held:
            break
        gradient, matrix = information(theta)
        step = np.linalg.solve(matrix[held:, held:], gradient[held:])
        scale = 1.0  # damped Newton: halve until the likelihood does not fall
        while True:
            candidate = theta.copy()
            candidate[held:] += scale * step
            candidate_objective = log_likelihood(candidate)
            if candidate_objective >= objective - 1e-12 or scale < 1e-9:
                break
            scale *= 0.5
        theta, objective = candidate, candidate_objective
        if np.max(np.abs(scale * step)) < TOLERANCE:
            break

    covariance = np.zeros((count, count))
    covariance[:held, :held] = fixed_covariance
    if count > held:
        _, matrix = information(theta)
        free_inverse = np.linalg.inv(matrix[held:, held:])
        sensitivity = -free_inverse @ matrix[held:, :held]  # d theta_free / d theta_fixed
        covariance[held:, :held] = sensitivity @ fixed_covariance
        covariance[:held, held:] = covariance[held:, :held].T
        covariance[held:, held:] = free_inverse + sensitivity @ fixed_covariance @ sensitivity.T
    return AnchoredFit(names, theta * ELO_PER_NATURAL_UNIT,
                       covariance * ELO_PER_NATURAL_UNIT ** 2)
