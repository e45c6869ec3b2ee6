"""Where the atlas's komi sweep starts: the network's fair komi (value crossing moved by the
score head's lead), a centred first stage that widens until it encloses the crossing, and
the coarse grid it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.komi.atlas import measurement_settings
from catena_zero.komi.atlas.komi_sweep import adaptive_sweep, centred_grid
from catena_zero.komi.atlas.measure import komi_balance, network_centre
from catena_zero.komi.config import AtlasConfig
from catena_zero.komi.intervals import bracket_interval
from catena_zero.mcts import Evaluation, SearchConfig
from catena_zero.rules import Rules
from tests.komi.test_komi_atlas import CHEAP
from tests.komi.test_komi_strength import fake_sweeps


@pytest.mark.parametrize(("low", "high", "centre", "points", "unit", "expected"), [
    (0, 15, 7.4, 5, 1, [5, 6, 7, 8, 9]),
    (0, 15, 7.6, 4, 1, [6, 7, 8, 9]),
    (0, 15, 14.6, 5, 1, [11, 12, 13, 14, 15]),
    (0, 15, -3.0, 5, 1, [0, 1, 2, 3, 4]),
    (0, 1000, 120.0, 5, 17, [86, 103, 120, 137, 154]),
    (0, 1000, 995.0, 3, 17, [966, 983, 1000]),
    (0, 2, 1.0, 5, 1, [0, 1, 2]),
    (0, 15, 7.4, 2, 1, [7, 8]),  # an even count straddles the centre
    (0, 15, 6.5, 4, 1, [5, 6, 7, 8]),
])
def test_the_centred_grid_stays_inside_the_range(low, high, centre, points, unit, expected):
    assert centred_grid(low, high, centre, points, unit) == expected


def fair_evaluator(fair: float, with_score: bool = True):
    """Black to move at the empty board: value tanh((fair - komi) / 3) and, with a score
    head, Black's expected margin fair - komi; any other position 0."""

    def evaluate(states):
        komi = np.asarray(states.komi, dtype=np.float64)
        batch, actions = komi.size, states.num_cells + 1
        return Evaluation(np.zeros((batch, actions), np.float32),
                          np.tanh((fair - komi) / 3).astype(np.float32),
                          (fair - komi).astype(np.float32) if with_score else None)

    return evaluate


@pytest.mark.parametrize("fair", [0.3, 6.2, 12.7, 14.9])
def test_the_centre_is_the_komi_where_the_score_lead_vanishes(fair):
    start = network_centre(Rules(side=4), fair_evaluator(fair), value_crossing=fair - 2.4)
    assert start["centre"] == pytest.approx(fair, abs=1e-3)
    assert start["komi"] == Rules(side=4).nearest_komi(fair - 2.4)
    assert start["score_lead"] == pytest.approx(fair - start["komi"], abs=1e-3)


def test_without_a_score_head_or_in_longest_scoring_the_centre_is_the_value_crossing():
    no_head = network_centre(Rules(side=4), fair_evaluator(9.0, with_score=False), 7.25)
    assert no_head["centre"] == 7.25 and no_head["score_lead"] is None
    longest = network_centre(Rules(side=4, scoring="longest"), fair_evaluator(9.0), 7.25)
    assert longest["centre"] == 7.25 and longest["score_lead"] is None
    clipped = network_centre(Rules(side=4), fair_evaluator(40.0), 15.0)
    assert clipped["centre"] == 15.0
    broken = network_centre(Rules(side=4), fair_evaluator(9.0, with_score=False), float("nan"))
    assert broken is None  # the sweep then starts from the coarse grid


@pytest.mark.parametrize(("fair", "centre"), [(6.3, 6.0), (13.2, 2.0), (1.6, 14.0),
                                              (14.7, 9.0), (0.4, 0.0)])
def test_a_centred_sweep_widens_until_it_brackets_the_crossing(monkeypatch, fair, centre):
    calls = fake_sweeps(monkeypatch, fair=fair, slope=1.5)
    config = AtlasConfig(**CHEAP)
    table, stages = adaptive_sweep(Rules(side=6), None, config, centre=centre)
    assert stages[0]["stage"] == "start" and stages[0]["centre"] == centre
    grid = centred_grid(0, 15, centre, config.coarse_points, 1)
    assert calls[0][0] == sorted({0, *grid})  # komi 0 too: the first player's edge
    low, high = bracket_interval(table.komi, table.black_score * table.games, table.games)
    assert low <= fair <= high
    widened = any(stage["stage"].startswith("widen") for stage in stages)
    if fair > max(grid) + 1:
        assert widened
    if fair < max(grid) - 1:
        assert not widened


