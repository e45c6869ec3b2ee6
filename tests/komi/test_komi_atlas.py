"""The komi atlas: exact and estimated balance side by side, resumable atomic JSON."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from catena_zero.komi.atlas import (
    ATLAS_FORMAT_VERSION,
    AtlasError,
    AtlasModel,
    load_atlas,
    run_atlas,
)
from catena_zero.komi.atlas.report import markdown_table, plot_first_stones, write_report
from catena_zero.komi.config import ATLAS_VARIANTS, AtlasConfig
from catena_zero.komi.fair import record_simulations
from catena_zero.komi.solver_agent import SolverAgent, SolverEvaluator
from catena_zero.rules import Rules

# A cheap setting: few simulations and games (side 2 games last about eight moves).
CHEAP = dict(simulations=8, coarse_games=4, bracket_games=8, stone_simulations=8,
             stone_games=2, fair_stone_games=8, double_games=8, resamples=100)


def exact_model() -> AtlasModel:
    """A perfect stand-in for a network: the solver's value as the evaluation."""
    agent = SolverAgent()
    return AtlasModel("solver", "0" * 64, lambda rules: SolverEvaluator(rules, agent))


def atlas_config(tmp_path, **changes) -> AtlasConfig:
    values = dict(sides=[2], variants=list(ATLAS_VARIANTS), output=str(tmp_path / "atlas.json"),
                  solver_cache=str(tmp_path / "cache.json")) | CHEAP
    return AtlasConfig(**(values | changes))


FAST_VARIANTS = ["komi/standard", "komi/longest", "nokomi/standard", "double/standard"]


def test_on_solved_side_2_the_intervals_hold_the_exact_values(tmp_path):
    model = exact_model()
    document = run_atlas(atlas_config(tmp_path, variants=FAST_VARIANTS), lambda *track: model,
                         progress=False, log=lambda line: None)
    records = document["records"]
    assert len(records) == 4
    for record in records.values():
        assert record["status"] == "measured"
        assert record["exact_agrees"], record["track"]
        assert record["model"]["name"] == "solver" and record["games"] > 0
    standard = records["side2-komi-standard"]
    assert standard["exact"] == 2.5
    assert standard["interval"][0] <= 2.5 <= standard["interval"][1]
    assert standard["in_range"] is True and standard["logistic"]["fair_komi"] is not None
    longest = records["side2-komi-longest"]  # Black wins at every komi 0..15
    assert longest["exact"] is None and longest["exact_in_range"] is False
    assert longest["in_range"] is False and longest["interval"][1] is None
    assert "second player takes Black" in longest["range_note"]
    stones = records["side2-nokomi-standard"]
    assert len(stones["stones"]) == 7 and stones["estimate"] == 1.0
    assert {stone["exact_margin"] for stone in stones["stones"]} == {2.5}
    # Every stone leaves Black +2.5, so the chosen one is exactly fairest; its own games
    # (8 more, pooled with its 2 ranking games) give the interval.
    assert stones["fair_stone_exactly_fairest"] is True and stones["games_after_fair_stone"] == 10
    assert stones["fair_stone"] in stones["fair_stones"] and stones["fair_stone_exact"] == 1.0
    assert stones["games"] == 2 * 2 + 8  # side 2 has 2 symmetry orbits (centre, ring)
    double = records["side2-double-standard"]
    assert double["exact"] == 0.0 and double["expected_margin"] == -3.0
    heatmap = plot_first_stones(document, 2, tmp_path / "stones.png")
    assert heatmap is not None and heatmap.stat().st_size > 0


def test_a_measured_track_is_kept_and_a_new_model_measures_again(tmp_path):
    config = atlas_config(tmp_path, variants=["double/standard"])
    model = exact_model()
    lines: list[str] = []
    run_atlas(config, lambda *track: model, progress=False, log=lines.append)
    stamped = json.loads(Path(config.output).read_text()) | {"updated": "2000-01-01T00:00:00Z"}
    Path(config.output).write_text(json.dumps(stamped, indent=1) + "\n")
    written = Path(config.output).read_bytes()
    run_atlas(config, lambda *track: model, progress=False, log=lines.append)
    assert "already measured" in lines[-1]
    # nothing measured, nothing changed: the file is left byte for byte, `updated` included
    assert Path(config.output).read_bytes() == written
    other = AtlasModel("other", "1" * 64, model.evaluator)
    run_atlas(config, lambda *track: other, progress=False, log=lines.append)
    assert load_atlas(config.output)["records"]["side2-double-standard"]["model"]["name"] == "other"



