"""A learning race: training recipes trained from scratch for the same wall-clock minutes,
then their final checkpoints played against each other and against the baselines.

Every recipe (Hydra overrides of `catena-zero train` over common `--base` overrides) gets the
same seed and `max_minutes`, one torch thread and the inline runtime, and all train one
after another on one core (`--core`, default the highest this process may use; `taskset -c`),
so a race on a 2-core machine whose other core is busy stays fair. The final
checkpoints play on `--track` at its fair komi, found as `general_targets` does with the
bundled general.pt as neutral reference: each pair head to head, each recipe against each
`--opponents` spec, colours alternating, Wilson 95% intervals. A dated Markdown page records
recipes, train commands, machine, commit, what each run reached, matches and a verdict;
the raw matches go beside it (data/PAGE.json: each player by its file's SHA-256 and search
settings, each match's results by colour).

    python -m benchmarks.learning_race small=network=b4c32 \\
        big=network.blocks=6,network.channels=48 --minutes 30 --name width
    python -m benchmarks.learning_race --recipes-file race.yaml --dry-run
    python -m benchmarks.learning_race small= big=network=b6c64 --skip-train --games 100
    python -m benchmarks.learning_race base= spp3=train.samples_per_position=3 \\
        --reuse base=runs/race-spp/base --minutes 60
    python -m benchmarks.learning_race default= --minutes 60 --seed 1 --opponents uct:200

One recipe alone is the hour benchmark: the default recipe (or any) trained for an hour from
scratch and measured against the outside players, a yardstick that does not move with the
recipes.

`--reuse RECIPE=RUN_DIR` takes a recipe's finished run from an earlier race instead of
training it again, when the log beside it (RUN_DIR.log) shows the settings this race would
train it with: the same overrides after `train` (base, recipe, seed, minutes), whatever the
run dir, interpreter or pinned core; the code version is not compared. The run must have
finished its minutes (its summary.json) with an intact checkpoint. The page marks the reused
rows and the date their logs were written; they count as equal time only when they trained
on the same machine beside the same other load, and reproducing the race from scratch means
dropping `--reuse`.

A recipe is NAME=OVERRIDES (comma-separated, commas inside [...] kept; empty: the base
alone), or a YAML file of `NAME: [override, ...]`; benchmarks/race_recipes.py reads them and
builds their train commands. Run dirs go to runs/race-NAME/RECIPE (the train log beside each,
its first line the command), the page (benchmarks/race_page.py) to
docs/results/YYYY-MM-DD-race-NAME.md (index it in docs/results/README.md).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

from benchmarks.general_targets import (
    DEFAULT_GAMES,
    DEFAULT_SIMULATIONS,
    FairKomi,
    network_spec,
)
from benchmarks.race_page import (
    MatchRecord,
    Recipe,
    RunProgress,
    git_commit,
    machine,
    render_page,
    verdict,
)
from benchmarks.race_recipes import (
    RaceInputError,
    check_override,
    check_reused,
    default_base,
    parse_recipe,
    read_recipes_file,
    recorded_command,
    reuse_log,
    split_overrides,
    train_command,
)
from catena_zero.arena.match import play_match
from catena_zero.arena.specs import AgentFactory, parse_agent_spec, player_record
from catena_zero.data.atomic import atomic_write_text
from catena_zero.export.evaluator import read_model_network
from catena_zero.pipeline.metrics import MetricsError, read_metrics
from catena_zero.play.bundled import bundled_general_path
from catena_zero.play.model_player import PlayerConfig
from catena_zero.rules import Track
from catena_zero.train.checkpoint import load_latest_intact_checkpoint

RACE_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # a docs/results page name (tests/test_docs)
DEFAULT_OPPONENTS = "greedy,uct:200,uct:1000"
RAW_FORMAT = "catena_zero.learning_race"  # the raw matches file beside a race's page
Log = Callable[[str], None]


def check_configs(commands: dict[str, list[str]]) -> None:
    """Compose every recipe's config (`--cfg`) before any training, so a misspelt key in the
    last recipe does not surface after the first has trained for an hour."""
    for name, command in commands.items():
        done = subprocess.run([*command, "--cfg"], capture_output=True, text=True)
        if done.returncode:
            lines = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
            raise RaceInputError(f"recipe {name}: {lines[-1]}")


def train_all(commands: dict[str, list[str]], out_dir: Path, log: Log = print) -> None:
    """Train the recipes one after another (on the one core, so none slows another down)."""
    for name, command in commands.items():
        log_path = out_dir / f"{name}.log"
        log(f"training {name} (log {log_path})")
        with open(log_path, "w") as handle:
            handle.write(f"$ {shlex.join(command)}\n")  # the page's record of the command
            handle.flush()
            # subprocess.run kills the child when its wait is cut short (Ctrl-C, RaceStopped):
            # the stopped run keeps its checkpoints, no training is left on the core.
            done = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT)
        if done.returncode:
            raise RuntimeError(f"training {name} failed (exit {done.returncode}); see {log_path}")


class RaceStopped(Exception):
    """The race was told to stop (SIGTERM), like Ctrl-C."""


def stop_on_sigterm():
    """Make SIGTERM raise `RaceStopped` in the main thread, so that `subprocess.run` stops
    the training it waits on instead of leaving it to train on, unseen, beside the next job.
    Returns the handler it replaced, for the caller to put back (a process that goes on, or
    forks, after the race must not keep raising on SIGTERM)."""
    def raise_stopped(signum, frame):
        raise RaceStopped(f"stopped by signal {signum}")
    return signal.signal(signal.SIGTERM, raise_stopped)


def run_progress(run_dir: Path, name: str = "") -> RunProgress:
    checkpoint, _ = load_latest_intact_checkpoint(run_dir / "checkpoints")
    if checkpoint is None:
        # A recipe reused in the race trained elsewhere: --skip-train alone looks for it here.
        hint = f"; if the race reused {name}, give its --reuse {name}=RUN_DIR again" \
            if name else ""
        raise RaceInputError(f"{run_dir}: no checkpoint (train it first: drop --skip-train"
                             f"{hint})")
    return progress_of(run_dir, checkpoint)


def progress_of(run_dir: Path, checkpoint) -> RunProgress:
    """What the run in `run_dir` reached: `checkpoint`'s counters and its summary's minutes."""
    try:
        minutes = float(json.loads((run_dir / "summary.json").read_text())["minutes"])
    except (OSError, ValueError, KeyError, TypeError):
        minutes = None
    counters = checkpoint.counters
    return RunProgress(str(checkpoint.path), counters.step, counters.iteration,
                       counters.games, counters.positions, minutes, *time_split(run_dir))


def time_split(run_dir: Path) -> tuple[float | None, float | None]:
    """(self-play minutes, training minutes) summed over the run's iteration records, or
    (None, None) when it has none (a damaged file too: the page says n/a)."""
    try:
        records = read_metrics(run_dir, log=None)
    except MetricsError:
        return None, None
    selfplay = train = 0.0
    seen = False
    for record in records:
        values = record["values"]
        if record["kind"] != "iteration" or "time/iteration_seconds" not in values:
            continue
        seen = True
        spent = values.get("train/seconds", 0.0)
        train += spent
        selfplay += values["time/iteration_seconds"] - spent
    return (selfplay / 60.0, train / 60.0) if seen else (None, None)


def play_matches(recipes: list[Recipe], progress: dict[str, RunProgress],
                 arguments: argparse.Namespace, log: Log = print
                 ) -> tuple[list[MatchRecord], str, dict]:
    """Every pair head to head, then each recipe against each opponent; (records, komi,
    raw): `raw` names each player by its file's SHA-256 and search settings and holds each
    match's counts by colour (the raw file beside the page)."""
    rules = Track.parse(arguments.track).rules()
    # one leaf per tree per call: the matches' batch is their games (general_targets too)
    search = PlayerConfig(simulations=arguments.simulations, leaves_per_call=1).search_config()
    factory = AgentFactory(rules, search, "cpu", model_reader=read_model_network)
    reference = bundled_general_path()
    given = {} if arguments.komi is None else {arguments.track: arguments.komi}
    komi, source = FairKomi(reference, factory, f"model:{reference}", given)(arguments.track)
    specs = {name: network_spec(Path(run.checkpoint)) for name, run in progress.items()}
    pairings = [(first.name, second.name) for first, second in itertools.combinations(recipes, 2)]
    pairings += [(recipe.name, spec) for recipe in recipes for spec in arguments.opponents]
    players = {name: player_record(spec, search) for name, spec in specs.items()}
    players.update({spec: player_record(spec, None) for spec in arguments.opponents})
    records, matches = [], []
    for index, (name_a, name_b) in enumerate(pairings):
        result = play_match(rules, factory(specs[name_a]), factory(specs.get(name_b, name_b)),
                            arguments.games, komi=komi, seed=arguments.seed + index,
                            name_a=name_a, name_b=name_b)
        records.append(MatchRecord(name_a, name_b, result.wins, result.draws, result.losses))
        summary = result.to_dict()
        summary.pop("games")  # every move of every game: the counts are what a reader needs
        matches.append(summary)
        log(f"[{index + 1}/{len(pairings)}] {name_a} vs {name_b}: {result.score:.3f} "
            f"[{result.interval[0]:.3f}, {result.interval[1]:.3f}] ({result.seconds:.0f} s)")
    komi_text = f"{komi} ({source}; reference {reference.name})"
    raw = {"format": RAW_FORMAT, "format_version": 1, "track": arguments.track,
           "komi": komi, "komi_source": komi_text, "games": arguments.games,
           "seed": arguments.seed, "players": players, "matches": matches}
    return records, komi_text, raw


