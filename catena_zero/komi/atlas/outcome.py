"""What a solved track's measurement came to: exactly one of three outcomes.

On a solved side (2 and 3) the atlas knows the answer its games estimate, so each record is
one of:

- HOLDS: the interval holds the exact value (for nokomi and double, Black's score lands on
  the side of one half that perfect play gives, which the interval then holds; a fair komi
  above the range counts when the estimate puts it above the range too). A check the player
  failed is still named in the note: the interval then holds by the weak play's luck.
- PLAYER_TOO_WEAK: the interval misses and the solver's check of the player's own moves fell
  below a bar; the note gives the shares and the bars (catena_zero.komi.strength).
- METHOD_ERROR: the interval misses though the player cleared the bars, or no check ran. The
  games then do not explain the miss: the measurement, not the player, is at fault, and the
  page says so instead of blaming the model. Records whose check let two random moves open
  its games (the check before it played the games' own openings) say that too: that check
  never saw the move that decides a side-2 game.

Unsolved tracks have no outcome (None, None).
"""

from __future__ import annotations

from catena_zero.komi.strength import strength_evidence

HOLDS = "holds"
PLAYER_TOO_WEAK = "player too weak"
METHOD_ERROR = "method error"
OUTCOMES = (HOLDS, PLAYER_TOO_WEAK, METHOD_ERROR)


def _bounds(interval) -> str:
    low, high = (interval or [None, None])[:2]
    left = "-inf" if low is None else f"{low:.4g}"
    right = "+inf" if high is None else f"{high:.4g}"
    return f"[{left}, {right}]"


def compared_exact(record: dict) -> float | None:
    """The exact value the estimate is held against: `exact`, except on a nokomi track whose
    chosen stone is one of several exactly fairest ones, where the exact result after that
    stone (a fairest stone may leave +x, another -x)."""
    if record["game_type"] == "nokomi" and record.get("fair_stone_exactly_fairest"):
        return record.get("fair_stone_exact")
    return record.get("exact")


def holds_exact(record: dict) -> bool:
    """Whether the estimate's interval holds the exact value (for a fair komi beyond the
    range: whether the estimate puts it beyond the same end)."""
    if record["game_type"] == "komi" and record.get("exact") is None:
        return record.get("in_range") is False and record.get("estimate_side") == "above"
    value = compared_exact(record)
    if value is None:
        return False
    low, high = (record.get("interval") or [None, None])[:2]
    return (low is None or low <= value) and (high is None or value <= high)


def solved(record: dict) -> bool:
    """Whether the record has an exact value to be held against (a measured solved track)."""
    return record.get("status") == "measured" and record.get("exact_report") is not None \
        and (record.get("exact") is not None or record.get("exact_in_range") is False)


def exact_outcome(record: dict) -> tuple[str | None, str | None]:
    """(outcome, note) of a record (module doc); (None, None) where nothing is solved."""
    if not solved(record):
        return None, None
    check = record.get("strength")
    if holds_exact(record):
        if check and not check.get("strong_enough", True):
            return HOLDS, (f"holds the exact value, though the player is below the bar: "
                           f"{strength_evidence(check)}")
        return HOLDS, None
    exact = compared_exact(record)
    exact_text = "above the range" if exact is None else f"{exact:g}"
    miss = f"the interval {_bounds(record.get('interval'))} misses the exact {exact_text}"
    if not check:
        return METHOD_ERROR, (f"{METHOD_ERROR}: {miss} and no solver check ran "
                              f"(atlas.strength_games 0), so nothing explains it")
    if not check.get("strong_enough", True):
        return PLAYER_TOO_WEAK, f"{PLAYER_TOO_WEAK}: {miss}; {strength_evidence(check)}"
    note = f"{METHOD_ERROR}: {miss} though the player cleared the bars: " \
        f"{strength_evidence(check)}"
    if "komis" not in check:
        note += (f"; that check played at komi {check.get('komi')} only and began each game "
                 f"after two random moves it never looked at, so it missed the moves that "
                 f"decide a short game (measure the track again)")
    return METHOD_ERROR, note