def test_a_track_measured_again_keeps_no_field_of_the_earlier_measurement(tmp_path):
    """A track measured at two strengths (8 and 4 simulations) and then at one (4): its
    record is that of the new measurement alone, read as one of 4 simulations, and it is the
    record a fresh atlas writes with the same settings; the exact solution stays."""
    model = exact_model()
    config = atlas_config(tmp_path, variants=["komi/standard"], check_simulations=4)
    run_atlas(config, lambda *track: model, progress=False, log=lambda line: None)
    earlier = load_atlas(config.output)["records"]["side2-komi-standard"]
    assert earlier["simulations"] == 8 and "weaker" in earlier
    again = dataclasses.replace(config, simulations=4, check_simulations=0)
    run_atlas(again, lambda *track: model, progress=False, log=lambda line: None)
    record = load_atlas(config.output)["records"]["side2-komi-standard"]
    assert "weaker" not in record and "moving_with_strength" not in record
    assert record_simulations(record) == 4
    assert record["exact"] == 2.5 and record["exact_report"] == earlier["exact_report"]
    fresh = run_atlas(dataclasses.replace(again, output=str(tmp_path / "fresh.json")),
                      lambda *track: model, progress=False, log=lambda line: None)
    assert {**record, "seconds": 0} == {**fresh["records"]["side2-komi-standard"],
                                         "seconds": 0}

def test_varied_openings_then_the_searchs_own_choice(tmp_path):
    """With opening_moves the games differ only by their first moves (sampled from the
    search's visits) and the search plays without noise after them; the setting is part
    of the record, so measuring with it again re-measures."""
    from catena_zero.komi.atlas import atlas_agent
    from catena_zero.mcts import SearchConfig

    model = exact_model()
    noisy = atlas_agent(Rules(2), model, SearchConfig(), AtlasConfig(**CHEAP | {
        "opening_share": 0.0}))
    assert noisy.config.gumbel_scale == 1.0 and noisy.temperature_moves == 0
    varied = atlas_agent(Rules(2), model, SearchConfig(), AtlasConfig(**CHEAP | {
        "opening_moves": 2}))
    assert varied.config.gumbel_scale == 0.0 and varied.config.num_simulations == 8
    assert (varied.temperature, varied.temperature_moves) == (1.0, 2)
    config = atlas_config(tmp_path, variants=["komi/standard"], opening_moves=1)
    record = run_atlas(config, lambda *track: model, progress=False,
                       log=lambda line: None)["records"]["side2-komi-standard"]
    assert record["settings"]["atlas"]["opening_moves"] == 1
    assert record["interval"][0] <= 2.5 <= record["interval"][1] and record["exact_agrees"]
    with pytest.raises(ValueError, match="opening_moves"):
        AtlasConfig(opening_moves=-1)


