"""Game variants: game type (komi / nokomi / double) x scoring (standard / longest / quadratic)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from catena_zero.rules.board import MAX_SIDE, MIN_SIDE, Board, get_board


class GameType(enum.StrEnum):
    KOMI = "komi"  # komi chosen before the game, then colour choice; button in play
    NOKOMI = "nokomi"  # first stone then swap; no komi; button in play from move 1
    DOUBLE = "double"  # B, WW, BB, ...; no komi, no button


class Scoring(enum.StrEnum):
    STANDARD = "standard"  # stones + button half point + komi
    LONGEST = "longest"  # longest remaining ribbon after cancelling equal pairs
    QUADRATIC = "quadratic"  # sum of squared ribbon lengths + button + komi


def _parse_enum(enum_class, value, what: str):
    if isinstance(value, enum_class):
        return value
    if isinstance(value, str):
        try:
            return enum_class(value.strip().lower())
        except ValueError:
            pass
    names = ", ".join(member.value for member in enum_class)
    raise ValueError(f"unknown {what} {value!r}; expected one of: {names}")


@dataclass(frozen=True)
class Rules:
    """The rules shared by a batch of games (komi is per game, see Engine.new_games)."""

    side: int = 6  # board side, 2..10
    game_type: GameType = GameType.KOMI  # komi | nokomi | double
    scoring: Scoring = Scoring.STANDARD  # standard | longest | quadratic

    def __post_init__(self):
        get_board(self.side)  # validates the side
        object.__setattr__(self, "side", int(self.side))
        object.__setattr__(self, "game_type", _parse_enum(GameType, self.game_type, "game type"))
        object.__setattr__(self, "scoring", _parse_enum(Scoring, self.scoring, "scoring"))

    @property
    def board(self) -> Board:
        return get_board(self.side)

    @property
    def has_button(self) -> bool:
        return self.game_type != GameType.DOUBLE

    @property
    def is_double(self) -> bool:
        return self.game_type == GameType.DOUBLE

    @property
    def komi_range(self) -> tuple[int, int]:
        if self.game_type != GameType.KOMI:
            return (0, 0)
        if self.scoring == Scoring.QUADRATIC:
            return (0, 1000)
        return (0, 15)

    def nearest_komi(self, estimate: float | None) -> int:
        """The whole komi nearest a real fair-komi estimate, inside the komi range; the
        allowed komi nearest 0 when there is no estimate (None or not finite)."""
        low, high = self.komi_range
        if estimate is None or not np.isfinite(estimate):
            return int(min(max(0, low), high))
        return int(min(max(round(float(estimate)), low), high))

    def validate_komi(self, komi) -> np.ndarray:
        """Check a komi (int or int array); returns it as int32 array. ValueError naming it."""
        array = np.asarray(komi)
        if array.dtype == bool or not (
            np.issubdtype(array.dtype, np.integer)
            or (np.issubdtype(array.dtype, np.floating) and np.all(np.mod(array, 1) == 0))
        ):
            raise ValueError(f"komi must be a whole number, got {komi!r}")
        low, high = self.komi_range
        bad = (array < low) | (array > high)
        if np.any(bad):
            value = array[bad].ravel()[0] if array.ndim else array
            raise ValueError(
                f"komi {value} is outside the range {low}..{high} of "
                f"{self.game_type.value}/{self.scoring.value}"
            )
        return array.astype(np.int32)

    def __str__(self) -> str:
        return f"side {self.side} {self.game_type.value}/{self.scoring.value}"


@dataclass(frozen=True, order=True)
class Track:
    """A board side and a variant: what a champion, a shard or a share of a training mix is
    for. Its `key` ("side6-komi-standard") names it in registries and files; "6/komi/standard"
    is its form in configs (`parse`)."""

    side: int  # board side, 2..10
    game_type: str  # "komi", "nokomi" or "double"
    scoring: str  # "standard", "longest" or "quadratic"

    def __post_init__(self) -> None:
        if isinstance(self.side, bool) or not isinstance(self.side, int | np.integer) or not (
                MIN_SIDE <= int(self.side) <= MAX_SIDE):
            raise ValueError(f"track side must be an int in {MIN_SIDE}..{MAX_SIDE}, "
                             f"got {self.side!r}")
        object.__setattr__(self, "side", int(self.side))
        object.__setattr__(self, "game_type", _parse_enum(GameType, self.game_type,
                                                          "game type").value)
        object.__setattr__(self, "scoring", _parse_enum(Scoring, self.scoring, "scoring").value)

    def __str__(self) -> str:
        return f"{self.side}/{self.game_type}/{self.scoring}"

    @property
    def key(self) -> str:
        return f"side{self.side}-{self.game_type}-{self.scoring}"

    def rules(self) -> Rules:
        return Rules(self.side, self.game_type, self.scoring)

    @classmethod
    def from_rules(cls, rules: Rules) -> Track:
        """The track of a `Rules` (enums or strings)."""
        return cls(int(rules.side), getattr(rules.game_type, "value", rules.game_type),
                   getattr(rules.scoring, "value", rules.scoring))

    @classmethod
    def parse(cls, value: Track | Rules | tuple | str) -> Track:
        """A Track from a Track, a Rules, a (side, game_type, scoring) tuple,
        "side/game_type/scoring" (configs) or its key "side6-komi-standard"."""
        if isinstance(value, Track):
            return value
        if isinstance(value, Rules):
            return cls.from_rules(value)
        if isinstance(value, str):
            text = value.strip()
            parts = text.split("/") if "/" in text else text.removeprefix("side").split("-")
            if len(parts) != 3 or not parts[0].strip().isdigit():
                raise ValueError(f"a track is 'side/game_type/scoring', e.g. "
                                 f"'4/komi/standard', got {value!r}")
            return cls(int(parts[0]), parts[1].strip(), parts[2].strip())
        if isinstance(value, tuple) and len(value) == 3:
            return cls(*value)
        raise ValueError(f"a track is a Track, a (side, game_type, scoring) tuple or "
                         f"'side/game_type/scoring', got {value!r}")
