"""Game clocks and the time manager: how many seconds a move may take under GTP time controls.

    clock = GameClock.absolute(10.0)           # 10 s sudden death per player
    clock.set_left(BLACK, 7.5, stones=0)       # GTP time_left b 7.5 0
    seconds = clock.move_seconds(BLACK, moves_left=40)
    clock.charge(BLACK, elapsed)               # when no time_left follows

Kinds (GTP `time_settings`, KGS `kgs-time_settings`):
- none: no limit.
- absolute: `main` seconds for the whole game.
- canadian: `main`, then periods of `period` seconds for `stones` moves each.
- byoyomi: `main`, then `periods` periods of `period` seconds; a move inside one keeps it.

The manager spreads what is left over the moves the player still has to make (an estimate
from the cells that can still take a stone: the game ends when none can), keeps a reserve
for the protocol's and the process's latency (`overhead` seconds a move, and a share of the
main time), and never plans past the hard end of the player's time. Overtime periods are
spent at most `period_share` of a period a move, so a slow move does not lose the period.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from catena_zero.rules import BLACK, WHITE

KINDS = ("none", "absolute", "canadian", "byoyomi")


@dataclass
class PlayerClock:
    """One player's time: `left` seconds; `stones` > 0 while in a Canadian period (moves to
    play in `left`), `periods` Japanese periods left once main time is spent."""

    left: float = 0.0
    stones: int = 0
    periods: int = 0
    in_overtime: bool = False


@dataclass
class GameClock:
    kind: str = "none"
    main: float = 0.0  # main time of each player, seconds
    period: float = 0.0  # seconds of one overtime period
    stones: int = 0  # canadian: moves per period
    periods: int = 0  # byoyomi: periods per player
    overhead: float = 0.05  # seconds kept back each move for the protocol and the process
    reserve_share: float = 0.1  # share of main time the manager never plans to use
    period_share: float = 0.7  # most of one overtime period (per stone) a move may use
    clocks: dict[int, PlayerClock] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"time control kind {self.kind!r}; expected one of {KINDS}")
        for name in ("main", "period"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} time must be a finite number >= 0, got {value!r}")
        if self.kind == "canadian" and self.period > 0 and self.stones < 1:
            raise ValueError("canadian overtime needs at least one stone per period")
        if self.kind == "byoyomi" and self.period > 0 and self.periods < 1:
            raise ValueError("byoyomi overtime needs at least one period")
        self.reset()

    # ----- construction from the protocol's commands ------------------------------------
    @classmethod
    def gtp(cls, main: float, period: float, stones: int) -> GameClock:
        """GTP `time_settings main_time byo_yomi_time byo_yomi_stones`: period > 0 with
        stones 0 means no limit; period 0 means absolute time."""
        if period > 0 and stones == 0:
            return cls("none")
        if period == 0:
            return cls("absolute", main=main) if main > 0 else cls("none")
        return cls("canadian", main=main, period=period, stones=stones)

    @classmethod
    def absolute(cls, main: float) -> GameClock:
        return cls("absolute", main=main)

    def reset(self) -> None:
        """Both players' clocks back to the start of a game."""
        self.clocks = {}
        for colour in (BLACK, WHITE):
            clock = PlayerClock(left=self.main, periods=self.periods)
            if self.main == 0 and self.kind in ("canadian", "byoyomi"):
                self._enter_overtime(clock)
            self.clocks[colour] = clock

    @property
    def limited(self) -> bool:
        return self.kind != "none"

    def _enter_overtime(self, clock: PlayerClock) -> None:
        clock.in_overtime = True
        clock.left = self.period
        clock.stones = self.stones if self.kind == "canadian" else 0

    # ----- updates ----------------------------------------------------------------------
    def set_left(self, colour: int, seconds: float, stones: int) -> None:
        """GTP `time_left`: `seconds` left; `stones` > 0 means in a period with that many
        moves to play (Canadian), or the periods left (KGS byo-yomi); 0 means main time."""
        if not (math.isfinite(seconds) and seconds >= 0) or stones < 0:
            raise ValueError(f"time_left needs seconds >= 0 and stones >= 0, got {seconds} "
                             f"{stones}")
        clock = self.clocks[colour]
        clock.left = float(seconds)
        if stones == 0:
            clock.in_overtime, clock.stones = False, 0
        elif self.kind == "byoyomi":
            clock.in_overtime, clock.periods = True, stones
        else:
            clock.in_overtime, clock.stones = True, stones

    def charge(self, colour: int, elapsed: float) -> None:
        """Take `elapsed` seconds of one move off `colour`'s clock, as a referee would."""
        clock = self.clocks[colour]
        if self.kind == "none":
            return
        if not clock.in_overtime:
            clock.left -= elapsed
            if clock.left >= 0 or self.kind == "absolute":
                return
            elapsed = -clock.left  # the part of the move played in overtime
            self._enter_overtime(clock)
        if self.kind == "canadian":
            clock.left -= elapsed
            clock.stones -= 1
            if clock.stones <= 0:
                self._enter_overtime(clock)
        elif self.kind == "byoyomi":
            while elapsed > self.period and clock.periods > 1:
                clock.periods -= 1
                elapsed -= self.period
            clock.left = self.period

    # ----- the manager ------------------------------------------------------------------
    def move_seconds(self, colour: int, moves_left: int) -> float | None:
        """Seconds `colour` may think about this move (None: no limit).

        `moves_left`: an estimate of the moves `colour` still plays (this one included).
        """
        if self.kind == "none":
            return None
        clock = self.clocks[colour]
        moves_left = max(int(moves_left), 1)
        overtime_move = 0.0
        if self.kind == "canadian" and self.period > 0:
            overtime_move = self.period_share * self.period / self.stones
        elif self.kind == "byoyomi" and self.period > 0:
            overtime_move = self.period_share * self.period
        if clock.in_overtime:
            if self.kind == "canadian":
                spread = clock.left / max(clock.stones, 1)
                return max(min(self.period_share * spread, clock.left - self.overhead), 0.0)
            return max(min(overtime_move, clock.left - self.overhead), 0.0)
        usable = clock.left * (1.0 - self.reserve_share) - self.overhead * moves_left
        planned = max(usable, 0.0) / moves_left + overtime_move
        hard_end = clock.left + (overtime_move if self.kind != "absolute" else 0.0)
        return max(min(planned, hard_end - self.overhead), 0.0)


def moves_left_estimate(playable_cells: int, stones_per_turn: int = 1) -> int:
    """The moves one player still makes when `playable_cells` cells can still take a stone,
    two players taking turns: at most half of them (a stone often makes others unplayable,
    so this errs long and the time per move short), at least one."""
    return max(math.ceil(playable_cells / (2 * max(stones_per_turn, 1))), 1)


# Think-time levels of the page and the terminal: (seconds a move, simulations a move), the
# search stopping at whichever comes first.
THINK_LEVELS: dict[str, tuple[float, int]] = {
    "quick": (0.5, 128),
    "normal": (2.0, 800),
    "strong": (10.0, 5000),
}


def think_level(name: str) -> tuple[float, int]:
    """(seconds, simulations) of a think-time level; ValueError naming the levels."""
    level = THINK_LEVELS.get(str(name).strip().lower())
    if level is None:
        raise ValueError(f"unknown think time {str(name)[:20]!r}; expected one of "
                         f"{', '.join(THINK_LEVELS)}")
    return level
