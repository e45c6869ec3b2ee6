"""The results page of a learning race (benchmarks/learning_race.py): its records, verdict,
the machine and commit it ran on, and the Markdown it writes."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from catena_zero.arena.stats import match_score, wilson_interval


@dataclass(frozen=True)
class Recipe:
    name: str
    overrides: tuple[str, ...]


@dataclass(frozen=True)
class RunProgress:
    """What a recipe's run reached: its newest intact checkpoint's counters."""

    checkpoint: str
    steps: int
    iterations: int
    games: int
    positions: int
    minutes: float | None  # the loop's own minutes (summary.json); None when it has none
    selfplay_minutes: float | None = None  # self-play's share of them (metrics.jsonl)
    train_minutes: float | None = None  # the optimiser steps' share of them

    def seconds_per_step(self) -> float | None:
        """Training seconds an optimiser step: at the same net and batch, a measure of the
        machine's speed that the recipe hardly changes."""
        if self.train_minutes is None or self.steps <= 0:
            return None
        return 60.0 * self.train_minutes / self.steps


@dataclass(frozen=True)
class MatchRecord:
    """One match from player A's side; the rest follows from the counts, as in the arena."""

    player_a: str
    player_b: str
    wins: int
    draws: int
    losses: int

    def summary(self) -> tuple[int, float, float, float]:
        """(games, score with draws as half, Wilson 95% low, high)."""
        games = self.wins + self.draws + self.losses
        low, high = wilson_interval(self.wins + 0.5 * self.draws, games)
        score = match_score(self.wins, self.draws, self.losses)
        return games, float(score), float(low), float(high)


def verdict(records: list[MatchRecord], names: list[str]) -> str:
    """One line, the outside players first: each recipe's score against every rollout-MCTS
    opponent (`uct:N`, the yardstick that does not move with the recipes), then each
    head-to-head pair's winner, named only when its interval excludes 50%."""
    outside = outside_verdict(records, names)
    head_to_head = head_to_head_verdict(records, names)
    if not outside:
        return head_to_head
    return f"{outside} Head to head: {head_to_head}" if head_to_head != "." else outside


def outside_verdict(records: list[MatchRecord], names: list[str]) -> str:
    """Per `uct:N` opponent: every recipe's score with its interval, and the leader, said to
    lead clearly only when its interval lies above every other recipe's."""
    opponents = sorted({r.player_b for r in records if r.player_a in names
                        and r.player_b.startswith("uct:")}, key=_playouts)
    parts = []
    for opponent in opponents:
        scores = {}
        for record in records:
            if record.player_b == opponent and record.player_a in names:
                scores[record.player_a] = record.summary()
        shown = ", ".join(f"{name} {score:.3f} [{low:.3f}, {high:.3f}]"
                          for name, (_, score, low, high) in scores.items())
        leader = max(scores, key=lambda name: scores[name][1])
        others = [summary for name, summary in scores.items() if name != leader]
        if not others:
            parts.append(f"against {opponent}: {shown}")
        elif all(scores[leader][2] > high for _, _, _, high in others):
            parts.append(f"against {opponent}: {shown}; {leader} leads, its interval above "
                         f"the others'")
        else:
            parts.append(f"against {opponent}: {shown}; {leader} ahead, the intervals overlap")
    return "; ".join(parts) + "." if parts else ""


def _playouts(spec: str) -> int:
    try:
        return int(spec.partition(":")[2])
    except ValueError:
        return 0


def head_to_head_verdict(records: list[MatchRecord], names: list[str]) -> str:
    """Each head-to-head pair's winner, named only when its interval excludes 50%."""
    parts = []
    for record in (r for r in records if r.player_a in names and r.player_b in names):
        games, score, low, high = record.summary()
        player_a, player_b = record.player_a, record.player_b
        shown = f"{player_a}'s score {score:.3f} [{low:.3f}, {high:.3f}] over {games} games"
        if score == 0.5:
            parts.append(f"{player_a} and {player_b} tied head to head ({shown})")
            continue
        if low <= 0.5 <= high:  # a coin's result at this sample size: no winner named
            leader = player_a if score > 0.5 else player_b
            parts.append(f"no winner between {player_a} and {player_b} ({shown}); {leader} "
                         f"ahead, but the interval holds 50%")
            continue
        winner, loser = (player_a, player_b) if score > 0.5 else (player_b, player_a)
        parts.append(f"{winner} beat {loser} head to head ({shown}); the interval excludes 50%")
    return "; ".join(parts) + "."


def command_output(command: list[str]) -> str | None:
    """The stripped stdout of `command`; None when it cannot run or fails."""
    try:
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def machine() -> str:
    """`lscpu`'s model name and its bf16 features: AMX, AVX512-BF16, AVX-512."""
    fields = {key.strip(): value.strip() for key, _, value in
              (line.partition(":") for line in (command_output(["lscpu"]) or "").splitlines())}
    flags = fields.get("Flags", "").split()
    amx, avx512 = ("yes" if any(flag.startswith(name) for flag in flags) else "no"
                   for name in ("amx", "avx512"))
    avx512_bf16 = "yes" if "avx512_bf16" in flags else "no"
    return (f"{fields.get('Model name', 'unknown CPU')}, {os.cpu_count()} cores; "
            f"AMX: {amx}, AVX512-BF16: {avx512_bf16}, AVX-512: {avx512}")


