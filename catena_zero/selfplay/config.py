"""SelfPlayConfig: how batched self-play plays its games and which positions it records."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from catena_zero.rules.board import MAX_SIDE, MIN_SIDE


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True)
class SelfPlayConfig:
    """Self-play settings; validated on construction (ValueError names the field)."""

    games_in_batch: int = 64  # B games advanced together; a finished game is replaced at once
    full_simulations: int = 32  # simulations of a full search (its position is trained on)
    cheap_simulations: int = 8  # simulations of a cheap search (played, not trained on)
    full_search_probability: float = 0.25  # playout cap randomisation: P(move uses full search)
    temperature_start: float = 1.0  # move-sampling temperature at move 0 (0 = search's action)
    temperature_end: float = 0.0  # temperature the schedule decays to (0 = search's action)
    temperature_half_life: float = 4.0  # moves over which (temperature - end) halves
    komi_spread: float = 1.5  # std-dev of the normal draw around the fair-komi estimate
    komi_wide_probability: float = 0.1  # P(komi drawn uniformly over the rules' whole range)
    fixed_komi: int | None = None  # always play this komi (disables komi sampling)
    fair_komi_every: int = 1  # re-estimate the fair komi every this many iterations
    fair_komi_smoothing: float = 0.5  # new centre = s * old + (1 - s) * new estimate (0 = none)
    augment_symmetries: bool = True  # store each sample under random board symmetries
    symmetry_copies: int = 1  # distinct random symmetries stored per recorded position (1..12)
    search_value_weight: float = 0.0  # value target: (1-w) * game outcome + w * root value
    tree_reuse: bool = False  # keep each game's subtree of the move played for its next search
    start_positions: str = ""  # games file (loss-study format) new games may start inside
    start_share: float = 0.0  # share of new games started inside it (its side and game type)
    start_plies: tuple[float, float] = (0.5, 0.9)  # start ply: low..high share of game length
    start_lost_only: bool = True  # start only inside the games the model lost (a_points 0)
    opponent_share: float = 0.0  # share of new games in which an opponent plays one colour
    opponents: tuple[str, ...] = ("uct:200",)  # arena specs (uct:N, greedy, checkpoint:PATH)
    opponent_sides: tuple[int, ...] = ()  # board sides whose games may draw one (empty: all)

    def __post_init__(self) -> None:
        positive = ("games_in_batch", "full_simulations", "cheap_simulations", "fair_komi_every")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.cheap_simulations > self.full_simulations:
            raise ValueError(f"cheap_simulations ({self.cheap_simulations}) must not exceed "
                             f"full_simulations ({self.full_simulations})")
        for name in ("full_search_probability", "komi_wide_probability", "fair_komi_smoothing",
                     "search_value_weight"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        if self.fair_komi_smoothing == 1.0:
            raise ValueError("fair_komi_smoothing must be < 1 (1 would never update the estimate)")
        if self.full_search_probability == 0.0:
            raise ValueError("full_search_probability must be > 0 (else nothing is recorded)")
        for name in ("temperature_start", "temperature_end", "komi_spread"):
            if getattr(self, name) < 0.0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.temperature_half_life <= 0.0:
            raise ValueError(f"temperature_half_life must be > 0, got {self.temperature_half_life}")
        if not 1 <= self.symmetry_copies <= 12:
            raise ValueError(f"symmetry_copies must be in 1..12, got {self.symmetry_copies}")
        if not 0.0 <= self.start_share <= 1.0:
            raise ValueError(f"start_share must be in [0, 1], got {self.start_share}")
        if self.start_share > 0.0 and not self.start_positions:
            raise ValueError("start_share > 0 needs start_positions (a games file)")
        plies = tuple(self.start_plies)
        if len(plies) != 2 or not 0.0 <= plies[0] <= plies[1] <= 1.0:
            raise ValueError(f"start_plies must be [low, high] with 0 <= low <= high <= 1, "
                             f"got {list(plies)}")
        object.__setattr__(self, "start_plies", (float(plies[0]), float(plies[1])))
        if not 0.0 <= self.opponent_share <= 1.0:
            raise ValueError(f"opponent_share must be in [0, 1], got {self.opponent_share}")
        opponents = tuple(self.opponents)
        if not opponents or not all(isinstance(spec, str) and spec.strip()
                                    for spec in opponents):
            raise ValueError(f"opponents must be a non-empty list of agent specs (uct:200, "
                             f"checkpoint:PATH), got {list(opponents)}")
        sides = tuple(self.opponent_sides)
        if not all(_is_int(value) and MIN_SIDE <= value <= MAX_SIDE for value in sides):
            raise ValueError(f"opponent_sides must be board sides {MIN_SIDE}..{MAX_SIDE}, got "
                             f"{list(sides)}")
        if self.opponent_share > 0.0 and self.tree_reuse:
            raise ValueError("opponent_share > 0 does not go with tree_reuse (an opponent's "
                             "move leaves no subtree of the network's search to keep)")
        object.__setattr__(self, "opponents", tuple(spec.strip() for spec in opponents))
        object.__setattr__(self, "opponent_sides", tuple(int(value) for value in sides))

    def opponents_play(self, side: int) -> bool:
        """Whether games on a board of `side` may draw an opponent."""
        return self.opponent_share > 0.0 and (not self.opponent_sides
                                              or side in self.opponent_sides)

    def temperature(self, move_number):
        """Temperature at `move_number` (int or int array `[B]`); same shape back."""
        decay = 0.5 ** (move_number / self.temperature_half_life)
        return self.temperature_end + (self.temperature_start - self.temperature_end) * decay
