"""The steps of a training iteration, shared by the inline runtime and the Ray runtime.

Each runtime arranges the same plain functions its own way::

    weights = make_weights_message(trainer)                          # learner -> workers
    result = selfplay_iteration(engine, evaluator, config, komi_sampler, path, ...)
    learned = learner_iteration(trainer, window, config.train, rng, board)
    path = save_loop_checkpoint(config, trainer, state, checkpoint_dir, generators)
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from catena_zero.data import (
    ReplayWindow,
    ShardMeta,
    list_shards,
    random_symmetries,
    shard_filename,
    write_shard,
)
from catena_zero.data.game_record import record_from_actions, save_record
from catena_zero.komi.fair import estimate_fair_komi, smoothed_fair_komi
from catena_zero.network import InferenceModel, NetworkConfig, PolicyValueNet
from catena_zero.pipeline.config import TrainLoopConfig
from catena_zero.pipeline.messages import LearnerResult, LoopState, SelfPlayResult, WeightsMessage
from catena_zero.pipeline.tracks import TrackMix
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Engine, Rules, Track
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.selfplay.evaluator import NetworkEvaluator
from catena_zero.selfplay.selfplay import KomiSampler, SampleGame, SelfPlay
from catena_zero.train.checkpoint import (
    Checkpoint,
    build_network,
    list_checkpoints,
    load_checkpoint,
    load_latest_intact_checkpoint,
    restore_rng_states,
    restore_trainer,
    save_checkpoint,
)
from catena_zero.train.config import TrainConfig
from catena_zero.train.grow import grow_checkpoint
from catena_zero.train.trainer import Trainer


def set_torch_threads(threads: int, automatic: int | None = None) -> None:
    """`LoopConfig.threads` in the process that runs the network, on every runtime: the inline
    process, each Ray self-play actor and the Ray learner. 0 means automatic: `automatic`
    threads when given (a Ray actor: 1, since it holds at most one CPU), else torch's
    default."""
    count = threads or automatic
    if count:
        torch.set_num_threads(count)


def refresh_fair_komi(state: LoopState, engine: Engine, evaluate_fn,
                      config: SelfPlayConfig, first: bool = True) -> float:
    """Re-estimate the network's fair komi on `engine`'s track and move that track's centre
    towards it (`catena_zero.komi.fair.smoothed_fair_komi` with `fair_komi_smoothing`). One
    rule for the inline loop and the Ray learner. `first`: the track is the run's first,
    whose centre is also `state.fair_komi`. Returns the centre."""
    key = Track.from_rules(engine.rules).key
    previous = state.fair_komis.get(key, state.fair_komi if first else None)
    estimate = estimate_fair_komi(engine, evaluate_fn)
    centre = smoothed_fair_komi(previous, estimate, config.fair_komi_smoothing)
    state.fair_komis[key] = centre
    if first:
        state.fair_komi = centre
    return centre


def fair_komi_due(state: LoopState, track: Track, every: int) -> bool:
    """Whether a track's fair komi is to be re-estimated before it plays: when it has none
    yet, and then every `every`-th iteration the track plays."""
    if track.key not in state.fair_komis:
        return True
    return state.track_iterations.get(track.key, 0) % every == 0


class TrackPlayers:
    """Per track of a run, the engine, an evaluator of the run's net on it and the komi
    sampler, made when the track first plays. Every track's evaluator shares one inference
    model (one bf16 copy to keep in step), or `model` (the Ray runtime's shared inference
    actor) when given."""

    def __init__(self, config: TrainLoopConfig, net: PolicyValueNet, device="cpu",
                 model=None):
        self.config = config
        self.model = model if model is not None else InferenceModel(
            net, device, precision=config.loop.inference_precision)
        self.players: dict[Track, tuple[Engine, NetworkEvaluator, KomiSampler]] = {}

    def of(self, track: Track) -> tuple[Engine, NetworkEvaluator, KomiSampler]:
        if track not in self.players:
            engine = Engine(track.rules())
            evaluator = NetworkEvaluator(self.model, engine)
            self.players[track] = (engine, evaluator, KomiSampler(engine, self.config.selfplay))
        return self.players[track]

    def refresh(self) -> None:
        """After a training step or new weights: the inference copy follows the net."""
        self.model.refresh()


def make_weights_message(trainer: Trainer) -> WeightsMessage:
    """The trainer's published weights (the average when kept) on the CPU, versioned by its
    step."""
    state = {key: value.detach().cpu().clone()
             for key, value in trainer.published_net.state_dict().items()}
    return WeightsMessage(version=trainer.step, state_dict=state)


def build_fresh_network(config: TrainLoopConfig) -> PolicyValueNet:
    """A new net: the size-general one (no home board) for a run with a mix of tracks, else
    one built on the run's board (which, its weights being size-independent, plays any)."""
    if config.mix.is_mixed:
        return PolicyValueNet(NUM_PLANES, NUM_GLOBALS, config.network)
    board = config.rules.board
    return PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index,
                          config.network)