def test_an_edge_at_exactly_one_half_widens_on(monkeypatch):
    from catena_zero.komi.atlas import komi_sweep
    from catena_zero.komi.sweep import SweepTable

    def sweep(rules, agent, komi_values, games_per_komi, seed):  # Black: 1/2 up to komi 9
        komi = np.asarray(sorted(set(int(k) for k in komi_values)))
        wins = np.where(komi <= 9, games_per_komi // 2, 0) + np.where(komi <= 3, 2, 0)
        games = np.full(komi.size, games_per_komi)
        return SweepTable(komi, games, wins, np.zeros(komi.size, int), wins / games,
                          np.zeros(komi.size), np.ones(komi.size), np.zeros(komi.size),
                          np.zeros(komi.size), np.full(komi.size, 40.0))

    monkeypatch.setattr(komi_sweep, "sweep_komi", sweep)
    table, stages = komi_sweep.centred_start(Rules(side=6), None, AtlasConfig(**CHEAP),
                                             centre=4.0)
    assert any(stage["stage"].startswith("widen") for stage in stages)
    assert table.komi.max() > 9 and table.black_score[-1] < 0.5


def test_on_the_wide_quadratic_range_a_good_centre_finds_the_crossing_in_fewer_games(
        monkeypatch):
    rules = Rules(side=6, scoring="quadratic")  # komi 0..1000: the grid is 250 apart
    before_bracket = {}
    for name, centre in (("grid", None), ("centre", 123.3)):
        fake_sweeps(monkeypatch, fair=120.3, slope=0.05)
        _, stages = adaptive_sweep(rules, None, AtlasConfig(**CHEAP), centre=centre)
        before_bracket[name] = sum(len(stage["komi"]) * stage["games_per_komi"]
                                   for stage in stages
                                   if not stage["stage"].startswith(("bracket", "narrow")))
    assert before_bracket["centre"] < before_bracket["grid"]


def test_komi_balance_records_where_it_started(monkeypatch):
    fake_sweeps(monkeypatch, fair=8.6, slope=1.2)
    evaluate = fair_evaluator(8.6)
    record = komi_balance(Rules(side=5), None, evaluate, AtlasConfig(**CHEAP))
    assert record["start"]["centre"] == pytest.approx(8.6, abs=1e-3)
    assert record["stages"][0]["stage"] == "start"
    assert record["network_estimate"] == pytest.approx(8.6, abs=0.2)
    grid = komi_balance(Rules(side=5), None, evaluate, AtlasConfig(**CHEAP | {"start": "grid"}))
    assert grid["start"] is None and grid["stages"][0]["stage"] == "coarse"
    quiet = AtlasConfig(**CHEAP | {"network_estimate": False})
    started = komi_balance(Rules(side=5), None, evaluate, quiet)
    assert started["network_estimate"] is None and started["start"] is not None


def test_the_start_is_a_setting_of_the_komi_measurement():
    with pytest.raises(ValueError, match="atlas.start"):
        AtlasConfig(start="middle")
    settings = measurement_settings(AtlasConfig(), SearchConfig(), "komi")
    assert settings["atlas"]["start"] == "network"
    assert "start" not in measurement_settings(AtlasConfig(), SearchConfig(), "double")["atlas"]


def test_a_nokomi_estimate_is_held_against_the_exact_result_after_its_own_stone():
    from catena_zero.komi.atlas.outcome import compared_exact, holds_exact

    record = {"game_type": "nokomi", "exact": 1.0, "interval": [0.0, 0.2],
              "fair_stone_exactly_fairest": True, "fair_stone_exact": 0.0}
    assert compared_exact(record) == 0.0 and holds_exact(record)  # +x and -x are both fairest
    record |= {"fair_stone_exactly_fairest": False}
    assert compared_exact(record) == 1.0 and not holds_exact(record)
