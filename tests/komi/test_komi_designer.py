"""The designer's page of the komi atlas (komi.atlas.designer) and the sweep columns it reads."""

from __future__ import annotations

import numpy as np

from catena_zero.komi.atlas.designer import designer_summary, sweep_row
from catena_zero.komi.solver_agent import SolverAgent
from catena_zero.komi.sweep import SweepTable, sweep_komi
from catena_zero.rules import Rules

RECORD = {
    "side": 6, "game_type": "komi", "scoring": "standard", "status": "measured",
    "estimate": 5.4, "interval": [4, 7], "exact": None, "moving_with_strength": True,
    "sweep": {"komi": [0, 4, 6, 8], "games": [10, 20, 20, 10],
              "black_score": [0.8, 0.6, 0.4, 0.1], "mean_margin": [6.5, 1.5, -0.5, -3.0],
              "half_point": [1, 8, 10, 2], "mean_moves": [80.0, 82.5, 81.0, 79.0]},
}


def test_a_row_reads_the_sweep_at_the_fair_komi_and_at_komi_0():
    row = sweep_row(RECORD["sweep"], 5.4)
    assert row == {"komi": 6, "half_point": 0.5, "moves": 81.0, "black_at_0": 0.8,
                   "margin_at_0": 6.5}
    old = {key: value for key, value in RECORD["sweep"].items()
           if key not in ("half_point", "mean_moves")}
    assert sweep_row(old, 5.4)["half_point"] is None and sweep_row({}, 5.4)["komi"] is None