def rules_dict(config: TrainLoopConfig | Rules) -> dict[str, Any]:
    """{side, game_type, scoring} of a Rules (or of a run's own rules)."""
    rules = config if isinstance(config, Rules) else config.rules
    return {"side": rules.board.side, "game_type": _enum_value(rules.game_type),
            "scoring": _enum_value(rules.scoring)}


def _enum_value(value: Any) -> str:
    return str(getattr(value, "value", value))


# A small board's games grow by at most this factor (a side-2 board has 7 cells: without a
# bound one iteration would play thousands of games of it).
MAX_GAMES_SCALE = 8


def track_games(config: TrainLoopConfig, num_cells: int) -> tuple[int, int]:
    """(games of one iteration, games searched at once) on a board of `num_cells` cells.

    With `loop.batch_cells` > 0 both `loop.games_per_iteration` and
    `selfplay.games_in_batch` grow by batch_cells / (games_in_batch * num_cells), between 1
    and MAX_GAMES_SCALE: on a small board one network call then holds about as many cells
    as on a large one, so the per-call costs of search and net are shared by more positions
    (measured: more positions/s on sides 3-4, but no higher a/b, since the raw net gains as
    much from the batch; docs/results/2026-12-01-general-champion-step7328.md). The replay
    window keeps each track's share of its samples whatever the games, so the mix the net
    trains on does not move.
    """
    games, batch = config.loop.games_per_iteration, config.selfplay.games_in_batch
    if config.loop.batch_cells <= 0:
        return games, batch
    scale = min(max(config.loop.batch_cells / (batch * num_cells), 1.0), MAX_GAMES_SCALE)
    return math.ceil(games * scale), math.ceil(batch * scale)


def selfplay_iteration(engine: Engine, evaluate_fn, config: TrainLoopConfig,
                       komi_sampler: KomiSampler, shard_path: str | Path, iteration: int,
                       weights_version: int, rng: np.random.Generator,
                       games_dir: str | Path | None = None,
                       keep_games: bool = False) -> SelfPlayResult:
    """Play the track's games (`track_games`: `games_per_iteration`, more on small boards
    with `loop.batch_cells`) and write them as one shard (atomically); with
    `games_dir`, the first `loop.sample_games` games also as records there
    (`iter<iteration>-game<k>.sgf`, docs/reference/records.md). `keep_games` stores those
    games in the shard's meta instead (`extra["sample_games"]`): a Ray worker does not know
    the iteration its shard will become, the learner that adopts it writes them."""
    games, games_in_batch = track_games(config, engine.rules.board.num_cells)
    selfplay_config = dataclasses.replace(config.selfplay, games_in_batch=games_in_batch)
    selfplay = SelfPlay(engine, evaluate_fn, config.search, selfplay_config, komi_sampler)
    keep = config.loop.sample_games if games_dir is not None or keep_games else 0
    samples, stats = selfplay.play_games(games, rng, keep)
    if keep and games_dir is not None:
        save_sample_games(Path(games_dir), stats.sample_games, engine.rules, iteration,
                          weights_version)
    rules = rules_dict(engine.rules)  # the track this iteration played
    meta = ShardMeta(
        side=rules["side"], game_type=rules["game_type"], scoring=rules["scoring"],
        model_step=weights_version, num_games=stats.games, model_version=f"step{weights_version}",
        extra={"iteration": iteration, "positions": stats.positions,
               "fair_komi": komi_sampler.fair_komi, "black_wins": stats.black_wins,
               "draws": stats.draws, "mean_game_length": stats.mean_game_length,
               **({"sample_games": [[game.game_id, game.komi, list(game.actions)]
                                    for game in stats.sample_games]} if keep_games else {})},
    )
    path = write_shard(shard_path, samples, meta)
    return SelfPlayResult(iteration=iteration, weights_version=weights_version,
                          shard_path=str(path), stats=stats, fair_komi=komi_sampler.fair_komi,
                          track=str(Track.from_rules(engine.rules)))


