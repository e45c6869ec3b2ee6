"""Where the atlas's komi sweep starts: the network's fair komi (value crossing moved by the
score head's lead), a centred first stage that widens until it encloses the crossing, and
the coarse grid it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.komi.atlas import measurement_settings
from catena_zero.komi.atlas_measure import (
    adaptive_sweep,
    centred_grid,
    komi_balance,
    network_centre,
)
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


@pytest.mark.parametrize(("fair", "centre"), [(6.3, 6.0), (13.2, 2.0), (1.6, 14.0),
                                              (14.7, 9.0), (0.4, 0.0)])
def test_a_centred_sweep_widens_until_it_brackets_the_crossing(monkeypatch, fair, centre):
    calls = fake_sweeps(monkeypatch, fair=fair, slope=1.5)
    config = AtlasConfig(**CHEAP)
    table, stages = adaptive_sweep(Rules(side=6), None, config, centre=centre)
    assert stages[0]["stage"] == "start" and stages[0]["centre"] == centre
    assert calls[0][0] == centred_grid(0, 15, centre, config.coarse_points, 1)
    low, high = bracket_interval(table.komi, table.black_score * table.games, table.games)
    assert low <= fair <= high
    far = abs(fair - centre) > config.coarse_points
    assert any(stage["stage"].startswith("widen") for stage in stages) == far


def test_a_good_centre_costs_fewer_games_than_the_coarse_grid(monkeypatch):
    games = {}
    for name, centre in (("grid", None), ("centre", 11.4)):
        fake_sweeps(monkeypatch, fair=11.4, slope=1.0)
        config = AtlasConfig(**CHEAP | {"target_width": 2.0, "max_games": 5000})
        table, _ = adaptive_sweep(Rules(side=6), None, config, centre=centre)
        games[name] = int(table.games.sum())
    assert games["centre"] <= games["grid"]


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
