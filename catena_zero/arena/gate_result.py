"""What a gate decided: one track's `GateResult` (the match, the SPRT's last look, whether the
candidate became champion and why) and a checkpoint's `MixGateResult` over the tracks of a
run's mix, with their TensorBoard numbers and one-line summaries. The gate itself is
`catena_zero.arena.gating`; the training gate (`catena_zero.arena.training_gate`) records
these results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from catena_zero.arena.match import MatchResult
from catena_zero.arena.sprt import SprtResult


@dataclass
class GateResult:
    track: str  # e.g. "side6-komi-standard"
    candidate: str  # candidate checkpoint path
    champion: str | None  # champion checkpoint path before the gate (None: there was none)
    step: int  # candidate's training step (-1 when unknown)
    promoted: bool  # the candidate is now the champion
    reason: str  # "first", "threshold", "sprt" or "stale" (promoted or not, why)
    match: MatchResult | None  # the candidate (A) against the champion (B); None for "first"
    sprt: SprtResult | None  # the last SPRT look, when SPRT was used
    komi: int | None = None  # the komi of the match's games (None: not known)

    def scalars(self, per_track: bool = False) -> dict[str, float]:
        """Numbers for TensorBoard: `gate/...`, or `gate/<track>/...` with `per_track` (a
        gate of several tracks)."""
        prefix = f"gate/{self.track}/" if per_track else "gate/"
        values = {"promoted": float(self.promoted)}
        if self.match is not None:
            values["score"] = self.match.score
            values["games"] = float(self.match.num_games)
            values["score_lower"] = self.match.interval[0]
        if self.sprt is not None:
            values["sprt_llr"] = self.sprt.llr
        return {prefix + name: value for name, value in values.items()}

    def summary(self) -> str:
        verdict = "PROMOTED" if self.promoted else "rejected"
        if self.match is None:
            detail = "no champion yet" if self.reason == "first" else "match not kept"
            return f"{self.track}: {self.candidate} {verdict} ({self.reason}: {detail})"
        m = self.match
        return (f"{self.track}: {self.candidate} vs champion {self.champion}: "
                f"+{m.wins} ={m.draws} -{m.losses}, score {m.score:.3f} "
                f"[{m.interval[0]:.3f}, {m.interval[1]:.3f}] -> {verdict} ({self.reason})")


@dataclass(frozen=True)
class MixGateResult:
    """The gates of one checkpoint on several tracks, one GateResult each, in the mix's
    order."""

    results: tuple[GateResult, ...]

    def scalars(self) -> dict[str, float]:
        """Every track's numbers, as `gate/<track>/...` (`gate/...` when there is only one)."""
        per_track = len(self.results) > 1
        return {name: value for result in self.results
                for name, value in result.scalars(per_track).items()}

    def summary(self) -> str:
        return "\n".join(result.summary() for result in self.results)

    @property
    def promoted(self) -> list[str]:
        """The tracks whose champion the candidate became."""
        return [result.track for result in self.results if result.promoted]


def finite_or_none(value: Any) -> float | None:
    """A float, or None for None and non-finite values (records and registry entries)."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None