def sample_game_path(games_dir: Path, iteration: int, game_id: int) -> Path:
    return games_dir / f"iter{iteration:06d}-game{game_id}.sgf"


def save_sample_games(games_dir: Path, games: list[SampleGame], rules: Rules, iteration: int,
                      weights_version: int) -> list[Path]:
    """Write kept self-play games as records (atomically); both players are the net of
    `weights_version`."""
    player = f"catena_zero step{weights_version}"
    date = datetime.date.today().isoformat()
    paths = []
    for game in games:
        record = record_from_actions(rules, game.komi, game.actions, black_player=player,
                                     white_player=player, date=date,
                                     event=f"self-play iteration {iteration}")
        paths.append(save_record(sample_game_path(games_dir, iteration, game.game_id), record))
    return paths


def training_steps(config: TrainConfig, new_positions: int, rng: np.random.Generator) -> int:
    """Optimiser steps of one iteration: `config.steps_per_iteration`, or with
    `config.samples_per_position` r > 0, `new_positions` x r / batch_size rounded down or up
    with the probability of its fraction, so that the run trains r samples per recorded
    position on average whichever tracks it plays (a side-10 iteration records about six
    times the positions of a side-4 one, and a fixed count gives both the same steps). The
    draw comes from the train generator, so a resumed run repeats it."""
    if config.samples_per_position <= 0:
        return config.steps_per_iteration
    expected = max(int(new_positions), 0) * config.samples_per_position / config.batch_size
    whole = math.floor(expected)
    return whole + int(rng.random() < expected - whole)


def learner_iteration(trainer: Trainer, window: ReplayWindow, config: TrainConfig,
                      rng: np.random.Generator, board=None,
                      selfplay_seconds: float = 0.0, new_positions: int = 0) -> LearnerResult:
    """Refresh the replay window and take `training_steps` optimiser steps on it (the
    iteration brought `new_positions` recorded positions), at the learning rate of the run's
    self-play clock `selfplay_seconds` (train.anneal_minutes).

    With `config.augment_symmetries`, every minibatch sample is shown under a random symmetry
    of its board, drawn anew each time it is drawn (`board`, or each sample's own side's
    board when None, as in a mix of tracks).
    """
    trainer.selfplay_seconds = float(selfplay_seconds)
    window.refresh()
    if window.num_samples < max(config.min_window_samples, 1):
        return LearnerResult(trainer.step, None, window.num_samples)
    steps = training_steps(config, new_positions, rng)
    if steps == 0:
        return LearnerResult(trainer.step, None, window.num_samples)
    batches = window.batches(steps, config.batch_size, rng)
    if config.augment_symmetries:
        batches = (random_symmetries(batch, board, rng) for batch in batches)
    metrics = trainer.train_steps(batches)
    return LearnerResult(trainer.step, metrics.as_dict(), window.num_samples)


def discard_shards_from(directory: Path, iteration: int) -> None:
    """Remove shards of iterations >= `iteration` (work after the resumed checkpoint)."""
    for path in list_shards(directory):
        if path.name >= shard_filename(iteration):
            path.unlink(missing_ok=True)


def warn(message: str) -> None:
    """A warning line on stderr (the default `log` of the resume functions)."""
    print(message, file=sys.stderr, flush=True)


