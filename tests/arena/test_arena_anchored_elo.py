"""The anchored Elo fit: uct:200 = 0, other anchors placed by their own matches (else fitted
with the models), a weak prior of one drawn game per pairing, 95% intervals from the Fisher
information with the anchors' own uncertainty carried into the models'."""

from __future__ import annotations

import math

import numpy as np
import pytest

from catena_zero.arena.anchored_elo import MatchRecord, fit_anchored
from catena_zero.arena.stats import ELO_PER_NATURAL_UNIT, Z_95, elo_from_score, score_from_elo
from catena_zero.export.ratings import elo_from_record

ANCHORS = {"uct:200", "uct:1000", "uct:5000"}


def _pair_variance(wins: int, draws: int, losses: int) -> float:
    """Elo^2 variance of one pairing's logistic Elo: 1 / ((N + 1) p (1 - p)), natural units,
    p the shrunk score."""
    games = wins + draws + losses + 1
    score = (wins + 0.5 * draws + 0.5) / games
    return ELO_PER_NATURAL_UNIT ** 2 / (games * score * (1 - score))


@pytest.mark.parametrize("counts", [(150, 2, 48), (200, 0, 0), (0, 0, 200), (1, 0, 0),
                                    (100, 0, 100), (7, 90, 3)])
def test_a_single_match_elo_is_the_logistic_of_its_score(counts) -> None:
    fit = fit_anchored([MatchRecord("m.pt", "uct:200", *counts)], ANCHORS)
    assert fit.names == ["uct:200", "m.pt"] and fit.rating("uct:200") == 0.0
    assert fit.rating("m.pt") == pytest.approx(elo_from_record(*counts), abs=1e-6)
    assert fit.stderr("m.pt") == pytest.approx(math.sqrt(_pair_variance(*counts)), rel=1e-6)
    low, high = fit.interval("m.pt")
    assert high - low == pytest.approx(2 * Z_95 * fit.stderr("m.pt"))
    assert math.isfinite(low) and math.isfinite(high)
    wins, draws, losses = counts
    if 0 < wins + draws / 2 < sum(counts):  # the shrinkage moves a 200-game score <= 0.25%
        raw = float(elo_from_score((wins + draws / 2) / sum(counts)))
        shrunk = float(score_from_elo(fit.rating("m.pt")))
        assert abs(shrunk - float(score_from_elo(raw))) <= 0.5 / (sum(counts) + 1)


def test_an_anchor_placed_by_its_own_match_passes_its_uncertainty_on() -> None:
    placing, model = (150, 0, 50), (90, 10, 100)
    fit = fit_anchored([MatchRecord("m.pt", "uct:1000", *model),
                        MatchRecord("uct:1000", "uct:200", *placing)], ANCHORS)
    assert fit.rating("uct:1000") == pytest.approx(elo_from_record(*placing), abs=1e-6)
    assert fit.rating("m.pt") == pytest.approx(
        elo_from_record(*placing) + elo_from_record(*model), abs=1e-6)
    assert fit.stderr("m.pt") ** 2 == pytest.approx(
        _pair_variance(*placing) + _pair_variance(*model), rel=1e-6)


def test_what_a_model_scores_does_not_move_a_placed_anchor() -> None:
    placing = MatchRecord("uct:1000", "uct:200", 150, 0, 50)
    weak = fit_anchored([placing, MatchRecord("m.pt", "uct:1000", 10, 0, 190),
                         MatchRecord("m.pt", "uct:200", 30, 0, 170)], ANCHORS)
    strong = fit_anchored([placing, MatchRecord("m.pt", "uct:1000", 190, 0, 10),
                           MatchRecord("m.pt", "uct:200", 199, 0, 1)], ANCHORS)
    assert weak.rating("uct:1000") == strong.rating("uct:1000") == pytest.approx(
        elo_from_record(150, 0, 50))
    assert weak.stderr("uct:1000") == strong.stderr("uct:1000")


def test_an_anchor_without_matches_of_its_own_is_fitted_with_the_models() -> None:
    against_200, against_1000 = (170, 0, 30), (80, 0, 120)
    fit = fit_anchored([MatchRecord("m.pt", "uct:200", *against_200),
                        MatchRecord("m.pt", "uct:1000", *against_1000)], ANCHORS)
    # one model links the two: it sits where its uct:200 score says, uct:1000 where the
    # model's score against it says, and uct:1000 inherits the model's uncertainty
    assert fit.rating("m.pt") == pytest.approx(elo_from_record(*against_200), abs=1e-6)
    assert fit.rating("uct:1000") == pytest.approx(
        elo_from_record(*against_200) - elo_from_record(*against_1000), abs=1e-6)
    assert fit.stderr("uct:1000") ** 2 == pytest.approx(
        _pair_variance(*against_200) + _pair_variance(*against_1000), rel=1e-6)


