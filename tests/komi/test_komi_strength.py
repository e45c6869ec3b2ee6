"""The solver's check of the model's own moves on solved boards (komi.strength), and how the
atlas reports a track whose player is too weak for its estimate to stand."""

from __future__ import annotations

import math

import pytest

from catena_zero.arena.agents import RandomAgent
from catena_zero.komi.atlas import AtlasModel, run_atlas
from catena_zero.komi.atlas.outcome import HOLDS, METHOD_ERROR, PLAYER_TOO_WEAK
from catena_zero.komi.atlas.report import markdown_table
from catena_zero.komi.config import AtlasConfig
from catena_zero.komi.solver_agent import SolverAgent
from catena_zero.komi.strength import solver_check, strength_note
from catena_zero.mcts import UniformEvaluator
from catena_zero.rules import Rules
from tests.komi.test_komi_atlas import CHEAP, exact_model


def test_the_solver_itself_plays_only_optimal_moves():
    check = solver_check(Rules(side=2), SolverAgent(), games=8, min_share=1.0, komis=[2, 3],
                         min_result_share=1.0)
    assert check["moves"] > 0 and check["games"] == 8 and check["komis"] == [2, 3]
    assert check["margin_optimal"]["share"] == 1.0 and check["result_keeping"]["share"] == 1.0
    assert check["black_score"] == {"2": 1.0, "3": 0.0}  # perfect play: the exact 2.5
    assert check["strong_enough"] and strength_note(check) is None


def test_random_moves_fall_below_a_high_bar():
    check = solver_check(Rules(side=2), RandomAgent(), games=8, min_share=0.95, komis=[3])
    share = check["margin_optimal"]["share"]
    assert 0 < share < 0.95 and not check["strong_enough"]
    low, high = check["margin_optimal"]["interval"]
    assert low <= share <= high
    note = strength_note(check)
    assert note.startswith(PLAYER_TOO_WEAK) and f"of {check['moves']} moves" in note
    assert "(bar 95%)" in note and "result-keeping (bar 0%)" in note


def test_the_atlas_flags_a_weak_model_on_a_solved_track(tmp_path):
    weak = AtlasModel("uniform", "2" * 64,
                      lambda rules: UniformEvaluator(rules.board.num_actions))
    config = AtlasConfig(sides=[2], variants=["komi/standard"], output=str(tmp_path / "a.json"),
                         solver_cache=str(tmp_path / "cache.json"), min_optimal_share=0.99,
                         strength_games=8, **CHEAP)
    record = run_atlas(config, lambda *track: weak, progress=False,
                       log=lambda line: None)["records"]["side2-komi-standard"]
    assert record["strength"]["komis"] == [2, 3]  # both sides of the exact fair komi 2.5
    assert record["strength"]["margin_optimal"]["share"] < 0.99
    assert record["strength_note"].startswith(PLAYER_TOO_WEAK)
    assert record["exact_outcome"] in (HOLDS, PLAYER_TOO_WEAK)
    table = markdown_table({"records": {"side2-komi-standard": record}})
    assert f"| {record['exact_outcome']}" in table


def test_a_perfect_model_passes_and_zero_games_skip_the_check(tmp_path):
    config = AtlasConfig(sides=[2], variants=["double/standard"],
                         output=str(tmp_path / "a.json"),
                         solver_cache=str(tmp_path / "cache.json"), **CHEAP)
    model = exact_model()
    record = run_atlas(config, lambda *track: model, progress=False,
                       log=lambda line: None)["records"]["side2-double-standard"]
    assert record["strength"]["komis"] == [0] and record["strength_note"] is None
    assert record["strength"]["result_keeping"]["share"] == 1.0
    assert record["exact_outcome"] == HOLDS and record["exact_outcome_note"] is None
    skipped = AtlasConfig(sides=[2], variants=["double/standard"], strength_games=0,
                          output=str(tmp_path / "b.json"),
                          solver_cache=str(tmp_path / "cache.json"), **CHEAP)
    record = run_atlas(skipped, lambda *track: model, progress=False,
                       log=lambda line: None)["records"]["side2-double-standard"]
    assert record["strength"] is None and record["strength_note"] is None