def find_resume_checkpoint(config: TrainLoopConfig, checkpoint_dir: Path,
                           log: Callable[[str], None] = warn) -> Checkpoint | None:
    """The checkpoint a run resumes from: None when not resuming or when there is none,
    else the newest intact one. Each newer damaged file skipped gets a line through `log`
    naming it and its problem; CheckpointError (one line) when every checkpoint is damaged.
    A damaged file is left where it is. A run with none yet and `loop.start_from` starts
    from that checkpoint, written into `checkpoint_dir` first (grown to `network.blocks`)."""
    if not config.loop.resume:
        return None
    checkpoint, refused = load_latest_intact_checkpoint(checkpoint_dir)
    for message in refused:
        log(f"warning: skipping {message}; resuming from {checkpoint.path}")
    if checkpoint is None and config.loop.start_from:
        path = start_checkpoint(config.loop.start_from, config.network, checkpoint_dir)
        log(f"train: starting from {config.loop.start_from} as {path} "
            f"(a {describe_network(config.network)} net)")
        checkpoint = load_checkpoint(path)
    return checkpoint


def start_checkpoint(source: str, network: NetworkConfig, checkpoint_dir: Path) -> Path:
    """Write the checkpoint `source` into `checkpoint_dir` for a run whose network is
    `network`: as it is, or grown to `network.blocks` and `network.channels`. ValueError
    (one line) when the nets differ in anything but a deeper or wider trunk."""
    check_start_network(source, load_checkpoint(source), network)
    return grow_checkpoint(source, network.blocks, checkpoint_dir, network.channels)


def check_start_from(config: TrainLoopConfig) -> None:
    """Refuse, before a run touches its folder, a `loop.start_from` it would start from
    (its run_dir holds no checkpoint yet) that cannot be read (CheckpointError) or whose net
    does not fit `network` (ValueError); one line each."""
    loop = config.loop
    if not (loop.resume and loop.start_from and loop.run_dir):
        return
    if list_checkpoints(Path(loop.run_dir) / "checkpoints"):
        return  # the run continues from its own checkpoints
    check_start_network(loop.start_from, load_checkpoint(loop.start_from), config.network)


def check_start_network(source: str, saved: Checkpoint, network: NetworkConfig) -> None:
    """ValueError (one line) unless `network` is the net of `saved` or one with a deeper or
    wider trunk."""
    theirs = NetworkConfig.from_dict(dict(saved.network_args["config"]))
    mine = dataclasses.replace(network, blocks=theirs.blocks, channels=theirs.channels)
    if mine != theirs:
        differing = [f"{name} {getattr(theirs, name)!r} (this run: {getattr(mine, name)!r})"
                     for name in NetworkConfig.__dataclass_fields__
                     if getattr(mine, name) != getattr(theirs, name)]
        raise ValueError(f"start_from {source}: its net differs from this run's network: "
                         f"{', '.join(differing)}")
    for name in ("blocks", "channels"):
        if getattr(network, name) < getattr(theirs, name):
            raise ValueError(f"start_from {source}: its net has {getattr(theirs, name)} "
                             f"{name}, network.{name} is {getattr(network, name)} (a net can "
                             f"grow, not shrink)")


_FIND = object()  # resume_or_start's default: look for the checkpoint itself


def resume_or_start(config: TrainLoopConfig, checkpoint_dir: Path, shard_dir: Path,
                    device, generators: dict[str, np.random.Generator],
                    resume_from: Checkpoint | None | object = _FIND,
                    log: Callable[[str], None] = warn):
    """(trainer, LoopState): from the newest intact checkpoint when resuming, else fresh.

    resume_from: the checkpoint `find_resume_checkpoint` already chose (None: start fresh);
    by default it is looked up here, with its warnings through `log`.
    """
    checkpoint = (find_resume_checkpoint(config, checkpoint_dir, log) if resume_from is _FIND
                  else resume_from)
    if checkpoint is None:
        torch.manual_seed(config.loop.seed)
        trainer = Trainer(build_fresh_network(config), config.train, device)
        discard_shards_from(shard_dir, 0)
        return trainer, LoopState()
    trainer = Trainer(build_network(checkpoint, load_weights=False), config.train, device)
    restore_trainer(checkpoint, trainer)
    if trainer.net.config != config.network:
        # A run goes on with the net it has; only start_from grows one.
        log(f"train: resuming the checkpoint's {describe_network(trainer.net.config)} net; "
            f"network ({describe_network(config.network)}) is not used")
    restore_rng_states(checkpoint.rng_states, generators)
    counters = checkpoint.counters
    discard_shards_from(shard_dir, counters.iteration)
    return trainer, loop_state_of(checkpoint)