def test_a_player_without_a_path_to_the_fixed_anchor_is_left_out() -> None:
    fit = fit_anchored([MatchRecord("m.pt", "uct:200", 120, 0, 80),
                        MatchRecord("lone.pt", "uct:5000", 50, 0, 150)], ANCHORS)
    assert "lone.pt" not in fit and "uct:5000" not in fit and "m.pt" in fit
    empty = fit_anchored([MatchRecord("m.pt", "uct:1000", 120, 0, 80)], ANCHORS)
    assert empty.names == [] and "m.pt" not in empty


def test_a_lead_over_a_model_of_the_same_anchor_leaves_the_anchor_out() -> None:
    placing, first, second = (150, 0, 50), (130, 0, 70), (100, 0, 100)
    fit = fit_anchored([MatchRecord("uct:1000", "uct:200", *placing),
                        MatchRecord("a.pt", "uct:1000", *first),
                        MatchRecord("b.pt", "uct:1000", *second)], ANCHORS)
    lead, low, high = fit.lead("a.pt", "b.pt")
    assert lead == pytest.approx(elo_from_record(*first) - elo_from_record(*second))
    half = Z_95 * math.sqrt(_pair_variance(*first) + _pair_variance(*second))
    assert (low, high) == pytest.approx((lead - half, lead + half))
    # each Elo alone carries the anchor's uncertainty, so its interval is wider
    assert fit.stderr("a.pt") ** 2 == pytest.approx(
        _pair_variance(*placing) + _pair_variance(*first), rel=1e-6)
    assert fit.lead("b.pt", "a.pt") == pytest.approx((-lead, -high, -low))


def _simulate(true_elo: dict[str, float], pairings, games: int, seed: int):
    generator = np.random.default_rng(seed)
    records = []
    for player, opponent in pairings:
        score = float(score_from_elo(true_elo[player] - true_elo[opponent]))
        wins = int(generator.binomial(games, score))
        records.append(MatchRecord(player, opponent, wins, 0, games - wins))
    return records


TRUE_ELO = {"uct:200": 0.0, "uct:1000": 250.0, "uct:5000": 520.0, "old.pt": 120.0,
            "mid.pt": 330.0, "new.pt": 610.0}
PAIRINGS = [("uct:1000", "uct:200"), ("uct:5000", "uct:1000"), ("old.pt", "uct:200"),
            ("old.pt", "uct:1000"), ("mid.pt", "uct:200"), ("mid.pt", "uct:1000"),
            ("new.pt", "uct:1000"), ("new.pt", "uct:5000")]


def test_records_from_known_elos_give_them_back_within_their_intervals() -> None:
    fit = fit_anchored(_simulate(TRUE_ELO, PAIRINGS, 400, seed=3), ANCHORS)
    assert sorted(fit.names) == sorted(TRUE_ELO)
    for name, true in TRUE_ELO.items():
        low, high = fit.interval(name)
        assert low <= true <= high, (name, true, low, high)
    for one, two in (("new.pt", "mid.pt"), ("mid.pt", "old.pt"), ("new.pt", "old.pt")):
        _, low, high = fit.lead(one, two)
        assert low <= TRUE_ELO[one] - TRUE_ELO[two] <= high
    assert fit.lead("new.pt", "mid.pt")[1] > 0  # 280 Elo apart: a significant lead


def test_the_intervals_hold_the_true_elos_about_95_percent_of_the_time() -> None:
    covered = {name: 0 for name in ("uct:1000", "old.pt", "new.pt")}
    lead_covered, trials = 0, 300
    for seed in range(trials):
        fit = fit_anchored(_simulate(TRUE_ELO, PAIRINGS, 200, seed=seed), ANCHORS)
        for name in covered:
            low, high = fit.interval(name)
            covered[name] += low <= TRUE_ELO[name] <= high
        _, low, high = fit.lead("new.pt", "old.pt")
        lead_covered += low <= TRUE_ELO["new.pt"] - TRUE_ELO["old.pt"] <= high
    for name, count in covered.items():
        assert 0.91 <= count / trials <= 0.99, (name, count / trials)
    assert 0.91 <= lead_covered / trials <= 0.99


@pytest.mark.parametrize("counts", [(0, 0, 0), (-1, 2, 3), (1.5, 0, 0), (True, 0, 0)])
def test_a_record_without_games_or_with_bad_counts_is_refused(counts) -> None:
    with pytest.raises(ValueError, match="a record needs"):
        MatchRecord("m.pt", "uct:200", *counts)
    with pytest.raises(ValueError, match="cannot play itself"):
        MatchRecord("uct:200", "uct:200", 1, 0, 0)