def test_an_interval_that_misses_the_exact_value_is_never_left_unexplained(tmp_path):
    weak = AtlasModel("uniform", "3" * 64,
                      lambda rules: UniformEvaluator(rules.board.num_actions))
    config = AtlasConfig(**CHEAP | {"sides": [2], "variants": ["double/standard"],
                                    "output": str(tmp_path / "a.json"), "double_games": 64,
                                    "solver_cache": str(tmp_path / "cache.json"),
                                    "strength_games": 0})
    record = run_atlas(config, lambda *track: weak, progress=False,
                       log=lambda line: None)["records"]["side2-double-standard"]
    assert record["exact"] == 0.0 and record["interval"][0] > 0.0  # random play: Black wins
    assert record["exact_agrees"] is False and record["strength"] is None
    # no solver evidence: the miss is not put on the player but reported as the method's
    assert record["exact_outcome"] == METHOD_ERROR
    assert "misses the exact 0 and no solver check ran" in record["exact_outcome_note"]
    table = markdown_table({"records": {"side2-double-standard": record}})
    assert "| method error |" in table and "no solver check ran" in table


@pytest.mark.parametrize(("changes", "words"), [
    ({"strength_games": 3}, "even number"), ({"strength_games": -2}, "even number"),
    ({"min_optimal_share": 1.5}, "min_optimal_share"),
    ({"min_result_share": -0.1}, "min_result_share"),
])
def test_bad_strength_settings_name_the_key(changes, words):
    with pytest.raises(ValueError, match=words):
        AtlasConfig(**changes)


def test_two_strengths_that_agree_keep_the_stronger_interval():
    from catena_zero.komi.atlas import two_strengths

    fields = two_strengths({32: {"estimate": 5.2, "interval": [4, 6], "games": 40},
                            8: {"estimate": 5.8, "interval": [5, 7], "games": 30}})
    assert fields["simulations"] == 32 and fields["interval"] == [4, 6]
    assert fields["moving_with_strength"] is False and fields["games"] == 70
    assert fields["weaker"] == {"simulations": 8, "estimate": 5.8, "interval": [5, 7],
                                "games": 30}


def test_two_strengths_apart_widen_the_interval_to_hold_both():
    from catena_zero.komi.atlas import two_strengths

    fields = two_strengths({8: {"estimate": 3.0, "interval": [2, 4], "games": 20},
                            64: {"estimate": 9.5, "interval": [9, None], "games": 20}})
    assert fields["moving_with_strength"] is True
    assert fields["interval"] == [2, None] and fields["stronger_interval"] == [9, None]
    table = markdown_table({"records": {"t": {
        **fields, "track": "side6-komi-standard", "side": 6, "game_type": "komi",
        "scoring": "standard"}}})
    assert "Still moving with search strength" in table
    assert "8 simulations [2, 4], 64 [9, +inf]; reported [2, +inf]" in table


def test_the_atlas_measures_at_two_strengths_when_asked(tmp_path):
    config = AtlasConfig(sides=[2], variants=["double/standard"], check_simulations=4,
                         strength_games=0, output=str(tmp_path / "a.json"),
                         solver_cache=str(tmp_path / "cache.json"), **CHEAP)
    model = exact_model()
    record = run_atlas(config, lambda *track: model, progress=False,
                       log=lambda line: None)["records"]["side2-double-standard"]
    assert record["simulations"] == 8 and record["weaker"]["simulations"] == 4
    assert record["games"] == 2 * CHEAP["double_games"]
    assert record["settings"]["atlas"]["check_simulations"] == 4
    with pytest.raises(ValueError, match="check_simulations"):
        AtlasConfig(check_simulations=-1)
    with pytest.raises(ValueError, match="differ from atlas.simulations"):
        AtlasConfig(simulations=8, check_simulations=8)


def fake_sweeps(monkeypatch, fair: float, slope: float):
    """Replace the self-play sweep by binomial draws from a logistic score curve."""
    import numpy as np

    from catena_zero.arena.stats import wilson_interval
    from catena_zero.komi.atlas import komi_sweep
    from catena_zero.komi.sweep import SweepTable

    calls = []

    def sweep(rules, agent, komi_values, games_per_komi, seed):
        komi = np.asarray(sorted(set(int(k) for k in komi_values)))
        chance = 1 / (1 + np.exp(-slope * (fair - komi)))
        wins = np.random.default_rng(seed).binomial(games_per_komi, chance)
        games = np.full(komi.size, games_per_komi)
        low, high = wilson_interval(wins.astype(float), games)
        calls.append((komi.tolist(), games_per_komi))
        return SweepTable(komi, games, wins, np.zeros(komi.size, int), wins / games, low, high,
                          np.zeros(komi.size), np.zeros(komi.size), np.full(komi.size, 40.0))

    monkeypatch.setattr(komi_sweep, "sweep_komi", sweep)
    return calls


