"""benchmarks/general_targets.py: the targets of a general network, recorded and resumable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from benchmarks import general_targets
from catena_zero.export.ratings import elo_from_record, read_ratings
from catena_zero.play.bundled import bundled_model_path
from catena_zero.play.model_player import PlayerConfig
from catena_zero.rules import Track

torch.set_num_threads(1)


def test_every_target_is_listed_once_with_its_track() -> None:
    names = [target.name for target in general_targets.targets()]
    assert len(names) == len(set(names)) == 3 + 6 + 1 + 2 + 18 + 1 + 4 + 1
    assert {"side6-uct1000", "side10-uct200", "side4-champion", "side3-optimal-komi11",
            "variant-side6-double-quadratic", "side6-transfer"} <= set(names)
    chosen = general_targets.select(general_targets.targets(), "side6-*,side4-champion")
    assert [target.name for target in chosen] == ["side6-greedy", "side6-uct200",
                                                  "side6-uct1000", "side4-champion",
                                                  "side6-transfer", "side6-uct3000"]
    # The anchors added last leave the seeds (the index in a full run) of the others as
    # they were.
    assert names[-6:] == ["side6-transfer", "side4-uct200", "side4-uct1000", "side5-uct200",
                          "side5-uct1000", "side6-uct3000"]
    with pytest.raises(ValueError, match="matches no match name"):
        general_targets.select(general_targets.targets(), "side9-*")


def test_a_match_is_recorded_then_resumed(tmp_path: Path, capsys) -> None:
    out = tmp_path / "targets.json"
    common = [f"model={bundled_model_path(4)}", "games=2", "simulations=1",
              f"--json={out}", "--komi", "4/komi/standard=5"]
    assert general_targets.main([*common, "--only", "variant-side4-komi-standard"]) == 0
    report = json.loads(out.read_text())
    (record,) = report["matches"].values()
    assert record["komi"] == 5 and record["komi_source"] == "given"
    result = record["result"]
    assert result["num_games"] == 2 and 0 <= result["interval"][0] <= result["score"]
    assert "| variant-side4-komi-standard | 4/komi/standard | 5 (given)" in (
        out.with_suffix(".md").read_text())
    assert general_targets.main([*common, "--resume", "--only",
                                 "variant-side4-komi-standard,variant-side4-nokomi-standard"]) == 0
    printed = capsys.readouterr().out
    assert "variant-side4-komi-standard: recorded, skipped" in printed and "total" in printed
    resumed = json.loads(out.read_text())["matches"]
    assert resumed["variant-side4-komi-standard"] == record
    assert resumed["variant-side4-nokomi-standard"]["komi_source"] == "the variant's only komi"
    # Other settings do not mix with a recorded report.
    assert general_targets.main([*common[:-2], "--resume"]) == 2
    assert "other settings" in capsys.readouterr().err
    assert report["settings"]["exact_endgame_cells"] == PlayerConfig.exact_endgame_cells
    assert general_targets.main([*common, "--resume", "--exact-endgame-cells=4"]) == 2
    assert "other settings" in capsys.readouterr().err  # endgame solving is a setting too
    with pytest.raises(SystemExit):
        general_targets.main([*common, "--exact-endgame-cells=-1"])
    assert "--exact-endgame-cells must be >= 0" in capsys.readouterr().err


def test_search_changes_are_applied_recorded_and_checked(tmp_path: Path, capsys,
                                                        monkeypatch) -> None:
    out = tmp_path / "targets.json"
    common = [f"model={bundled_model_path(4)}", "games=2", "simulations=3", f"--json={out}",
              "--only", "variant-side4-nokomi-standard"]
    searches = []
    original = general_targets.AgentFactory

    def recording_factory(rules, search, *args, **kwargs):
        searches.append(search)
        return original(rules, search, *args, **kwargs)

    monkeypatch.setattr(general_targets, "AgentFactory", recording_factory)
    assert general_targets.main([*common, "--search", "algorithm=puct",
                                 "--search", "c_puct=2.5"]) == 0
    (search,) = searches
    assert (search.algorithm, search.c_puct, search.num_simulations) == ("puct", 2.5, 3)
    assert search.dirichlet_fraction == 0 and search.leaves_per_call == 1  # the player's rest
    assert json.loads(out.read_text())["settings"]["search"] == ["algorithm=puct", "c_puct=2.5"]
    # A report of another search does not resume; one without --search records no key.
    assert general_targets.main([*common, "--resume", "--search", "algorithm=gumbel"]) == 2
    assert "other settings" in capsys.readouterr().err
    assert general_targets.main([*common, f"--json={tmp_path / 'plain.json'}"]) == 0
    assert "search" not in json.loads((tmp_path / "plain.json").read_text())["settings"]
    # An unknown field stops at the argument parser; a bad value names the field.
    with pytest.raises(SystemExit):
        general_targets.main([*common, "--search", "c_puctt=2"])
    assert "--search 'c_puctt=2': expected FIELD=VALUE" in capsys.readouterr().err
    assert general_targets.main([*common, "--search", "c_puct=-1"]) == 2
    assert capsys.readouterr().err.strip() == (
        "general_targets: SearchConfig.c_puct=-1; must be >= 0")


def test_the_transfer_match_takes_another_single_side_net(tmp_path: Path, capsys) -> None:
    opponent = bundled_model_path(4)  # any model file stands in for a side-6-only net
    transfer = {target.name: target for target in general_targets.targets(f"model:{opponent}")}
    assert transfer["side6-transfer"].opponent == f"model:{opponent}"
    default = {target.name: target for target in general_targets.targets()}
    assert default["side6-transfer"].opponent == f"model:{bundled_model_path(6)}"
    out = tmp_path / "targets.json"
    common = [f"model={bundled_model_path(4)}", "games=2", "simulations=1", f"--json={out}",
              "--komi", "6/komi/standard=6", "--only", "side6-transfer"]
    assert general_targets.main(common) == 0
    bundled = json.loads(out.read_text())["matches"]["side6-transfer"]
    assert bundled["opponent"] == f"model:{bundled_model_path(6)}"
    # Resumed against another opponent, the recorded match is not kept but played again.
    assert general_targets.main([*common, "--resume", f"--transfer-opponent={opponent}"]) == 0
    assert "recorded, skipped" not in capsys.readouterr().out
    replayed = json.loads(out.read_text())["matches"]["side6-transfer"]
    assert replayed["opponent"] == f"model:{opponent}" and replayed["result"]["num_games"] == 2
    assert general_targets.main([*common, "--transfer-opponent", str(tmp_path / "absent.pt")]) == 2
    error = capsys.readouterr().err
    assert "--transfer-opponent" in error and "no such file" in error


def test_greedy_matches_rate_their_tracks(tmp_path: Path, capsys) -> None:
    out, ratings_file = tmp_path / "targets.json", tmp_path / "ratings.json"
    common = [f"model={bundled_model_path(4)}", "games=2", "simulations=1", f"--json={out}"]
    assert general_targets.main([*common, "--only", "variant-side4-nokomi-standard",
                                 f"--ratings-out={ratings_file}"]) == 0
    ratings = read_ratings(ratings_file)
    (record,) = json.loads(out.read_text())["matches"].values()
    result = record["result"]
    assert ratings.elos == {Track(4, "nokomi", "standard"): pytest.approx(elo_from_record(
        result["wins"], result["draws"], result["losses"]))}
    assert ratings.reference.startswith("one-ply greedy player = 0 (2-game matches, "
                                        "1 simulations a move, each track at its fair komi")
    assert "Elo against greedy on 1 tracks" in capsys.readouterr().out


def test_a_tracks_greedy_matches_are_summed_and_others_ignored() -> None:
    def match(track: str, opponent: str, wins: int, draws: int, losses: int) -> dict:
        return {"track": track, "opponent": opponent,
                "result": {"wins": wins, "draws": draws, "losses": losses}}

    report = {"settings": {"games": 10, "simulations": 8, "komi": {"6/komi/standard": 5}},
              "matches": {"side6-greedy": match("6/komi/standard", "greedy", 9, 0, 1),
                          "variant-side6-komi-standard": match("6/komi/standard", "greedy",
                                                               7, 2, 1),
                          "side6-uct200": match("6/komi/standard", "uct:200", 0, 0, 10),
                          "side3-optimal-komi10": {"track": "3/komi/standard",
                                                   "opponent": "self", "optimality": {}}}}
    ratings = general_targets.greedy_ratings(report)
    assert ratings.elos == {Track(6, "komi", "standard"): elo_from_record(16, 2, 2)}
    assert "komi set for 6/komi/standard" in ratings.reference
    report["matches"] = {"side6-uct200": report["matches"]["side6-uct200"]}
    assert general_targets.greedy_ratings(report).elos == {}


def test_the_report_names_each_player_by_its_file_hash_and_search(tmp_path: Path,
                                                                 capsys) -> None:
    import hashlib
    import shutil

    out = tmp_path / "targets.json"
    model = bundled_model_path(4)
    common = [f"model={model}", "games=2", "simulations=2", f"--json={out}",
              "--only", "variant-side4-komi-standard"]
    assert general_targets.main(common) == 0
    report = json.loads(out.read_text())
    player = report["model_player"]
    assert player["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert player["spec"] == f"model:{model}"
    assert player["search"]["num_simulations"] == 2 and player["search"]["leaves_per_call"] == 1
    (record,) = report["matches"].values()
    assert record["opponent_player"] == {"spec": "greedy"}
    # A report resumed with another model file (same settings) is refused, naming the hash.
    other = tmp_path / "other.pt"
    shutil.copyfile(bundled_model_path(6), other)
    assert general_targets.main([f"model={other}", *common[1:], "--resume"]) == 2
    assert "recorded with the model of SHA-256" in capsys.readouterr().err


def test_a_report_of_the_file_before_a_rewrite_that_kept_its_weights_resumes(
        tmp_path: Path, monkeypatch) -> None:
    """A bundled file rewritten with the same metadata and weights (its earlier SHA-256 in
    catena_zero.data.file_history) resumes the report its earlier bytes began."""
    from catena_zero.data import file_history

    settings = {"games": 2, "simulations": 2, "seed": 0, "komi": {}}
    out = tmp_path / "targets.json"
    out.write_text(json.dumps({
        "format": general_targets.FORMAT, "format_version": general_targets.FORMAT_VERSION,
        "model_player": {"sha256": "1" * 64}, "settings": settings,
        "matches": {"side6-uct200": {"opponent": "uct:200"}}}))
    with pytest.raises(ValueError, match="recorded with the model of SHA-256 1111"):
        general_targets.load_resumed(out, settings, "2" * 64)
    monkeypatch.setitem(file_history.EARLIER_SHA256, "2" * 64, ("1" * 64,))
    assert general_targets.load_resumed(out, settings, "2" * 64) == {
        "side6-uct200": {"opponent": "uct:200"}}