def test_opening_share_scales_the_opening_with_the_board(tmp_path):
    """opening_share sets each board's opening_moves as a share of its cells (at least one
    move); the record carries the moves drawn, so a track measured with the same count
    either way shares its fingerprint and is not measured again."""
    from catena_zero.komi.atlas import atlas_agent, board_config
    from catena_zero.mcts import SearchConfig

    config = AtlasConfig(opening_share=0.09)
    moves = {side: board_config(config, Rules(side)).opening_moves for side in (2, 3, 6, 10)}
    assert moves == {2: 1, 3: 2, 6: 8, 10: 24}
    assert board_config(config, Rules(6)).opening_share == 0.0
    assert board_config(AtlasConfig(opening_share=0.01), Rules(2)).opening_moves == 1
    assert board_config(AtlasConfig(opening_moves=3), Rules(9)).opening_moves == 3
    assert board_config(AtlasConfig(opening_share=0.0), Rules(9)).opening_moves == 0
    assert AtlasConfig().opening_share == 0.09  # the default: varied openings, no noise after
    assert atlas_agent(Rules(6), exact_model(), SearchConfig(),
                       AtlasConfig()).temperature_moves == 8
    model = exact_model()
    shared = atlas_config(tmp_path, variants=["komi/standard"], opening_share=0.09)
    record = run_atlas(shared, lambda *track: model, progress=False,
                       log=lambda line: None)["records"]["side2-komi-standard"]
    assert record["settings"]["atlas"]["opening_moves"] == 1
    assert "opening_share" not in record["settings"]["atlas"]
    lines = []
    fixed = dataclasses.replace(shared, opening_share=0.0, opening_moves=1)
    run_atlas(fixed, lambda *track: model, progress=False, log=lines.append)
    assert "already measured" in lines[-1]
    for bad in ({"opening_share": -0.1}, {"opening_share": 1.0}):
        with pytest.raises(ValueError, match="opening"):
            AtlasConfig(**bad)


def test_workers_measure_the_same_records_in_parallel(tmp_path):
    """atlas.workers 2 measures the tracks in two forked processes: every record is the one
    a single process writes (bar the seconds), the file is whole, and a rerun keeps them."""
    model = exact_model()
    variants = FAST_VARIANTS + ["komi/quadratic"]
    cache = str(tmp_path / "cache.json")  # one solve: its report (and seconds) shared
    alone = run_atlas(atlas_config(tmp_path / "one", variants=variants, check_simulations=4,
                                   solver_cache=cache), lambda *track: model,
                      progress=False, log=lambda line: None)["records"]
    lines = []
    config = atlas_config(tmp_path / "two", variants=variants, check_simulations=4,
                          solver_cache=cache, workers=2)
    both = run_atlas(config, lambda *track: model, progress=False, log=lines.append)["records"]
    assert sorted(both) == sorted(alone) and len(both) == len(variants)
    for name, record in alone.items():
        assert {**record, "seconds": 0} == {**both[name], "seconds": 0}, name
        assert record["status"] == "measured" and record["fingerprint"]
    assert sum("[atlas]" in line for line in lines) == len(variants)
    assert load_atlas(config.output)["records"] == both
    lines.clear()
    run_atlas(config, lambda *track: model, progress=False, log=lines.append)
    assert all("already measured" in line for line in lines) and len(lines) == len(variants)
    with pytest.raises(ValueError, match="workers"):
        AtlasConfig(workers=0)


def test_a_failing_track_stops_every_worker_and_keeps_the_finished_ones(tmp_path):
    """An error in one track surfaces in the command and stops the other workers at once;
    every record in the file is whole: measured, or not yet (pending)."""
    import multiprocessing

    solver = exact_model()

    def evaluator(rules):
        if rules.scoring.name.lower() == "quadratic":
            raise RuntimeError("this track's evaluator fails")
        return solver.evaluator(rules)

    model = AtlasModel("flaky", "2" * 64, evaluator)
    config = atlas_config(tmp_path, variants=FAST_VARIANTS + ["komi/quadratic"], workers=2)
    with pytest.raises(RuntimeError, match="evaluator fails"):
        run_atlas(config, lambda *track: model, progress=False, log=lambda line: None)
    assert multiprocessing.active_children() == []  # no worker left running
    records = load_atlas(config.output)["records"]
    assert records["side2-komi-quadratic"]["status"] == "pending"
    assert {record["status"] for record in records.values()} <= {"measured", "pending"}
    for record in records.values():
        assert (record["status"] == "measured") == (record.get("fingerprint") is not None)


def test_workers_without_fork_are_refused_in_one_line(tmp_path, monkeypatch):
    import multiprocessing

    from catena_zero.komi.atlas import WorkersUnavailable

    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    config = atlas_config(tmp_path, variants=["komi/standard", "double/standard"], workers=2)
    with pytest.raises(WorkersUnavailable, match="atlas.workers=2 needs the fork start method"):
        run_atlas(config, lambda *track: exact_model(), progress=False, log=lambda line: None)
    records = load_atlas(config.output)["records"]  # the exact values only: nothing measured
    assert {record["status"] for record in records.values()} == {"pending"}
    one = dataclasses.replace(config, variants=["komi/standard"])  # one track: no fork needed
    assert run_atlas(one, lambda *track: exact_model(), progress=False, log=lambda line: None)