def describe_network(network: NetworkConfig) -> str:
    """`6x32` for a net of 6 blocks of 32 channels (the start-up line's short form)."""
    return f"{network.blocks}x{network.channels}"


def loop_state_of(checkpoint: Checkpoint) -> LoopState:
    """The LoopState a checkpoint stored (its counters, fair komis, iterations per track)."""
    extra = checkpoint.extra
    fair_komi = extra.get("fair_komi")
    return LoopState(
        counters=checkpoint.counters,
        fair_komi=None if fair_komi is None else float(fair_komi),
        fair_komis={str(key): float(value)
                    for key, value in (extra.get("fair_komis") or {}).items()},
        track_iterations={str(key): int(value)
                          for key, value in (extra.get("track_iterations") or {}).items()},
        # absent from checkpoints written before the mix ran on a clock of seconds: the
        # clock then starts at zero for every track
        track_seconds={str(key): float(value)
                       for key, value in (extra.get("track_seconds") or {}).items()})


def save_loop_checkpoint(config: TrainLoopConfig, trainer: Trainer, state: LoopState,
                         checkpoint_dir: Path, generators,
                         log: Callable[[str], None] = warn) -> Path:
    """Save the loop's checkpoint; a name held by something that is not a regular file (a
    directory, a FIFO) is left as it is, the checkpoint saved beside it and a line said."""
    extra = {"fair_komi": state.fair_komi, "fair_komis": dict(state.fair_komis),
             "track_iterations": dict(state.track_iterations),
             "track_seconds": dict(state.track_seconds),
             "tracks": [str(track) for track in run_tracks(config)]}
    return save_checkpoint(checkpoint_dir, trainer, state.counters,
                           config=config.resolved_config, rules=rules_dict(config),
                           generators=generators, extra=extra,
                           keep=config.loop.keep_checkpoints, log=log)


def run_tracks(config: TrainLoopConfig) -> list[Track]:
    """The tracks a run plays: its mix's, or its one board and rules."""
    return TrackMix(config.mix, config.rules).tracks


def iteration_scalars(played: SelfPlayResult, learned: LearnerResult,
                      track: Track | None = None) -> dict[str, float]:
    """TensorBoard scalars of one iteration; with `track` (a run of several tracks) the
    track's own curves too, under `selfplay/<track key>/...`."""
    stats = played.stats
    seconds = max(stats.seconds, 1e-9)
    scalars = {
        "selfplay/positions_per_s": stats.moves / seconds,
        "selfplay/recorded_positions_per_s": stats.positions / seconds,
        "selfplay/games_per_s": stats.games / seconds,
        "selfplay/game_length": stats.mean_game_length,
        "selfplay/black_win_rate": stats.black_win_rate,
        "selfplay/draw_rate": stats.draws / max(stats.games, 1),
        "selfplay/fair_komi": played.fair_komi,
        "selfplay/mean_komi": float(np.mean(stats.komis)) if stats.komis else 0.0,
        "train/window_samples": float(learned.window_samples),
    }
    if track is not None:
        for name in ("game_length", "black_win_rate", "fair_komi", "mean_komi",
                     "positions_per_s"):
            scalars[f"selfplay/{track.key}/{name}"] = scalars[f"selfplay/{name}"]
    for name, value in (learned.metrics or {}).items():
        scalars[name if name.startswith("loss/") else f"train/{name}"] = value
    return scalars
