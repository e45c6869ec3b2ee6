"""benchmarks/learning_race.py: recipes, train commands, the results page, bad input, and one
real tiny race end to end."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import learning_race, race_page
from benchmarks.learning_race import MatchRecord, Recipe, RunProgress

ROOT = Path(__file__).resolve().parents[2]
# The core the tests' trainings run on: the highest this process may use (the race's default).
CORE = max(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
PIN = ["taskset", "-c", str(CORE)] if shutil.which("taskset") else []


def test_a_recipe_is_a_name_and_its_overrides_with_list_values_kept_whole() -> None:
    assert learning_race.parse_recipe("big=network.blocks=6,network.channels=48") == Recipe(
        "big", ("network.blocks=6", "network.channels=48"))
    assert learning_race.parse_recipe(
        "two=mix.tracks=[4/komi/standard,6/komi/standard], network=b2c24,+train.x='a,b'"
    ) == Recipe("two", ("mix.tracks=[4/komi/standard,6/komi/standard]", "network=b2c24",
                        "+train.x='a,b'"))
    assert learning_race.parse_recipe("plain=") == Recipe("plain", ())
    assert learning_race.parse_recipe("drop=~probe") == Recipe("drop", ("~probe",))


def test_recipes_come_from_a_yaml_file_too(tmp_path: Path) -> None:
    recipes = tmp_path / "race.yaml"
    recipes.write_text("small: [network=b4c32, 'mix.tracks=[6/komi/standard]']\n"
                       "big: network.blocks=6,network.channels=48\nbase:\n")
    assert learning_race.read_recipes_file(recipes) == [
        Recipe("small", ("network=b4c32", "mix.tracks=[6/komi/standard]")),
        Recipe("big", ("network.blocks=6", "network.channels=48")), Recipe("base", ())]


def test_the_train_command_pins_the_core_and_puts_the_recipe_last() -> None:
    recipe = Recipe("big", ("network.blocks=6", "network.channels=48"))
    base = learning_race.default_base("6/komi/standard")
    assert base == ["device=cpu", "progress=false", "gating.enabled=false", "probe.every=0",
                    "mix.tracks=[6/komi/standard]", "mix.shares=[]", "mix.final_shares=[]",
                    "mix.schedule_iterations=0"]
    command = learning_race.train_command(recipe, base, Path("runs/race-x/big"), 7, 0.5, 1)
    assert command == ["taskset", "-c", "1", sys.executable, "-c",
                       "import sys; from catena_zero.cli.main import main; sys.exit(main())",
                       "train", "run_dir=runs/race-x/big", "seed=7", "max_minutes=0.5",
                       "iterations=0", "runtime=inline", "threads=1", *base,
                       "network.blocks=6", "network.channels=48"]
    assert learning_race.train_command(recipe, [], Path("r"), 0, 30.0, None)[:2] == [
        sys.executable, "-c"]


def test_a_dry_run_prints_every_command_and_match(capsys) -> None:
    assert learning_race.main(["small=network=b4c32", "big=network.blocks=6,network.channels=48",
                               "--seed", "3", "--minutes", "20", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(" ".join([*PIN, sys.executable, "-c"]))
    assert lines[0].endswith("train run_dir=runs/race-small-vs-big/small seed=3 max_minutes=20 "
                             "iterations=0 runtime=inline threads=1 device=cpu progress=false "
                             "gating.enabled=false probe.every=0 'mix.tracks=[6/komi/standard]' "
                             "'mix.shares=[]' 'mix.final_shares=[]' mix.schedule_iterations=0 "
                             "network=b4c32")
    assert lines[1].endswith("run_dir=runs/race-small-vs-big/big seed=3 max_minutes=20 "
                             "iterations=0 runtime=inline threads=1 device=cpu progress=false "
                             "gating.enabled=false probe.every=0 'mix.tracks=[6/komi/standard]' "
                             "'mix.shares=[]' 'mix.final_shares=[]' mix.schedule_iterations=0 "
                             "network.blocks=6 network.channels=48")
    assert lines[2] == ("then 200-game matches on 6/komi/standard: small vs big, small vs "
                        "greedy, small vs uct:200, small vs uct:1000, big vs greedy, big vs "
                        "uct:200, big vs uct:1000")
    # --base replaces the default base; --track and --out-dir show in the commands
    assert learning_race.main(["a=", "b=network=b2c24", "--base", "preset=tiny,side=4",
                               "--track", "4/komi/standard", "--out-dir", "somewhere",
                               "--opponents", "random", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("run_dir=somewhere/a seed=0 max_minutes=10 iterations=0 "
                             "runtime=inline threads=1 preset=tiny side=4")
    assert lines[1].endswith("threads=1 preset=tiny side=4 network=b2c24")
    assert lines[2] == "then 200-game matches on 4/komi/standard: a vs b, a vs random, b vs random"


SETTINGS = {"race": "2 recipes trained from scratch for 30 minutes each, seed 0.",
            "track": "6/komi/standard", "komi": "5 (model file 4.68; reference general.pt)",
            "matches": "200 games a match.", "commit": "`abc1234`",
            "machine": "Example CPU, 2 cores; AMX: yes, AVX-512: yes",
            "pinning": "the recipes trained one after another, then the matches, on core 1",
            "reproduce": "python -m benchmarks.learning_race big=... small= --minutes 30"}


def test_the_page_records_recipes_runs_matches_and_the_verdict() -> None:
    recipes = [Recipe("big", ("network.blocks=6", "network.channels=48")), Recipe("small", ())]
    progress = {"big": RunProgress("runs/race/big/checkpoints/c.pt", 320, 10, 1280, 45000, 30.4,
                                   22.4, 8.0),
                "small": RunProgress("runs/race/small/checkpoints/c.pt", 512, 16, 2048, 70000,
                                     None)}
    records = [MatchRecord("big", "small", 120, 10, 70), MatchRecord("big", "greedy", 190, 0, 10),
               MatchRecord("small", "greedy", 150, 0, 50)]
    commands = {"big": "taskset -c 1 python -c ... train run_dir=runs/race/big network.blocks=6",
                "small": "taskset -c 1 python -c ... train run_dir=runs/race/small"}
    page = learning_race.render_page("width", "2026-12-03", SETTINGS, recipes, ["device=cpu"],
                                     commands, progress, records)
    verdict = ("big beat small head to head (big's score 0.625 [0.556, 0.689] over 200 games); "
               "the interval excludes 50%.")
    assert page.startswith(f"# Learning race width\n\n**Verdict:** {verdict}\n\n")
    for line in ["- **Race:** 2 recipes trained from scratch for 30 minutes each, seed 0.",
                 "- **Matches:** on 6/komi/standard at komi 5 (model file 4.68; reference "
                 "general.pt); 200 games a match.",
                 "- **When, code:** 2026-12-03, commit `abc1234`.",
                 "- **Machine:** Example CPU, 2 cores; AMX: yes, AVX-512: yes; the recipes "
                 "trained one after another, then the matches, on core 1.",
                 "- **Reproduce:** `python -m benchmarks.learning_race big=... small= "
                 "--minutes 30`",
                 "| big | `network.blocks=6 network.channels=48` | 30.4 | 22.4 / 8.0 | 320 "
                 "| 1.500 | 10 | 1280 | 45000 |",
                 "| small | `(the base alone)` | n/a | n/a | 512 | n/a | 16 | 2048 | 70000 |",
                 *commands.values(),
                 "| big | small | 200 | 120-10-70 | 0.625 | [0.556, 0.689] |",
                 "| big | greedy | 200 | 190-0-10 | 0.950 | [0.910, 0.973] |",
                 "| small | greedy | 200 | 150-0-50 | 0.750 | [0.686, 0.805] |"]:
        assert line in page.splitlines(), line
    assert "Base overrides of every recipe: `device=cpu`." in page


def test_a_reused_run_from_a_machine_of_another_speed_is_flagged_on_the_page() -> None:
    recipes = [Recipe("base", ()), Recipe("cheap", ("selfplay.full_simulations=16",))]
    records = [MatchRecord("base", "cheap", 115, 0, 85)]

    def page(base_train_minutes: float, reused: set[str]) -> str:
        progress = {"base": RunProgress("b.pt", 6000, 184, 23552, 302538, 60.3, 42.3,
                                        base_train_minutes),
                    "cheap": RunProgress("c.pt", 5800, 182, 23296, 283293, 60.1, 32.2, 29.0)}
        return learning_race.render_page("sims", "2026-12-05", SETTINGS, recipes, [], {},
                                         progress, records, reused=reused)

    # 0.18 s a step against the fresh run's 0.30: the reused run had a faster machine.
    flagged = page(18.0, {"base"})
    assert ("**Machine speed:** a reused run's training step took another time than this "
            "race's runs of the same net and batch: base 0.180 s against 0.300 s (x0.60). "
            "The machine then ran at another speed") in flagged
    assert flagged.index("**Machine speed:**") < flagged.index("## Matches")
    assert "| base (reused) | `(the base alone)` | 60.3 | 42.3 / 18.0 | 6000 | 0.180 |" in flagged
    assert "Machine speed" not in page(29.0, {"base"})  # the same speed: nothing to say
    assert "Machine speed" not in page(18.0, set())  # nothing reused: recipes may differ
    no_metrics = {"base": RunProgress("b.pt", 1, 1, 1, 1, 1.0),
                  "cheap": RunProgress("c.pt", 1, 1, 1, 1, 1.0)}
    assert race_page.speed_check(recipes, no_metrics, {"base"}) is None  # n/a, no warning


def test_a_bigger_net_is_not_read_as_a_slower_machine() -> None:
    """A reused run is compared only with fresh runs of the same net and batch: a 6-block
    net's slower step says nothing about the machine."""
    def progress(base_train_minutes: float) -> dict[str, RunProgress]:
        return {"base": RunProgress("b.pt", 7360, 231, 1, 1, 60.5, 35.3, base_train_minutes),
                "deep": RunProgress("d.pt", 6848, 215, 1, 1, 60.2, 32.5, 27.4)}

    deep = [Recipe("base", ()), Recipe("deep", ("network.blocks=6",))]
    assert race_page.speed_check(deep, progress(24.9), {"base"}) is None
    wide_batch = [Recipe("base", ()), Recipe("big", ("train.batch_size=256",))]
    assert race_page.speed_check(wide_batch, progress(24.9), {"base"}) is None
    # the same net again (a search change): a 0.84x step is the machine's, and flagged
    same_net = [Recipe("base", ()), Recipe("deep", ("selfplay.full_simulations=8",))]
    assert "base 0.203 s against 0.240 s (x0.85)" in race_page.speed_check(
        same_net, progress(24.9), {"base"})
    # a reused run of the bigger net against a fresh one of the same net, overrides reordered
    both = [Recipe("base", ("network.channels=48", "network.blocks=6")),
            Recipe("deep", ("network.blocks=6", "network.channels=48", "mcts.c_visit=50"))]
    assert race_page.speed_check(both, progress(24.9), {"base"}) is not None