def raw_file(page: Path) -> Path:
    """Where a race page's raw matches go: data/<page name>.json beside the page."""
    return page.parent / "data" / f"{page.stem}.json"


def check_finished(name: str, run_dir: Path, minutes: float) -> RunProgress:
    """A reused run's progress, refused unless it ran its minutes and left an intact
    checkpoint (checked before this race trains anything)."""
    try:
        checkpoint, _ = load_latest_intact_checkpoint(run_dir / "checkpoints")
    except (OSError, ValueError) as error:  # every checkpoint there damaged
        raise RaceInputError(f"--reuse {name}: {error}") from None
    if checkpoint is None:
        raise RaceInputError(f"--reuse {name}: {run_dir} holds no checkpoint")
    progress = progress_of(run_dir, checkpoint)
    if progress.minutes is None:
        raise RaceInputError(f"--reuse {name}: {run_dir} has no summary.json: the run did "
                             f"not finish")
    if progress.minutes < 0.95 * minutes:  # the loop stops at its bound, a little after
        raise RaceInputError(f"--reuse {name}: {run_dir} stopped after "
                             f"{progress.minutes:.1f} of {minutes:g} minutes")
    return progress


def written_on(path: Path) -> str:
    """The UTC date a file was last written, YYYY-MM-DD ("unknown" when unreadable)."""
    try:
        return time.strftime("%Y-%m-%d", time.gmtime(path.stat().st_mtime))
    except OSError:
        return "unknown"


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    class Parser(argparse.ArgumentParser):
        def error(self, message: str):  # one line and exit 2 (main), not usage + message
            raise RaceInputError(message)

    parser = Parser(prog="python -m benchmarks.learning_race",
                    description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("recipes", nargs="*", help="NAME=override1,override2,...")
    add("--recipes-file", type=Path, help="YAML: NAME: [override, ...]")
    add("--base", action="append", default=[], help="overrides of every recipe (replace the "
        "default, a one-track mix of --track)")
    add("--name", default="", help="race name (default: the recipe names)")
    add("--minutes", type=float, default=10.0, help="training minutes of each recipe")
    add("--seed", type=int, default=0)
    add("--games", type=int, default=DEFAULT_GAMES, help="games per match (even)")
    add("--simulations", type=int, default=DEFAULT_SIMULATIONS, help="per move, in matches")
    add("--track", default="6/komi/standard", help="the track of the matches")
    add("--komi", type=int, default=None, help="play at this komi, not the fair one")
    add("--opponents", default=DEFAULT_OPPONENTS, help="comma-separated agent specs")
    add("--core", type=int, default=None, help="the CPU core (default: this process's highest)")
    add("--out-dir", type=Path, help="run dirs (default runs/race-NAME)")
    add("--page", type=Path, help="default docs/results/YYYY-MM-DD-race-NAME.md")
    add("--skip-train", action="store_true", help="reuse the finished runs: matches and page")
    add("--reuse", action="append", default=[], metavar="RECIPE=RUN_DIR",
        help="take RECIPE's finished run from an earlier race with the same settings")
    add("--dry-run", action="store_true", help="print the commands only")
    arguments = parser.parse_args(argv)
    arguments.argv = list(argv)  # for the page's command that reproduces the race
    try:
        arguments.track = str(Track.parse(arguments.track))
        if arguments.komi is not None:
            Track.parse(arguments.track).rules().validate_komi(arguments.komi)
        arguments.opponents = [str(parse_agent_spec(spec))
                               for spec in split_overrides(arguments.opponents)]
    except ValueError as error:
        raise RaceInputError(str(error)) from None
    file_recipes = read_recipes_file(arguments.recipes_file) if arguments.recipes_file else []
    arguments.recipes = [*file_recipes, *map(parse_recipe, arguments.recipes)]
    names = [recipe.name for recipe in arguments.recipes]
    repeated = [name for name in names if names.count(name) > 1]
    if repeated:
        raise RaceInputError(f"recipe name {repeated[0]!r} is given more than once")
    if set(names) & set(arguments.opponents):  # "greedy" would be a recipe and an opponent
        raise RaceInputError(f"recipe names {sorted(set(names) & set(arguments.opponents))} "
                             f"are also --opponents")
    if not names or (len(names) < 2 and not arguments.opponents):
        raise RaceInputError(f"a race needs two recipes, or one measured against --opponents "
                             f"(got {len(names)} recipes, {len(arguments.opponents)} opponents)")
    for option, value, valid, wanted in (
            ("--games", arguments.games, arguments.games >= 2 and arguments.games % 2 == 0,
             "an even number >= 2"), ("--minutes", arguments.minutes, arguments.minutes > 0, "> 0"),
            ("--simulations", arguments.simulations, arguments.simulations >= 1, ">= 1"),
            ("--seed", arguments.seed, arguments.seed >= 0, ">= 0")):
        if not valid:  # `> 0` is false for nan minutes too
            raise RaceInputError(f"{option} must be {wanted}, got {value}")
    arguments.name = arguments.name or "-vs-".join(
        re.sub(r"[^a-z0-9]+", "-", recipe.name.lower()).strip("-") for recipe in arguments.recipes)
    if not RACE_NAME.match(arguments.name):
        raise RaceInputError(f"--name {arguments.name!r}: lower-case letters, digits and "
                             f"single hyphens only (it names a docs/results page)")
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    arguments.core = allowed[-1] if arguments.core is None else arguments.core
    if arguments.core not in allowed:
        raise RaceInputError(f"--core {arguments.core}: this process may use cores {allowed}")
    arguments.base = [check_override(item, "--base") for text in arguments.base
                      for item in split_overrides(text)] or default_base(arguments.track)
    arguments.out_dir = arguments.out_dir or Path("runs") / f"race-{arguments.name}"
    arguments.reuse_dirs = {}
    for text in arguments.reuse:
        name, equals, run_dir = text.partition("=")
        if not equals or not run_dir:
            raise RaceInputError(f"--reuse {text!r}: expected RECIPE=RUN_DIR")
        if name not in names:
            raise RaceInputError(f"--reuse {text!r}: {name!r} is not one of the recipes {names}")
        if name in arguments.reuse_dirs:
            raise RaceInputError(f"--reuse: recipe {name!r} is given more than once")
        arguments.reuse_dirs[name] = Path(run_dir)
    if len(arguments.reuse_dirs) == len(names):
        raise RaceInputError("--reuse: every recipe is reused; a race trains at least one "
                             "(to replay one race's matches: --skip-train, without --reuse)")
    return arguments


def run(arguments: argparse.Namespace, log: Log = print) -> Path | None:
    """Train (unless skipped), play, write the page; its path (None on a dry run)."""
    recipes, out_dir = arguments.recipes, arguments.out_dir
    core = arguments.core if shutil.which("taskset") else None  # the page says "not pinned"
    commands = {recipe.name: train_command(recipe, arguments.base, out_dir / recipe.name,
                                           arguments.seed, arguments.minutes, core)
                for recipe in recipes}
    run_dirs = {recipe.name: arguments.reuse_dirs.get(recipe.name, out_dir / recipe.name)
                for recipe in recipes}
    reused = arguments.reuse_dirs
    for name, run_dir in reused.items():
        check_reused(name, run_dir, commands[name])
    trained = {name: command for name, command in commands.items() if name not in reused}
    if arguments.dry_run:
        for name, command in commands.items():
            log(f"# {name}: reused from {reused[name]}" if name in reused else shlex.join(command))
        pairs = [f"{first.name} vs {second.name}"
                 for first, second in itertools.combinations(recipes, 2)]
        pairs += [f"{recipe.name} vs {spec}" for recipe in recipes for spec in arguments.opponents]
        log(f"then {arguments.games}-game matches on {arguments.track}: {', '.join(pairs)}")
        return None
    finished = {name: check_finished(name, run_dir, arguments.minutes)
                for name, run_dir in reused.items()}
    if not arguments.skip_train:
        held = [name for name in trained if any((out_dir / name / "checkpoints").glob("*"))]
        if held:
            raise RaceInputError(f"{out_dir / held[0]} already holds checkpoints: pass "
                                 f"--skip-train to reuse the runs, or choose another --out-dir")
        out_dir.mkdir(parents=True, exist_ok=True)
        check_configs(trained)
        train_all(trained, out_dir, log)
    progress = {name: finished.get(name) or run_progress(run_dir, name)
                for name, run_dir in run_dirs.items()}
    torch.set_num_threads(1)  # the matches, like the training, on the one core
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    records, komi, raw = play_matches(recipes, progress, arguments, log)
    date = time.strftime("%Y-%m-%d")
    page = arguments.page or Path("docs/results") / f"{date}-race-{arguments.name}.md"
    raw_path = raw_file(page)
    settings = {
        "race": (f"{len(recipes)} recipes trained from scratch for {arguments.minutes:g} "
                 f"minutes each" if len(recipes) > 1 else f"one recipe trained from scratch "
                 f"for {arguments.minutes:g} minutes, measured against the outside players")
                + f", seed {arguments.seed}, one torch thread, inline runtime.",
        "track": arguments.track, "komi": komi, "machine": machine(), "commit": git_commit(),
        "matches": f"{arguments.games} games a match, colours alternating, "
                   f"{arguments.simulations} simulations a move for the trained nets.",
        "pinning": ("matches on the runs trained earlier (their commands below)"
                    if arguments.skip_train else f"the {'other ' if reused else ''}recipes "
                    f"trained one after another, then the matches, on core {core}"
                    if core is not None else "not pinned")
                   + "".join(f"; {name}'s run reused from an earlier race ({run_dir}, its log "
                             f"written {written_on(reuse_log(run_dir))}, the same settings)"
                             for name, run_dir in reused.items()),
        "reproduce": shlex.join(["python", "-m", "benchmarks.learning_race", *arguments.argv]),
        "reproduce_note": "(without `--reuse` to train every recipe afresh)" if reused else "",
        "raw": raw_path.relative_to(page.parent).as_posix(),
    }
    raw.update(race=arguments.name, date=date, commit=settings["commit"].strip("`"),
               machine=settings["machine"],
               runs={name: {"checkpoint": str(run.checkpoint), "steps": run.steps,
                            "minutes": run.minutes} for name, run in progress.items()})
    shown = {name: recorded_command(reuse_log(run_dir), commands[name])
             for name, run_dir in run_dirs.items()}
    raw_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(raw_path, json.dumps(raw, indent=1) + "\n")
    atomic_write_text(page, render_page(arguments.name, date, settings, recipes,
                                        arguments.base, shown, progress, records,
                                        reused=set(reused)))
    log(f"wrote {page}: {verdict(records, [recipe.name for recipe in recipes])}")
    return page


def main(argv: list[str] | None = None) -> int:
    try:
        arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
        previous = stop_on_sigterm()
        try:
            run(arguments)
        finally:
            if previous is not None:  # None: a handler set outside Python, left as is
                signal.signal(signal.SIGTERM, previous)
    except (RuntimeError, OSError, ValueError) as error:  # bad input; a failed run or file
        print(f"learning_race: {' '.join(str(error).split())}", file=sys.stderr)
        return 2 if isinstance(error, RaceInputError) else 1
    except (KeyboardInterrupt, RaceStopped):
        print("learning_race: stopped; the training under way was stopped with it (its "
              "checkpoints are kept)", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