def test_the_page_has_one_row_per_side_with_its_notes():
    side4 = {**RECORD, "side": 4, "estimate": None, "estimate_side": "above",
             "interval": [15, None], "moving_with_strength": False,
             "strength_note": None, "sweep": {}}
    other = {**RECORD, "scoring": "longest"}  # not komi/standard: not on the page
    page = designer_summary({"records": {"a": RECORD, "b": side4, "c": other}})
    rows = [line for line in page.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 2 and rows[0].startswith("| 4 |") and rows[1].startswith("| 6 |")
    assert "| 4 | above the range | [15, open] |" in rows[0]
    # the mean margin 1.5 at komi 4 and -0.5 at 6: zero at 5.5 (no spread kept: no interval)
    assert "| 6 | 5.4 | [4, 7] | - | 5.5 | - | - | - | 50% (komi 6) | 81 | 0.8 | 6.5 | - |" \
        in rows[1]
    assert "still moving with search strength" in rows[1]


def test_the_network_estimate_is_held_against_the_exact_value_then_the_games():
    from catena_zero.komi.atlas.designer import model_error, network_text

    # RECORD: the games put side 6 at 5.4 in [4, 7], no exact value.
    assert model_error({**RECORD, "network_estimate": 6.9}) is None  # 1.5 off: agrees
    assert model_error({**RECORD, "network_estimate": 3.9}) is None  # 1.5 below, not more
    assert model_error({**RECORD, "network_estimate": 7.2}) == (
        "the network says 7.2, 1.8 above the games' estimate but inside their interval")
    assert model_error({**RECORD, "network_estimate": 8.5}) == (
        "the network says 8.5, 3.1 above the games' estimate but inside their interval")
    assert model_error({**RECORD, "network_estimate": 8.6}) == (
        "the network says 8.6, outside the games' interval by 1.6: the model's error")
    assert model_error({**RECORD, "network_estimate": 0.0}) == (
        "the network says <= 0, outside the games' interval by 4: the model's error")
    # An open end bounds nothing: only the estimate is compared.
    open_high = {**RECORD, "interval": [4, None], "network_estimate": 15.0}
    assert model_error(open_high) == (
        "the network says >= 15, 9.6 above the games' estimate but inside their interval")
    assert model_error({**RECORD, "interval": [None, 7], "network_estimate": 9.0}) == (
        "the network says 9, outside the games' interval by 2: the model's error")
    # The exact value, where the solver has one, decides alone.
    side2 = {**RECORD, "side": 2, "exact": 2.5, "estimate": 2.5, "interval": [2, 3]}
    assert model_error({**side2, "network_estimate": 11.5}) == (
        "the network says 11.5, 9 above the exact value: the model's error")
    assert model_error({**side2, "network_estimate": 3.9}) is None
    assert model_error({**side2, "interval": [0, 15], "network_estimate": 4.5}) == (
        "the network says 4.5, 2 above the exact value: the model's error")
    # Nothing to compare: no network estimate (a UCT atlas), a crossing beyond the range.
    assert model_error(RECORD) is None
    assert model_error({**RECORD, "network_estimate": float("nan")}) is None
    assert model_error({**RECORD, "network_estimate": 15.0, "estimate": None,
                        "estimate_side": "above", "interval": [15, None]}) is None
    # The column: a clipped estimate reads as the range's end.
    assert network_text({**RECORD, "network_estimate": 12.96}) == "13"
    assert network_text({**RECORD, "network_estimate": 15.0}) == ">= 15"
    assert network_text(RECORD) == "-"
    page = designer_summary({"records": {"a": {**RECORD, "network_estimate": 12.96}}})
    row = next(line for line in page.splitlines() if line.startswith("| 6 |"))
    assert "| 6 | 5.4 | [4, 7] | - | 5.5 | - | - | 13 | 50% (komi 6) |" in row
    assert row.endswith("| still moving with search strength; the network says 13, outside "
                        "the games' interval by 6: the model's error |")


def test_each_row_names_the_model_and_search_that_measured_it():
    from catena_zero.komi.atlas.designer import measured_with

    record = {**RECORD, "model": {"name": "general.pt", "sha256": "ab" * 32},
              "settings": {"atlas": {"simulations": 32}}, "weaker": {"simulations": 8}}
    assert measured_with(record) == "general.pt abababab, 32 and 8 simulations"
    assert measured_with({**record, "weaker": None}) == "general.pt abababab, 32 simulations"
    assert measured_with({"settings": {"atlas": {"simulations": 8}}}) == \
        "unnamed model, 8 simulations"
    assert measured_with(RECORD) == "-"
    opening = {**record, "settings": {"atlas": {"simulations": 32, "opening_moves": 8}}}
    assert measured_with(opening) == \
        "general.pt abababab, 32 and 8 simulations, 8 opening moves"
    page = designer_summary({"records": {"a": record}})
    assert "| general.pt abababab, 32 and 8 simulations | still moving with search strength |" \
        in page
    # a file bundled under another name today says so (the atlas's general.pt of step 90144)
    earlier = {**record, "model": {"name": "general.pt", "sha256": "a65abc7ed5d794d819077a23e1"
                                   "668ed38bd8ce2d8a71de8e0a02b7f649bea133"}}
    assert measured_with(earlier) == \
        "general.pt a65abc7e (now general-step90144.pt), 32 and 8 simulations"


def test_the_sweep_counts_half_point_games_and_moves():
    """Perfect play on side 2 (fair komi 2.5): at komi 2 Black wins by exactly half a point,
    at komi 3 loses by it."""
    table = sweep_komi(Rules(side=2), SolverAgent(), [2, 3], games_per_komi=4, seed=0)
    assert table.half_point.tolist() == [4, 4]
    assert (table.mean_moves > 2).all() and (table.mean_moves <= 8).all()
    columns = {name: getattr(table, name) for name in ("komi", "games", "black_wins", "draws",
                                                       "black_score", "wilson_low",
                                                       "wilson_high", "mean_margin")}
    read = SweepTable.from_columns(columns)  # a table written before these columns
    assert np.isnan(read.half_point).all() and np.isnan(read.mean_moves).all()


def test_both_meanings_of_fair_meet_at_the_exact_value_under_perfect_play():
    """Side 2 with the solver playing both colours (exact fair komi 2.5): Black's win rate
    falls through one half between komi 2 and 3, and so does the mean margin (+0.5, -0.5),
    every game alike (spread 0), so both meanings give 2.5 in [2, 3]."""
    from catena_zero.komi.atlas.designer import zero_margin
    from catena_zero.komi.intervals import zero_margin_komi

    table = sweep_komi(Rules(side=2), SolverAgent(), [0, 1, 2, 3, 4, 5], games_per_komi=4,
                       seed=0)
    assert table.mean_margin.tolist() == [2.5, 1.5, 0.5, -0.5, -1.5, -2.5]
    assert table.margin_sd.tolist() == [0.0] * 6
    found = zero_margin_komi(table.komi, table.mean_margin, table.margin_sd, table.games)
    assert (found.estimate, found.low, found.high, found.spread) == (2.5, 2.0, 3.0, 0.0)
    record = {"sweep": {"komi": table.komi.tolist(), "games": table.games.tolist(),
                        "mean_margin": table.mean_margin.tolist(),
                        "margin_sd": table.margin_sd.tolist()}}
    assert zero_margin(record) == ("2.5", "[2, 3]", "0")


def test_the_zero_margin_komi_of_noisy_games_is_bracketed_by_the_spread():
    from catena_zero.komi.intervals import zero_margin_komi

    # 40 games a komi, margin SD 6: a mean's 95% interval is about +-1.9
    found = zero_margin_komi([4, 6, 8, 10, 12], [6.0, 3.0, 1.0, -1.0, -4.0], [6.0] * 5,
                             [40] * 5)
    assert found.estimate == 9.0 and (found.low, found.high) == (6.0, 12.0)
    assert found.spread == 6.0
    # a recorded sweep without the spread: the point only
    old = zero_margin_komi([4, 6], [1.0, -1.0], [float("nan")] * 2, [10, 10])
    assert old.estimate == 5.0 and np.isnan(old.low) and np.isnan(old.high)


def test_the_page_says_which_meaning_is_fair_and_gives_solved_outcomes():
    import json
    from pathlib import Path

    atlas = Path(__file__).resolve().parents[2] / "docs" / "komi" / "atlas.json"
    page = designer_summary(json.loads(atlas.read_text()))
    assert "The project calls fair the first, where Black's win rate crosses one half" in page
    side2 = next(line for line in page.splitlines() if line.startswith("| 2 |"))
    # recorded side 2 at the default player's search: crossing 2.45 in [2, 3] (exact 2.5),
    # Black's mean margin zero at 2.2, a game's margin spread 2.5
    assert side2.startswith("| 2 | 2.5 | [2, 3] | 2.5 | 2.2 | [open, 3] | 2.5 |")
    assert "holds the exact value, though the player is below the bar" in side2
    assert "method error:" not in page


def _curve_row(side, simulations, estimate, interval, name="m.pt"):
    return {"track": f"side{side}-komi-standard", "side": side, "simulations": simulations,
            "model": {"name": name, "sha256": "ab" * 32}, "estimate": estimate,
            "interval": list(interval), "zero_margin": {"estimate": estimate - 1,
                                                        "interval": [None, estimate]},
            "network_estimate": 13.6}


def test_the_table_at_strength_gives_the_komi_a_game_is_played_at():
    """Side 6 measured at 8, 32 and 128 simulations, the 128 bracket open: the strongest
    row shows the open bracket, and a game against a 128-simulation player is played at the
    32-simulation crossing (the nearest closed one); side 7 has no closed bracket, so the
    network answers; a track of another scoring is not on the page."""
    rows = [_curve_row(6, 8, 14.2, (14, 15)), _curve_row(6, 32, 9.0, (4, 10)),
            _curve_row(6, 128, 8.0, (7, None)), _curve_row(7, 8, 15.0, (12, None))]
    verdicts = {"side6-komi-standard": {"last_two_overlap": True},
                "side7-komi-standard": {"last_two_overlap": None}}
    curve = {"rows": rows, "verdicts": verdicts}
    page = designer_summary({"records": {}}, curve, 128)
    section = page.split("## At strength, with the models that play today")[1]
    side6 = next(line for line in section.splitlines() if line.startswith("| 6 |"))
    assert side6 == ("| 6 | m.pt abababababab | 8, 32, 128 | 8 at 128 | [7, open] "
                     "| 7 [open, 8] | yes | 13.6 | 9 (the crossing at 32 simulations) |")
    side7 = next(line for line in section.splitlines() if line.startswith("| 7 |"))
    assert side7.endswith("| - | 13.6 | the network's own estimate (no closed bracket) |")
    assert "the default player, 128 simulations a move" in section
    # without a player's strength the strongest closed measurement answers
    assert "| 9 (the crossing at 32 simulations) |" in designer_summary({"records": {}}, curve)
    assert "At strength" not in designer_summary({"records": {}})


def test_an_atlas_record_of_the_same_model_at_the_players_search_sets_the_komi_of_play():
    """The atlas measured side 6 with the curve's model at 128 simulations with leaf values
    mixed half and half: a default player (128, 0.5) plays at its crossing, a player without
    the mix at the curve's 128-simulation one; an atlas record of another model is not
    weighed at all."""
    rows = [_curve_row(6, 32, 9.0, (4, 10)), _curve_row(6, 128, 8.0, (7, 9))]
    curve = {"rows": rows, "verdicts": {"side6-komi-standard": {"last_two_overlap": True}}}
    record = {"side": 6, "status": "measured", "estimate": 11.0, "interval": [10, 12],
              "model": {"name": "m.pt", "sha256": "ab" * 32},
              "settings": {"atlas": {"simulations": 128},
                           "search": {"num_simulations": 800, "rollout_mix": 0.5}}}
    atlas = {"records": {"side6-komi-standard": record}}

    def played(document, mix):
        section = designer_summary(document, curve, 128, mix).split("## At strength")[1]
        return next(line for line in section.splitlines() if line.startswith("| 6 |"))

    assert played(atlas, 0.5).endswith(
        "| 11 (the crossing at 128 simulations, leaf values mixed 0.5, the atlas) |")
    assert played(atlas, 0.0).endswith("| 8 (the crossing at 128 simulations) |")
    other = {"records": {"side6-komi-standard": {**record, "model": {"sha256": "cd" * 32}}}}
    assert played(other, 0.5).endswith("| 8 (the crossing at 128 simulations) |")


def test_the_committed_page_is_current_and_agrees_with_the_komi_of_play():
    """docs/komi/designer.md is what the atlas and the curve beside it give today, and its
    komi a game is played at is the one GTP's catena-choose-komi answers with the default
    player on each side."""
    import re
    from pathlib import Path

    import torch

    from catena_zero.komi.atlas.curve import read_curve
    from catena_zero.komi.atlas.document import load_atlas
    from catena_zero.komi.fair import komi_for_play
    from catena_zero.play.bundled import ModelLibrary
    from catena_zero.play.model_player import ModelPlayer, PlayerConfig

    directory = Path(__file__).resolve().parents[2] / "docs" / "komi"
    page = designer_summary(load_atlas(directory / "atlas.json"), read_curve(directory / "curve"),
                            PlayerConfig().simulations, PlayerConfig().rollout_mix,
                            ModelLibrary().komi_standard_players())
    assert (directory / "designer.md").read_text() == page
    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(), PlayerConfig())
    played = re.findall(r"^\| (\d+) \|.*\| (\d+) \(the crossing at \d+ simulations[^)]*\) \|$",
                        page.split("## At strength")[1], flags=re.MULTILINE)
    assert len(played) >= 7
    for side, komi in played:
        assert komi_for_play(player, Rules(side=int(side))).komi == int(komi), side


