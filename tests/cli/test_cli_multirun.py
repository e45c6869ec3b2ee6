"""`-m` / `--multirun`: a Hydra sweep runs one composed job per combination, in turn."""

from __future__ import annotations

import json

import pytest

from catena_zero.cli.main import main
from catena_zero.cli.multirun import expand
from catena_zero.komi.exact import load_cache


def test_a_sweep_expands_to_every_combination_in_order() -> None:
    jobs = expand(["side=2,3", "agent=greedy,uct:200", "out_dir=runs/k"])
    assert [job.label for job in jobs] == ["job0-side_2-agent_greedy",
                                           "job1-side_2-agent_uct_200",
                                           "job2-side_3-agent_greedy",
                                           "job3-side_3-agent_uct_200"]
    assert jobs[1].overrides[2] == "out_dir=runs/k"
    assert len(expand(["seed=range(1,4)"])) == 3 and len(expand(["seed=1"])) == 1


@pytest.mark.slow  # runs or composes several jobs: 10-40 s on a shared machine
def test_the_ambiguous_sweep_that_hydra_points_to_multirun_runs_with_it(tmp_path,
                                                                        capsys) -> None:
    cache = tmp_path / "cache.json"
    assert main(["solve", "--side", "2,3", f"cache_path={cache}"]) == 2
    assert "--multirun" in capsys.readouterr().err
    assert main(["solve", "-m", "--side", "2", "rules=komi_standard,nokomi_standard",
                 f"cache_path={cache}"]) == 0
    printed = capsys.readouterr().out
    assert "[multirun 1/2] job0-rules_komi_standard" in printed
    assert "[multirun 2/2] job1-rules_nokomi_standard" in printed
    assert {"side2-komi-standard", "side2-nokomi-standard"} <= set(load_cache(cache))


@pytest.mark.slow  # runs or composes several jobs: 10-40 s on a shared machine
def test_each_arena_job_writes_its_own_results(tmp_path, capsys) -> None:
    out = tmp_path / "match.json"
    assert main(["arena", "--multirun", "--side", "2", "arena.agent_a=greedy",
                 "arena.agent_b=random,greedy", "arena.num_games=2",
                 f"arena.results_json={out}"]) == 0
    for label, opponent in (("job0-arena.agent_b_random", "random"),
                            ("job1-arena.agent_b_greedy", "greedy")):
        result = json.loads((tmp_path / f"match-{label}.json").read_text())
        assert result["name_b"] == opponent
    assert not out.exists()


@pytest.mark.slow  # runs or composes several jobs: 10-40 s on a shared machine
def test_each_training_job_gets_its_own_run_dir(tmp_path, capsys) -> None:
    assert main(["train", "-m", "preset=tiny", "seed=1,2", f"run_dir={tmp_path}",
                 "--cfg"]) == 0
    printed = capsys.readouterr().out
    assert f"run_dir: {tmp_path}/job0-seed_1" in printed
    assert f"run_dir: {tmp_path}/job1-seed_2" in printed
    assert main(["train", "-m", "preset=tiny", "seed=1,2", "--cfg"]) == 0
    assert "run_dir: runs/multirun-" in capsys.readouterr().out


def test_a_bad_value_in_any_job_stops_the_sweep_before_anything_runs(tmp_path,
                                                                     capsys) -> None:
    assert main(["komi", "-m", "--side", "2", "agent=solver", f"out_dir={tmp_path}",
                 "sweep.games_per_komi=1,many"]) == 2
    error = capsys.readouterr().err
    assert "job1-sweep.games_per_komi_many" in error and "games_per_komi" in error
    assert not any(tmp_path.iterdir())


def test_interactive_subcommands_refuse_a_sweep(capsys) -> None:
    assert main(["gtp", "-m", "--side", "2,3"]) == 2
    assert "does not take -m/--multirun" in capsys.readouterr().err