def test_the_time_split_sums_the_iteration_records(tmp_path) -> None:
    lines = [{"kind": "iteration", "values": {"time/iteration_seconds": 90.0,
                                              "train/seconds": 30.0}},
             {"kind": "iteration", "values": {"time/iteration_seconds": 30.0}},
             {"kind": "gate", "values": {"gate/side6-komi-standard/score": 0.5}}]
    text = "".join(json.dumps({"format": "catena_zero.run_metrics", "format_version": 1,
                               "iteration": number + 1, "step": 32 * number,
                               "time": 1.0e9 + number, **line}) + "\n"
                   for number, line in enumerate(lines))
    (tmp_path / "metrics.jsonl").write_text(text + "{not json\n")
    assert learning_race.time_split(tmp_path) == (1.5, 0.5)
    assert learning_race.time_split(tmp_path / "missing") == (None, None)


def test_the_verdict_names_the_winner_and_whether_the_interval_excludes_even() -> None:
    names = ["a", "b"]
    assert learning_race.verdict([MatchRecord("a", "b", 90, 0, 110)], names) == (
        "no winner between a and b (a's score 0.450 [0.383, 0.519] over 200 games); b ahead, "
        "but the interval holds 50%.")
    assert learning_race.verdict([MatchRecord("a", "b", 45, 10, 45),
                                  MatchRecord("a", "greedy", 100, 0, 0)], names) == (
        "a and b tied head to head (a's score 0.500 [0.404, 0.596] over 100 games).")
    three = [MatchRecord("a", "b", 105, 0, 95), MatchRecord("a", "c", 190, 0, 10),
             MatchRecord("b", "c", 150, 0, 50)]
    assert learning_race.verdict(three, ["a", "b", "c"]).count("'s score") == 3