def git_commit() -> str:
    commit = command_output(["git", "rev-parse", "--short", "HEAD"])
    if commit is None:
        return "unknown (not a git checkout)"
    dirty = command_output(["git", "status", "--porcelain", "--untracked-files=no"])
    return f"`{commit}`" + (" with uncommitted changes" if dirty else "")


def render_page(name: str, date: str, settings: dict[str, str], recipes: list[Recipe],
                base: list[str], commands: dict[str, str], progress: dict[str, RunProgress],
                records: list[MatchRecord], reused: set[str] = frozenset()) -> str:
    """The results page; `settings`: race, track, komi, matches, commit, machine, pinning,
    reproduce (one phrase each) and optionally reproduce_note and raw (the raw file's path
    from the page); `reused`: the recipes whose runs came from an earlier race, marked in
    the table."""
    lines = [f"# Learning race {name}", "",
             f"**Verdict:** {verdict(records, [recipe.name for recipe in recipes])}", "",
             f"- **Race:** {settings['race']}",
             f"- **Matches:** on {settings['track']} at komi {settings['komi']}; "
             f"{settings['matches']}",
             f"- **When, code:** {date}, commit {settings['commit']}.",
             f"- **Machine:** {settings['machine']}; {settings['pinning']}.",
             f"- **Reproduce:** `{settings['reproduce']}`"
             + (f" {settings['reproduce_note']}" if settings.get("reproduce_note") else ""),
             *([f"- **Raw matches:** [{settings['raw']}]({settings['raw']}) (each player by "
                f"its file's SHA-256 and search settings; results by colour)"]
               if settings.get("raw") else []),
             "", "## Recipes", "",
             "| recipe | overrides | minutes | self-play / training min | steps | "
             "training s/step | iterations | games | positions |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for recipe in recipes:
        run = progress[recipe.name]
        shown = " ".join(recipe.overrides).replace("|", "\\|") or "(the base alone)"
        minutes = "n/a" if run.minutes is None else f"{run.minutes:.1f}"
        split = "n/a" if run.train_minutes is None else \
            f"{run.selfplay_minutes:.1f} / {run.train_minutes:.1f}"
        per_step = run.seconds_per_step()
        per_step = "n/a" if per_step is None else f"{per_step:.3f}"
        marked = f"{recipe.name} (reused)" if recipe.name in reused else recipe.name
        lines.append(f"| {marked} | `{shown}` | {minutes} | {split} | {run.steps} | "
                     f"{per_step} | {run.iterations} | {run.games} | {run.positions} |")
    lines += ["", f"Base overrides of every recipe: `{' '.join(base)}`. Minutes are the "
              "training loop's own, split by the run's `metrics.jsonl`; steps, iterations, "
              "games and positions are the final checkpoint's counters. Train commands:",
              "", "```", *commands.values(), "```"]
    speed = speed_check(recipes, progress, reused)
    lines += ["", speed] if speed else []
    lines += ["", "## Matches", "", "| player A | player B | games | A wins-draws-losses | "
              "A's score | 95% interval |", "|---|---|---:|---|---:|---|"]
    for record in records:
        games, score, low, high = record.summary()
        lines.append(f"| {record.player_a} | {record.player_b} | {games} | {record.wins}-"
                     f"{record.draws}-{record.losses} | {score:.3f} | [{low:.3f}, {high:.3f}] |")
    return "\n".join(lines) + "\n"


SPEED_TOLERANCE = 0.15  # training s/step of a reused run this far from a fresh one's: warned
# Overrides that change the work of one training step (the net's size, the batch and how it is
# padded): a reused run is compared only with fresh runs that leave these as it does.
STEP_WORK_PREFIXES = ("network.", "train.batch_size", "train.side_buckets")


def step_work(recipe: Recipe) -> tuple[str, ...]:
    """The recipe's overrides that change what a training step computes."""
    return tuple(sorted(override for override in recipe.overrides
                        if override.startswith(STEP_WORK_PREFIXES)))


def speed_check(recipes: list[Recipe], progress: dict[str, RunProgress],
                reused: set[str]) -> str | None:
    """A warning when a reused run's training seconds a step differ by more than
    SPEED_TOLERANCE from those of this race's fresh runs with the same net and batch (the
    same `step_work`): equal minutes were then not equal work. None otherwise, and when no
    fresh run trains the same net and batch (a bigger net's step is slower by design)."""
    by_name = {recipe.name: recipe for recipe in recipes}
    off = []
    for name in sorted(reused):
        value = progress[name].seconds_per_step()
        fresh = [progress[recipe.name].seconds_per_step() for recipe in recipes
                 if recipe.name not in reused and step_work(recipe) == step_work(by_name[name])]
        fresh = [rate for rate in fresh if rate is not None]
        if value is None or not fresh:  # nothing comparable to measure the machine by
            continue
        reference = sum(fresh) / len(fresh)
        if abs(value / reference - 1.0) > SPEED_TOLERANCE:
            off.append(f"{name} {value:.3f} s against {reference:.3f} s (x{value / reference:.2f})")
    if not off:
        return None
    return ("**Machine speed:** a reused run's training step took another time than this "
            "race's runs of the same net and batch: " + "; ".join(off) + ". The machine then ran "
            "at another speed, and equal minutes were not equal work.")