def test_the_narrowing_stage_closes_in_on_the_crossing(monkeypatch):
    from catena_zero.komi.atlas.komi_sweep import adaptive_sweep
    from catena_zero.komi.intervals import bracket_interval

    fake_sweeps(monkeypatch, fair=6.3, slope=0.5)
    rules = Rules(side=6)
    wide = AtlasConfig(**CHEAP)
    narrow = AtlasConfig(**CHEAP | {"target_width": 2.0, "max_games": 5000})
    before, _ = adaptive_sweep(rules, None, wide)
    after, stages = adaptive_sweep(rules, None, narrow)
    width = [high - low for low, high in (
        bracket_interval(t.komi, t.black_score * t.games, t.games) for t in (before, after))]
    assert width[1] <= 2.0 < width[0]
    assert any(stage["stage"].startswith("narrow") for stage in stages)
    low, high = bracket_interval(after.komi, after.black_score * after.games, after.games)
    assert low <= 6.3 <= high


def test_the_target_width_is_in_komi_units(monkeypatch):
    """Quadratic scoring sweeps komi 0..1000 in steps of 17: target_width 2 asks for a
    bracket two steps (34 points) wide, which a curve as steep per step as side 6
    standard's reaches, and no more games go to narrowing it further."""
    from catena_zero.komi.atlas.komi_sweep import adaptive_sweep, komi_unit
    from catena_zero.komi.intervals import bracket_interval
    from catena_zero.rules import Scoring

    rules = Rules(side=6, scoring=Scoring.QUADRATIC)
    assert komi_unit(rules) == 17 and komi_unit(Rules(side=6)) == 1
    fake_sweeps(monkeypatch, fair=400.3, slope=0.5 / 17)
    config = AtlasConfig(**CHEAP | {"target_width": 2.0, "max_games": 20000})
    table, stages = adaptive_sweep(rules, None, config)
    low, high = bracket_interval(table.komi, table.black_score * table.games, table.games,
                                 min_games=config.bracket_games)
    assert low <= 400.3 <= high and high - low <= 34
    assert table.games.sum() < 5000  # stopped at the width, far from max_games


def test_the_narrowing_stage_closes_open_ends_of_a_flat_curve(monkeypatch):
    from catena_zero.komi.atlas.komi_sweep import adaptive_sweep
    from catena_zero.komi.intervals import bracket_interval

    def bracket(table):
        return bracket_interval(table.komi, table.black_score * table.games, table.games)

    # Black scores 0.68 at komi 0 and 0.32 at komi 15: 8 games a komi seldom clear
    fake_sweeps(monkeypatch, fair=7.5, slope=0.1)
    rules = Rules(side=6)
    before, _ = adaptive_sweep(rules, None, AtlasConfig(**CHEAP))
    assert bracket(before)[0] == -math.inf  # the outward walk left Black's end open
    after, stages = adaptive_sweep(rules, None, AtlasConfig(
        **CHEAP | {"target_width": 8.0, "max_games": 20000}))
    low, high = bracket(after)
    assert math.isfinite(low) and math.isfinite(high) and low <= 7.5 <= high
    assert high - low <= 8.0
    first = next(stage for stage in stages if stage["stage"] == "narrow 1")
    assert min(first["komi"]) < 7.5  # the open end got games


def test_the_narrowing_stage_leaves_an_end_that_cannot_close(monkeypatch):
    from catena_zero.komi.atlas.komi_sweep import adaptive_sweep
    from catena_zero.komi.intervals import bracket_interval

    calls = fake_sweeps(monkeypatch, fair=40.0, slope=1.0)  # Black wins at every komi
    config = AtlasConfig(**CHEAP | {"target_width": 2.0, "max_games": 20000})
    table, stages = adaptive_sweep(Rules(side=6), None, config)
    low, high = bracket_interval(table.komi, table.black_score * table.games, table.games)
    assert low == 15 and high == math.inf
    assert not any(stage["stage"].startswith("narrow") for stage in stages)
    assert table.games.sum() < 200 and calls