def test_the_verdict_opens_with_the_outside_players() -> None:
    records = [MatchRecord("a", "b", 120, 0, 80), MatchRecord("a", "uct:1000", 60, 0, 140),
               MatchRecord("b", "uct:1000", 40, 0, 160), MatchRecord("a", "uct:200", 150, 0, 50),
               MatchRecord("b", "uct:200", 146, 0, 54), MatchRecord("a", "greedy", 200, 0, 0)]
    verdict = learning_race.verdict(records, ["a", "b"])
    assert verdict == (
        "against uct:200: a 0.750 [0.686, 0.805], b 0.730 [0.665, 0.787]; a ahead, the "
        "intervals overlap; against uct:1000: a 0.300 [0.241, 0.367], b 0.200 [0.150, 0.261]; "
        "a ahead, the intervals overlap. Head to head: a beat b head to head (a's score 0.600 "
        "[0.531, 0.665] over 200 games); the interval excludes 50%.")
    clear = [MatchRecord("a", "uct:200", 190, 0, 10), MatchRecord("b", "uct:200", 100, 0, 100)]
    assert learning_race.verdict(clear, ["a", "b"]) == (
        "against uct:200: a 0.950 [0.910, 0.973], b 0.500 [0.431, 0.569]; a leads, its interval "
        "above the others'.")


