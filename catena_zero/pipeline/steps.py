"""The steps of a training iteration, shared by every runtime (inline, processes, Ray).

Each runtime arranges the same plain functions its own way (where a run starts is
`resume.resume_run`)::

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

from catena_zero.arena.specs import AgentFactory
from catena_zero.data import ReplayWindow, ShardMeta, random_symmetries, write_shard
from catena_zero.data.game_record import record_from_actions, save_record
from catena_zero.komi.fair import estimate_fair_komi, smoothed_fair_komi
from catena_zero.mcts.config import SearchConfig
from catena_zero.network import InferenceModel, PolicyValueNet
from catena_zero.pipeline.config import TrainLoopConfig
from catena_zero.pipeline.messages import LearnerResult, LoopState, SelfPlayResult, WeightsMessage
from catena_zero.pipeline.tracks import TrackMix
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Engine, Rules, Track
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.selfplay.evaluator import NetworkEvaluator
from catena_zero.selfplay.selfplay import KomiSampler, SampleGame, SelfPlay
from catena_zero.train.checkpoint import save_checkpoint
from catena_zero.train.config import TrainConfig
from catena_zero.train.trainer import Trainer


def set_torch_threads(threads: int, automatic: int | None = None) -> None:
    """`LoopConfig.threads` in the process that runs the network, on every runtime: the inline
    process, each self-play worker (a process or a Ray actor) and the learner. 0 means
    automatic: `automatic` threads when given (a worker or the learner: 1, since it holds at
    most one CPU), else torch's default."""
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


# (search settings, device) -> the factory of the league's opponents: its networks are loaded
# once a process, not once an iteration.
_OPPONENT_FACTORIES: dict[tuple[str, str], AgentFactory] = {}


def opponent_search(config: TrainLoopConfig) -> SearchConfig:
    """How a network opponent of the league searches: the run's search at its full
    self-play simulations."""
    return dataclasses.replace(config.search, num_simulations=config.selfplay.full_simulations)


def opponent_agents(config: TrainLoopConfig, rules: Rules) -> list:
    """The agents of `selfplay.opponents` for `rules`, in order (arena specs: uct:N, greedy,
    random, checkpoint:PATH; a network opponent searches as `opponent_search` says).
    ValueError, one line, for a spec or file the arena cannot build."""
    search = opponent_search(config)
    key = (repr(search), config.loop.device)  # (SearchConfig is not hashable)
    if key not in _OPPONENT_FACTORIES:
        _OPPONENT_FACTORIES[key] = AgentFactory(rules, search, config.loop.device)
    factory = _OPPONENT_FACTORIES[key].for_rules(rules)
    return [factory(spec) for spec in config.selfplay.opponents]


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
    opponents = (opponent_agents(config, engine.rules)
                 if selfplay_config.opponents_play(engine.rules.side) else None)
    selfplay = SelfPlay(engine, evaluate_fn, config.search, selfplay_config, komi_sampler,
                        opponents)
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
               **({"opponent_games": stats.opponent_games,
                   "opponent_score": stats.opponent_score,
                   "opponent_results": stats.opponent_results} if stats.opponent_games else {}),
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


def warn(message: str) -> None:
    """A warning line on stderr (the default `log` of the checkpoint and resume functions)."""
    print(message, file=sys.stderr, flush=True)


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
    if stats.opponent_games:  # games against the league (selfplay.opponent_share)
        scalars["selfplay/opponent_games"] = float(stats.opponent_games)
        scalars["selfplay/opponent_score"] = stats.opponent_score / stats.opponent_games
        for name, (games, score) in stats.opponent_results.items():
            scalars[f"selfplay/opponent/{name}/score"] = score / games
    if track is not None:
        for name in ("game_length", "black_win_rate", "fair_komi", "mean_komi",
                     "positions_per_s", "opponent_score"):
            if f"selfplay/{name}" in scalars:
                scalars[f"selfplay/{track.key}/{name}"] = scalars[f"selfplay/{name}"]
    for name, value in (learned.metrics or {}).items():
        scalars[name if name.startswith("loss/") else f"train/{name}"] = value
    return scalars