def test_a_side_whose_player_the_curve_did_not_measure_shows_the_players_own_record():
    """The curve measured side 6 with m.pt; today n.pt plays it. The row names n.pt and
    its atlas record (128 simulations, mixed 0.5), a game is played at that record's
    crossing, and a line under the table says why; with no record of n.pt the network
    answers. A player the curve did measure keeps the curve's row."""
    rows = [_curve_row(6, 32, 9.0, (4, 10)), _curve_row(6, 128, 10.0, (9, 11))]
    curve = {"rows": rows, "verdicts": {"side6-komi-standard": {"last_two_overlap": True}}}
    today = {"name": "n.pt", "sha256": "cd" * 32}
    record = {"side": 6, "game_type": "komi", "scoring": "standard", "status": "measured",
              "estimate": 8.5, "interval": [1, 11], "model": today, "network_estimate": 9.6,
              "settings": {"atlas": {"simulations": 128}, "search": {"rollout_mix": 0.5}}}
    atlas = {"records": {"side6-komi-standard": record}}

    def section(document, players):
        return designer_summary(document, curve, 128, 0.5, players).split("## At strength")[1]

    page = section(atlas, {6: today})
    side6 = next(line for line in page.splitlines() if line.startswith("| 6 |"))
    assert side6 == ("| 6 | n.pt cdcdcdcdcdcd | 128 (the atlas) | 8.5 at 128 | [1, 11] "
                     "| - open | - | 9.6 | 8 (the crossing at 128 simulations, leaf values "
                     "mixed 0.5, the atlas) |")
    assert ("Side 6: the curve measured m.pt abababababab, which no longer plays it; the row "
            "is n.pt cdcdcdcdcdcd, which plays it today, from its own measurement in the "
            "atlas.") in page
    unmeasured = section({"records": {}}, {6: today})
    assert "| 6 | n.pt cdcdcdcdcdcd | - | - | - | - | - | - | the network's own estimate" \
        in unmeasured and "not measured yet: the network's estimate." in unmeasured
    same = section(atlas, {6: {"name": "m.pt", "sha256": "ab" * 32}})
    assert "| 6 | m.pt abababababab | 32, 128 | 10 at 128 | [9, 11] |" in same
    assert "no longer plays it" not in same