def literal_table(komi, games, black_score):
    import numpy as np

    from catena_zero.arena.stats import wilson_interval
    from catena_zero.komi.sweep import SweepTable

    komi, games = np.asarray(komi), np.asarray(games)
    wins = np.round(np.asarray(black_score) * games)
    low, high = wilson_interval(wins.astype(float), games)
    return SweepTable(komi, games, wins, np.zeros(komi.size, int), wins / games, low, high,
                      np.zeros(komi.size), np.zeros(komi.size), np.full(komi.size, 20.0))


def test_games_go_to_the_komi_that_clears_one_half_soonest():
    """A side-4 sweep of a trained model, midway: komi 12 sits at 0.46 after 300 games and
    needs hundreds more to clear one half (the komi one step inside the bracket, which the
    games used to go to); komi 11 (0.33 after 24 games) and 10 (0.625 after 24) are a few
    dozen games from closing the bracket to [10, 11]."""
    from catena_zero.komi.atlas.komi_sweep import (
        crossing_neighbours,
        games_to_clear,
        narrowing_komi,
    )
    from catena_zero.komi.intervals import bracket_interval

    table = literal_table(range(5, 16), [12, 108, 84, 24, 36, 24, 24, 300, 64, 24, 12],
                          [0.8333, 0.6111, 0.631, 0.7083, 0.5556, 0.625, 0.3333, 0.46,
                           0.3438, 0.2917, 0.3333])
    low, high = bracket_interval(table.komi, table.black_score * table.games, table.games)
    left, right = crossing_neighbours(table)
    assert (low, high) == (8, 13) and (left, right) == (10, 11)
    assert narrowing_komi(table, low, left, "black") == 10
    assert narrowing_komi(table, high, right, "white") == 11
    assert games_to_clear(0.5, 100) == math.inf and games_to_clear(0.0, 10) == 0.0
    assert games_to_clear(0.75, 4) == pytest.approx(1.959963984540054 ** 2 * 3 - 4)
    # an open end that cannot close: Black wins significantly at the range's top
    above = literal_table([13, 14, 15], [40, 40, 40], [0.9, 0.85, 0.8])
    assert narrowing_komi(above, math.inf, 15, "white") is None
    # no komi on the right side of one half: the step inside a closed end, if not past
    # the crossing's neighbour
    flat = literal_table([5, 6, 7, 8], [40, 40, 40, 40], [0.9, 0.5, 0.5, 0.1])
    assert narrowing_komi(flat, 8, 6, "white") == 7
    assert narrowing_komi(flat, 5, 5, "black") is None
    # an open end whose komis all sit at one half: more games there may still close it
    level = literal_table([10, 11, 12], [40, 40, 40], [0.6, 0.5, 0.5])
    assert narrowing_komi(level, math.inf, 11, "white") == 11


def test_no_games_go_where_one_half_cannot_clear_within_the_budget():
    """A side-7 sweep: komi 9 at 0.49 after 768 games would need thousands more to clear one
    half, so with 232 games left it gets none; komi 8 at one half after 12 games may move."""
    from catena_zero.komi.atlas.komi_sweep import hopeful_games, narrowing_komi

    table = literal_table([0, 4, 8, 9, 10, 11], [96, 48, 12, 768, 24, 12],
                          [0.625, 0.5, 0.5, 0.49, 0.2917, 0.5833])
    assert narrowing_komi(table, 10, 9, "white") == 9  # no budget: the old choice
    assert narrowing_komi(table, 10, 9, "white", budget=232) is None
    assert hopeful_games(0.5, 12, -1) < 232 < hopeful_games(0.49, 768, -1)
    assert hopeful_games(0.7, 40, -1) == math.inf  # even a standard error lower stays above
    flat = literal_table([5, 6, 7, 8], [40, 40, 12, 40], [0.9, 0.5, 0.5, 0.1])
    assert narrowing_komi(flat, 8, 6, "white", budget=232) == 7


def test_the_narrowing_stage_stops_at_its_budget(monkeypatch):
    from catena_zero.komi.atlas.komi_sweep import adaptive_sweep

    fake_sweeps(monkeypatch, fair=6.3, slope=0.15)  # a flat curve: hard to bracket
    config = AtlasConfig(**CHEAP | {"target_width": 1.0, "max_games": 300})
    table, stages = adaptive_sweep(Rules(side=6), None, config)
    narrowing = [stage for stage in stages if stage["stage"].startswith("narrow")]
    assert narrowing and table.games.sum() < 300 + 2 * CHEAP["bracket_games"]
    with pytest.raises(ValueError, match="target_width"):
        AtlasConfig(target_width=-1)