def test_nokomi_games_draw_their_opening_after_the_measured_stone(monkeypatch):
    """nokomi's games start from the stone being measured, which the agent did not choose:
    it still draws its k opening moves after it (2 moves into the game on side 2)."""
    from catena_zero.komi.atlas import tracks
    from catena_zero.mcts import SearchConfig
    from catena_zero.rules import GameType

    seen = {}

    def first_stones(rules, agent, *rest):
        seen["nokomi"] = agent.temperature_moves
        return {}

    def komi_balance(rules, agent, *rest):
        seen["komi"] = agent.temperature_moves
        return {}

    monkeypatch.setattr(tracks, "first_stones", first_stones)
    monkeypatch.setattr(tracks, "komi_balance", komi_balance)
    model = exact_model()
    tracks.measure_track(Rules(2, game_type=GameType.NOKOMI), model, SearchConfig(),
                        AtlasConfig(), None)
    tracks.measure_track(Rules(2), model, SearchConfig(), AtlasConfig(), None)
    assert seen == {"nokomi": 2, "komi": 1}
    noisy = AtlasConfig(opening_share=0.0)
    assert tracks.atlas_agent(Rules(2), model, SearchConfig(), noisy,
                             placed_moves=1).temperature_moves == 0


def test_exact_only_atlas_and_no_model_tracks(tmp_path):
    config = atlas_config(tmp_path, variants=["komi/standard", "nokomi/longest"])
    document = run_atlas(config, None, progress=False, log=lambda line: None)
    record = document["records"]["side2-komi-standard"]
    assert record["status"] == "pending" and record["estimate"] is None
    assert record["exact"] == 2.5 and record["exact_report"]["positions"] > 0
    assert document["status"] == "2 tracks: 2 pending; 2 with exact values"
    lines: list[str] = []
    document = run_atlas(atlas_config(tmp_path, sides=[2, 4], variants=["komi/standard"]),
                         lambda *track: None, progress=False, log=lines.append)
    assert document["records"]["side4-komi-standard"]["status"] == "no model"
    assert document["records"]["side2-komi-standard"]["exact"] == 2.5  # kept
    table = markdown_table(document)
    assert "| 2 | komi/standard | no model |" in table and "| 4 | komi/standard |" in table
    written = write_report(document, tmp_path)
    assert all(path.stat().st_size > 0 for path in written)


def test_another_format_version_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "atlas.json"
    path.write_text(json.dumps({"format_version": ATLAS_FORMAT_VERSION + 1, "records": {}}))
    before = path.read_text()
    with pytest.raises(AtlasError, match="format_version"):
        run_atlas(atlas_config(tmp_path), None, progress=False)
    assert path.read_text() == before


def test_bad_settings_name_the_key():
    with pytest.raises(ValueError, match="atlas.variants"):
        AtlasConfig(variants=["komi/fast"])
    with pytest.raises(ValueError, match="atlas.sides"):
        AtlasConfig(sides=[11])
    with pytest.raises(ValueError, match="exact_sides"):
        AtlasConfig(exact_sides=[4])


@pytest.mark.slow
def test_on_side_2_all_nine_variants_agree_with_the_solver(tmp_path):
    model = exact_model()
    records = run_atlas(atlas_config(tmp_path), lambda *track: model, progress=False,
                        log=lambda line: None)["records"]
    assert len(records) == 9
    assert all(record["exact_agrees"] for record in records.values())
    assert records["side2-komi-quadratic"]["exact"] == 8.5


@pytest.mark.slow
def test_side_3_komi_standard_interval_holds_the_exact_fair_komi(tmp_path):
    model = exact_model()
    config = atlas_config(tmp_path, sides=[3], variants=["komi/standard"])
    record = run_atlas(config, lambda *track: model, progress=False,
                       log=lambda line: None)["records"]["side3-komi-standard"]
    assert record["exact"] == 10.5
    assert record["interval"][0] <= 10.5 <= record["interval"][1]