def test_one_recipe_alone_is_measured_against_the_outside_players(capsys) -> None:
    assert learning_race.main(["default=", "--opponents", "uct:200", "--minutes", "60",
                               "--seed", "1", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "train run_dir=runs/race-default/default seed=1 max_minutes=60 " in out[0]
    assert out[1] == "then 200-game matches on 6/komi/standard: default vs uct:200"
    records = [MatchRecord("default", "uct:200", 130, 0, 70)]
    assert learning_race.verdict(records, ["default"]) == (
        "against uct:200: default 0.650 [0.582, 0.713].")


@pytest.mark.parametrize(("arguments", "message"), [
    (["small=x", "big="], "recipe small: 'x' is not a Hydra override key=value"),
    (["small", "big="], "recipe 'small': expected NAME=override1,override2"),
    (["=network=b2c24", "big="], "expected NAME=override1,override2"),
    (["a=", "a=network=b2c24"], "recipe name 'a' is given more than once"),
    (["a=", "--opponents", ""], "a race needs two recipes, or one measured against "
     "--opponents (got 1 recipes, 0 opponents)"),
    ([], "(got 0 recipes, 3 opponents)"),
    (["a=seed=3", "b="], "recipe a: seed is set by the race itself"),
    (["a=mix.tracks=[4/komi/standard", "b="], "unbalanced brackets"),
    (["a=", "b=", "--base", "max_minutes=3"], "--base: max_minutes is set by the race itself"),
    (["a=", "b=", "--games", "3"], "--games must be an even number >= 2, got 3"),
    (["a=", "b=", "--minutes", "0"], "--minutes must be > 0, got 0.0"),
    (["a=", "b=", "--gmes", "3"], "unrecognized arguments: --gmes 3"),
    (["a=", "b=", "--track", "6/komi/nothing"], "nothing"),
    (["a=", "b=", "--komi", "99"], "komi 99 is outside the range"),
    (["a=", "b=", "--opponents", "greedy,uct:x"], "uct:N"),
    (["greedy=", "b="], "recipe names ['greedy'] are also --opponents"),
    (["a=", "b=", "--name", "Not_A_Page"], "--name 'Not_A_Page': lower-case letters"),
    (["a=", "b=", "--core", "4096"], "--core 4096: this process may use cores"),
    (["a=", "b=", "--reuse", "c=runs/x"], "--reuse 'c=runs/x': 'c' is not one of the recipes"),
    (["a=", "b=", "--reuse", "a"], "--reuse 'a': expected RECIPE=RUN_DIR"),
    (["a=", "b=", "--reuse", "a=x", "--reuse", "a=y"], "recipe 'a' is given more than once"),
    (["a=", "b=", "--reuse", "a=x", "--reuse", "b=y"], "every recipe is reused"),
])
def test_bad_input_is_one_line_and_exit_2(arguments: list[str], message: str, capsys) -> None:
    assert learning_race.main([*arguments, "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("learning_race: ")
    assert message in captured.err


def test_a_recipes_file_that_is_not_a_mapping_is_refused(tmp_path: Path, capsys) -> None:
    recipes = tmp_path / "race.yaml"
    recipes.write_text("- a=1\n")
    assert learning_race.main(["--recipes-file", str(recipes), "--dry-run"]) == 2
    assert "expected a mapping NAME: [overrides]" in capsys.readouterr().err
    assert learning_race.main(["--recipes-file", str(tmp_path / "absent.yaml")]) == 2
    assert "unreadable" in capsys.readouterr().err


def test_runs_are_neither_overwritten_nor_invented(tmp_path: Path, capsys) -> None:
    common = ["a=", "b=", "--out-dir", str(tmp_path), "--page", str(tmp_path / "page.md")]
    assert learning_race.main([*common, "--skip-train"]) == 2
    error = capsys.readouterr().err
    assert f"{tmp_path / 'a'}: no checkpoint (train it first" in error
    assert "give its --reuse a=RUN_DIR again" in error  # a reused recipe is looked for here
    (tmp_path / "b" / "checkpoints").mkdir(parents=True)
    (tmp_path / "b" / "checkpoints" / "checkpoint-step000000004-iter000001.pt").write_bytes(b"")
    assert learning_race.main(common) == 2
    assert f"{tmp_path / 'b'} already holds checkpoints" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "page.md").exists()


def _earlier_run(tmp_path: Path, recipe: Recipe, minutes: float, core: int | None) -> Path:
    """A finished run of an earlier race: its run dir with a checkpoint, its log beside it."""
    run_dir = tmp_path / "earlier" / recipe.name
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "checkpoints" / "checkpoint-step000000004-iter000001.pt").write_bytes(b"")
    command = learning_race.train_command(recipe, learning_race.default_base("6/komi/standard"),
                                          run_dir, 0, minutes, core)
    (tmp_path / "earlier" / f"{recipe.name}.log").write_text(
        f"$ {shlex.join(command)}\ntrain: ...\n")
    return run_dir


def test_a_run_of_an_earlier_race_is_reused_only_with_the_same_settings(
        tmp_path: Path, capsys) -> None:
    # Trained on another core and into another run dir: still the same recipe.
    earlier = _earlier_run(tmp_path, Recipe("base", ()), 60.0, 0)
    race = ["base=", "spp3=train.samples_per_position=3", "--seed", "0", "--out-dir",
            str(tmp_path / "race")]
    assert learning_race.main([*race, "--minutes", "60", "--reuse", f"base={earlier}",
                               "--dry-run"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"# base: reused from {earlier}"
    assert printed[1].endswith("train.samples_per_position=3") and "race/spp3" in printed[1]
    # Another budget, another seed or another recipe under the same name: refused.
    for changed, message in ((["--minutes", "30"], "without 'max_minutes=30'; with "
                              "'max_minutes=60'"),
                             (["--minutes", "60", "--seed", "1"], "without 'seed=1'; with "
                              "'seed=0'")):
        assert learning_race.main([*race, *changed, "--reuse", f"base={earlier}",
                                   "--dry-run"]) == 2
        error = capsys.readouterr().err
        assert f"--reuse base: {earlier} was trained with other settings" in error
        assert message in error
    assert learning_race.main(["base=network=b2c24", "b=", "--minutes", "60", "--reuse",
                               f"base={earlier}", "--dry-run"]) == 2
    assert "other settings (without 'network=b2c24')" in capsys.readouterr().err
    reordered = tmp_path / "earlier" / "base.log"
    command = shlex.split(reordered.read_text().splitlines()[0][2:])
    command[-1], command[-2] = command[-2], command[-1]
    reordered.write_text(f"$ {shlex.join(command)}\n")
    assert learning_race.main([*race, "--minutes", "60", "--reuse", f"base={earlier}",
                               "--dry-run"]) == 2
    assert "(the same ones in another order)" in capsys.readouterr().err
    # No log, or a log that does not start with the command: refused.
    (tmp_path / "earlier" / "base.log").write_text("train: ...\n")
    assert learning_race.main([*race, "--minutes", "60", "--reuse", f"base={earlier}"]) == 2
    assert "base.log does not start with the command" in capsys.readouterr().err
    (tmp_path / "earlier" / "base.log").unlink()
    assert learning_race.main([*race, "--minutes", "60", "--reuse", f"base={earlier}"]) == 2
    assert "base.log is missing or empty" in capsys.readouterr().err
    # The right settings but no intact checkpoint (an empty file is not one): refused before
    # anything trains, as a run without its summary (stopped early) is.
    other = _earlier_run(tmp_path / "other", Recipe("base", ()), 60.0, None)
    assert learning_race.main([*race, "--minutes", "60", "--reuse", f"base={other}"]) == 2
    assert f"--reuse base: no intact checkpoint in {other / 'checkpoints'}" in \
        capsys.readouterr().err
    assert not (tmp_path / "race").exists()


def test_a_misspelt_key_is_refused_before_any_training(tmp_path: Path, capsys) -> None:
    arguments = ["bad=network.blokcs=6", "good=", "--out-dir", str(tmp_path)]
    assert learning_race.main(arguments) == 2
    error = capsys.readouterr().err
    assert error.startswith("learning_race: recipe bad: ") and "network.blokcs" in error
    assert not (tmp_path / "bad").exists() and not (tmp_path / "good.log").exists()


@pytest.mark.slow
def test_a_tiny_race_end_to_end(tmp_path: Path) -> None:
    page, out_dir = tmp_path / "page.md", tmp_path / "runs"
    command = [sys.executable, "-m", "benchmarks.learning_race", "small=network=b1c16",
               "wide=network=b2c24", "--base",
               "preset=tiny,side=4,gating.enabled=false,probe.every=0,tensorboard=false",
               "--track", "4/komi/standard", "--minutes", "0.1", "--games", "4",
               "--simulations", "2", "--opponents", "greedy,uct:8", "--seed", "5",
               "--name", "tiny", "--out-dir", str(out_dir), "--page", str(page)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"wrote {page}: " in done.stdout
    text = page.read_text()
    assert text.startswith("# Learning race tiny\n\n**Verdict:** ")
    # The bundled general.pt's own side-4 estimate, rounded to a legal komi.
    assert re.search(r"at komi \d+ \(model file \d+\.\d+; reference general\.pt\)", text)
    assert "2 recipes trained from scratch for 0.1 minutes each, seed 5" in text
    for name in ("small", "wide"):
        log_line = (out_dir / f"{name}.log").read_text().splitlines()[0]
        assert log_line.startswith(f"$ {' '.join(PIN)}".rstrip())
        assert log_line[2:] in text.splitlines()  # the page shows the command that ran
        assert f"run_dir={out_dir / name} seed=5 max_minutes=0.1" in log_line
        row = next(line for line in text.splitlines() if line.startswith(f"| {name} | `"))
        steps = int(row.split("|")[4])
        assert steps > 0
    for pairing in ("| small | wide | 4 |", "| small | greedy | 4 |", "| small | uct:8 | 4 |",
                    "| wide | greedy | 4 |", "| wide | uct:8 | 4 |"):
        assert pairing in text
    # The raw file beside the page names every player by its file's hash and search.
    assert "- **Raw matches:** [data/page.json](data/page.json)" in text
    raw = json.loads((tmp_path / "data" / "page.json").read_text())
    assert raw["format"] == "catena_zero.learning_race" and raw["komi"] is not None
    for name in ("small", "wide"):
        player, run = raw["players"][name], raw["runs"][name]
        assert player["file"] == run["checkpoint"]
        assert player["sha256"] == hashlib.sha256(Path(run["checkpoint"]).read_bytes()).hexdigest()
        assert player["search"]["num_simulations"] == 2
    assert raw["players"]["uct:8"]["search"] == {"algorithm": "uct", "playouts": 8}
    pairs = [(match["name_a"], match["name_b"]) for match in raw["matches"]]
    assert pairs == [("small", "wide"), ("small", "greedy"), ("small", "uct:8"),
                     ("wide", "greedy"), ("wide", "uct:8")]
    for match in raw["matches"]:
        black, white = match["a_as_black"], match["a_as_white"]
        assert black["wins"] + white["wins"] == match["wins"]
        assert (f"| {match['name_a']} | {match['name_b']} | 4 | {match['wins']}-"
                f"{match['draws']}-{match['losses']} |") in text
    # Again from the finished runs: the same runs and commands, no training.
    again = subprocess.run([*command, "--skip-train", "--page", str(tmp_path / "again.md")],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "training" not in again.stdout
    assert "# reconstructed" not in (tmp_path / "again.md").read_text()
    # A new race that reuses one of these runs trains only its new recipe.
    third = tmp_path / "third.md"
    reuse = [sys.executable, "-m", "benchmarks.learning_race", "small=network=b1c16",
             "more=network=b1c16,train.samples_per_position=2", "--base",
             "preset=tiny,side=4,gating.enabled=false,probe.every=0,tensorboard=false",
             "--track", "4/komi/standard", "--minutes", "0.1", "--games", "4",
             "--simulations", "2", "--opponents", "greedy", "--seed", "5", "--name", "tiny",
             "--out-dir", str(tmp_path / "runs3"), "--page", str(third),
             "--reuse", f"small={out_dir / 'small'}"]
    # A run that did not finish its minutes (no summary.json) is refused before any training.
    stopped = tmp_path / "stopped" / "small"
    shutil.copytree(out_dir / "small", stopped)
    shutil.copy(out_dir / "small.log", tmp_path / "stopped" / "small.log")
    (stopped / "summary.json").unlink()
    refused = subprocess.run([*reuse[:-1], f"small={stopped}"], cwd=ROOT, capture_output=True,
                             text=True, timeout=600)
    assert refused.returncode == 2 and "training" not in refused.stdout
    assert f"--reuse small: {stopped} has no summary.json: the run did not finish" in \
        refused.stderr
    reused = subprocess.run(reuse, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert reused.returncode == 0, reused.stderr[-2000:]
    assert "training more" in reused.stdout and "training small" not in reused.stdout
    assert not (tmp_path / "runs3" / "small").exists()
    text = third.read_text()
    assert f"the other recipes trained one after another, then the matches, on core {CORE}; " \
        f"small's run reused from an earlier race ({out_dir / 'small'}, its log written " in text
    assert "(without `--reuse` to train every recipe afresh)" in text
    assert "| small (reused) | `network=b1c16` |" in text
    assert (out_dir / "small.log").read_text().splitlines()[0][2:] in text.splitlines()
    assert "| small | more | 4 |" in text


SLOW_CHILD = ("import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
              "time.sleep(120)")
RACE_STUB = """
import sys
from pathlib import Path
from benchmarks import learning_race
learning_race.stop_on_sigterm()
child = [sys.executable, "-c", sys.argv[2], sys.argv[1]]
try:
    learning_race.train_all({"slow": child}, Path(sys.argv[3]), log=lambda line: None)
except learning_race.RaceStopped:
    sys.exit(130)
"""


def test_a_race_told_to_stop_stops_the_training_it_waits_on(tmp_path: Path) -> None:
    """SIGTERM to the race (as `kill` sends it) ends the training subprocess too: none is left
    to train on, unseen, on the core of the next job."""
    pid_file = tmp_path / "child.pid"
    race = subprocess.Popen([sys.executable, "-c", RACE_STUB, str(pid_file), SLOW_CHILD,
                             str(tmp_path)], cwd=ROOT)
    try:
        for _ in range(600):
            if pid_file.exists() and pid_file.read_text():
                break
            assert race.poll() is None, "the race stub ended before its child started"
            time.sleep(0.05)
        child_pid = int(pid_file.read_text())
        race.terminate()
        assert race.wait(timeout=60) == 130
    finally:
        race.kill()
    with pytest.raises(ProcessLookupError):
        os.kill(child_pid, 0)
    assert (tmp_path / "slow.log").read_text().startswith("$ ")


def test_a_stopped_race_says_so_in_one_line_and_exits_130(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def stopped(arguments) -> None:
        raise learning_race.RaceStopped("stopped by signal 15")
    monkeypatch.setattr(learning_race, "run", stopped)
    before = signal.getsignal(signal.SIGTERM)
    assert learning_race.main(["a=", "b=", "--minutes", "1"]) == 130
    error = capsys.readouterr().err
    assert error.startswith("learning_race: stopped;") and error.count("\n") == 1
    # The race's SIGTERM handler goes with it: a process that forks workers afterwards
    # (the atlas's pool) must not hand them a handler that raises instead of exiting.
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_race_that_fails_puts_the_sigterm_handler_back(monkeypatch: pytest.MonkeyPatch,
                                                         capsys) -> None:
    def failed(arguments) -> None:
        raise learning_race.RaceInputError("no such run")
    monkeypatch.setattr(learning_race, "run", failed)
    before = signal.getsignal(signal.SIGTERM)
    assert learning_race.main(["a=", "b=", "--minutes", "1"]) == 2
    assert signal.getsignal(signal.SIGTERM) is before
    assert capsys.readouterr().err == "learning_race: no such run\n"
