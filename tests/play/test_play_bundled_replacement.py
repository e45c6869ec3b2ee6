"""The replacement rule: the incumbent keeps its track unless a challenger's lead is
significant (the lower end of the lead's 95% interval above 0); a first choice among models
level within the interval goes to the newest by training step, then the first name; never
to the order the files are listed in."""

from __future__ import annotations

import itertools

import pytest

from catena_zero.arena.anchored_elo import MatchRecord, fit_anchored
from catena_zero.play.replacement import choose_player, newest_first

ANCHORS = {"uct:200", "uct:1000"}


def _fit(**records):
    """A fit of models against uct:200: name=(wins, draws, losses)."""
    return fit_anchored([MatchRecord(f"{name}.pt", "uct:200", *counts)
                         for name, counts in records.items()], ANCHORS)


def _each_order(names):
    return [list(order) for order in itertools.permutations(names)]


def test_a_lead_inside_the_interval_keeps_the_incumbent() -> None:
    fit = _fit(old=(100, 0, 100), new=(112, 0, 88))
    lead, low, _ = fit.lead("new.pt", "old.pt")
    assert lead > 40 and low < 0  # ahead, but not significantly
    for order in _each_order(["old.pt", "new.pt"]):
        decision = choose_player(fit, order, "old.pt", {"old.pt": 1, "new.pt": 2})
        assert decision.player == "old.pt"
        assert decision.reason.startswith("old.pt keeps the track (no significant lead; "
                                          "the nearest, new.pt: lead +")


def test_an_exact_tie_keeps_the_incumbent_whichever_file_is_listed_first() -> None:
    fit = _fit(a=(150, 0, 50), b=(150, 0, 50))
    assert fit.lead("a.pt", "b.pt")[0] == 0.0
    for incumbent in ("a.pt", "b.pt"):
        for order in _each_order(["a.pt", "b.pt"]):
            assert choose_player(fit, order, incumbent, {}).player == incumbent


def test_a_significant_lead_replaces_the_incumbent() -> None:
    fit = _fit(old=(100, 0, 100), new=(170, 0, 30))
    _, low, _ = fit.lead("new.pt", "old.pt")
    assert low > 0
    decision = choose_player(fit, ["old.pt", "new.pt"], "old.pt", {})
    assert decision.player == "new.pt"
    assert decision.reason.startswith("new.pt replaces old.pt: lead +")


def test_of_several_significant_challengers_the_highest_takes_the_track() -> None:
    fit = _fit(old=(60, 0, 140), good=(150, 0, 50), best=(190, 0, 10))
    for order in _each_order(["old.pt", "good.pt", "best.pt"]):
        decision = choose_player(fit, order, "old.pt", {})
        assert decision.player == "best.pt"
        # deciding again from the new player changes nothing
        assert choose_player(fit, order, "best.pt", {}).player == "best.pt"


def test_a_first_choice_among_level_models_is_the_newest_by_training_step() -> None:
    fit = _fit(early=(122, 0, 78), late=(115, 0, 85), unknown=(125, 0, 75))
    # early is rated highest, but late and unknown are level with it within the interval
    assert fit.rating("unknown.pt") > fit.rating("early.pt") > fit.rating("late.pt")
    steps = {"early.pt": 1000, "late.pt": 90_000, "unknown.pt": None}
    for order in _each_order(["early.pt", "late.pt", "unknown.pt"]):
        decision = choose_player(fit, order, None, steps)
        assert decision.player == "late.pt"
        assert decision.reason.startswith("first choice late.pt")
    # an incumbent whose file is gone is no incumbent: the first choice again
    assert choose_player(fit, ["early.pt", "late.pt"], "gone.pt", steps).player == "late.pt"


def test_a_first_choice_of_equal_steps_or_unknown_steps_goes_to_the_first_name() -> None:
    fit = _fit(b=(150, 0, 50), a=(150, 0, 50), c=(149, 0, 51))
    for steps in ({}, {"a.pt": 5, "b.pt": 5, "c.pt": 5}):
        for order in _each_order(["b.pt", "a.pt", "c.pt"]):
            assert choose_player(fit, order, None, steps).player == "a.pt"


def test_a_first_choice_does_not_take_a_newer_model_led_significantly() -> None:
    fit = _fit(strong=(185, 0, 15), newer=(100, 0, 100))
    decision = choose_player(fit, ["newer.pt", "strong.pt"], None,
                             {"strong.pt": 10, "newer.pt": 20})
    assert decision.player == "strong.pt"


def test_models_the_fit_does_not_rate_are_left_out_and_none_rated_is_none() -> None:
    fit = _fit(rated=(120, 0, 80))
    assert choose_player(fit, ["other.pt", "rated.pt"], "other.pt", {}).player == "rated.pt"
    assert choose_player(fit, ["other.pt"], "other.pt", {}) is None
    assert choose_player(fit, ["rated.pt"], "rated.pt", {}).reason == (
        "rated.pt keeps the track (the only rated model)")


@pytest.mark.parametrize("steps, expected", [
    ({"a.pt": 3, "b.pt": 7, "c.pt": None}, ["b.pt", "a.pt", "c.pt"]),
    ({}, ["a.pt", "b.pt", "c.pt"]),
    ({"c.pt": 0}, ["c.pt", "a.pt", "b.pt"]),
])
def test_newest_first_orders_by_step_then_name(steps, expected) -> None:
    assert newest_first(["c.pt", "b.pt", "a.pt"], steps) == expected
