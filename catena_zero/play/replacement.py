"""The replacement rule: which rated bundled model plays a track, given the anchored fit of
the track (`catena_zero.arena.anchored_elo`) and the model that plays it now.

- The current player (the incumbent) stays unless a challenger's Elo lead over it is
  significant: the lower end of the lead's 95% interval is above 0 (the interval from both
  models' records, an anchor both played cancelling out). A lead inside the interval, or an
  exact tie, keeps the incumbent.
- When a challenger's lead is significant, the challenger of highest Elo among those takes
  the track, and the rule runs again from it, so the result is a model that no other one
  leads significantly (deciding again with the same records changes nothing).
- With no incumbent (a first choice, or its file is gone): among the models that the
  highest-rated one does not lead significantly, the newer by training step (from the
  model file's metadata; an unknown step counts as older than any known one), then the
  name that sorts first; then the rule runs from it as above.

Never the order of the files: the same records, incumbent and models give the same player
whichever way they are listed.
"""

from __future__ import annotations

from dataclasses import dataclass

from catena_zero.arena.anchored_elo import AnchoredFit


@dataclass(frozen=True)
class Decision:
    """The model that plays a track and one line saying why."""

    player: str
    reason: str


def newest_first(names: list[str], training_steps: dict[str, int | None]) -> list[str]:
    """`names` by training step, newest first (unknown steps last), then by name."""
    def key(name: str) -> tuple[int, str]:
        step = training_steps.get(name)
        return (-(step if step is not None else -1), name)

    return sorted(names, key=key)


def choose_player(fit: AnchoredFit, candidates: list[str], incumbent: str | None,
                  training_steps: dict[str, int | None]) -> Decision | None:
    """The player of a track among `candidates` (the bundled files present; those the fit
    does not rate are left out) by the rule of the module docstring; None when the fit
    rates none of them."""
    rated = sorted({name for name in candidates if name in fit})
    if not rated:
        return None
    if incumbent in rated:
        current = incumbent
        reason = _kept(fit, current, rated)
    else:
        top = max(fit.rating(name) for name in rated)
        leader = next(name for name in newest_first(rated, training_steps)
                      if fit.rating(name) == top)
        level = [name for name in rated if fit.lead(leader, name)[1] <= 0.0]
        current = newest_first(level, training_steps)[0]
        reason = (f"first choice {current} (Elo {fit.rating(current):.1f}, the highest)"
                  if len(level) == 1 else
                  f"first choice {current} (Elo {fit.rating(current):.1f}; {len(level)} of "
                  f"{len(rated)} models level within the top's 95% interval: the newest by "
                  f"training step, then by name)")
    while True:
        ahead = [name for name in rated if fit.lead(name, current)[1] > 0.0]
        if not ahead:
            return Decision(current, reason)
        top = max(fit.rating(name) for name in ahead)
        challenger = next(name for name in newest_first(ahead, training_steps)
                          if fit.rating(name) == top)
        lead, low, high = fit.lead(challenger, current)
        reason = (f"{challenger} replaces {current}: lead {lead:+.1f} Elo, 95% "
                  f"[{low:+.1f}, {high:+.1f}]")
        current = challenger


def _kept(fit: AnchoredFit, incumbent: str, rated: list[str]) -> str:
    """Why the incumbent stays: no challenger, or the nearest one's lead and interval."""
    others = [name for name in rated if name != incumbent]
    if not others:
        return f"{incumbent} keeps the track (the only rated model)"
    closest = max(others, key=lambda name: (fit.lead(name, incumbent)[1], name))
    lead, low, high = fit.lead(closest, incumbent)
    return (f"{incumbent} keeps the track (no significant lead; the nearest, {closest}: "
            f"lead {lead:+.1f} Elo, 95% [{low:+.1f}, {high:+.1f}])")
