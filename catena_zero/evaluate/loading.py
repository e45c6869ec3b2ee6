"""The net to evaluate: a run's newest checkpoint, a checkpoint file or an exported model file,
with its rules, its evaluator, the run's search settings and the komi to play at.

Every mode of `catena-zero evaluate` starts here. The search is the run's own (the `mcts`
group its checkpoint stores; defaults for a model file, which stores none) with the
evaluation's simulations and root noise, exact endgames off (an evaluation measures what the
net learned, so the solver does not play for it; `search.exact_endgame_cells=K` puts it
back) and the caller's overrides on top.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from catena_zero.arena.specs import network_file_kind
from catena_zero.evaluate.config import EvaluateConfig, EvaluationError
from catena_zero.export import load_model_file
from catena_zero.export.evaluator import model_file_evaluator
from catena_zero.komi.fair import SelfPlayBalance, estimate_fair_komi, selfplay_fair_komi
from catena_zero.mcts.config import SearchConfig
from catena_zero.rules import Engine, Rules
from catena_zero.selfplay.evaluator import NetworkEvaluator
from catena_zero.train import Checkpoint, build_network, latest_checkpoint, load_checkpoint


@dataclass(frozen=True)
class LoadedNet:
    """A net ready to play: where it came from, its rules and evaluator, what the run stored."""

    path: Path  # the checkpoint or model file
    rules: Rules
    engine: Engine
    evaluator: Any  # EvaluateFn: a NetworkEvaluator of the checkpoint's or model file's net
    checkpoint: Checkpoint | None  # None for a model file
    stored_config: Mapping[str, Any]  # the run's config groups ({} for a model file)
    rules_record: dict[str, Any]  # the rules as the file records them: side, game_type, scoring
    counters: dict[str, int] | None  # iteration, step, games... (None for a model file)
    label: str  # "checkpoint P" or "model file P"
    description: str  # the label with the counters: "checkpoint P (iteration 2, step 8, ...)"

    @property
    def network(self) -> torch.nn.Module:
        """The torch network of a checkpoint (the value-loss measurements need its logits)."""
        if self.checkpoint is None:
            raise EvaluationError(f"{self.path} is a model file: no network to measure losses")
        return self.evaluator.net


def checkpoint_path(config: EvaluateConfig) -> Path:
    """config.checkpoint, or the newest checkpoint of config.run_dir."""
    if config.checkpoint:
        return Path(config.checkpoint)
    if config.run_dir:
        path = latest_checkpoint(Path(config.run_dir) / "checkpoints")
        if path is None:
            raise EvaluationError(f"no checkpoint in {config.run_dir}/checkpoints")
        return path
    raise EvaluationError("give run_dir, checkpoint or model_file (the net to evaluate)")


def load_net(config: EvaluateConfig) -> LoadedNet:
    """The net `config` names, on the CPU at config.precision with config.weights.

    Either key may name either kind of file: the header decides (`network_file_kind`), so
    `checkpoint=side4.pt` evaluates a model file and `model_file=CK` a checkpoint.
    CheckpointError / ModelFileError (ValueErrors naming the file) when it cannot be read."""
    named = config.model_file or config.checkpoint
    if named:
        kind = network_file_kind(named)
        try:
            config = dataclasses.replace(config, model_file=named if kind == "model" else "",
                                         checkpoint="" if kind == "model" else named)
        except ValueError as error:  # generalisation of a model file
            raise EvaluationError(f"{named} is a model file: {error}") from None
    if config.model_file:
        if config.precision not in ("auto", "float32") or config.weights != "published":
            raise EvaluationError("a model file plays in float32 with its exported weights: "
                                  "leave precision and weights at their defaults")
        model = load_model_file(config.model_file)
        rules = model.rules()
        engine = Engine(rules)
        metadata = model.metadata
        return LoadedNet(path=model.path, rules=rules, engine=engine,
                         evaluator=model_file_evaluator(model, engine, "float32"),
                         checkpoint=None,
                         stored_config={}, rules_record={"side": metadata.side,
                                                         "game_type": metadata.game_type,
                                                         "scoring": metadata.scoring},
                         counters=None, label=f"model file {model.path}",
                         description=f"model file {model.path} (training steps "
                                     f"{metadata.training_steps})")
    path = checkpoint_path(config)
    checkpoint = load_checkpoint(path)
    rules = Rules(**checkpoint.rules)
    engine = Engine(rules)
    evaluator = NetworkEvaluator(build_network(checkpoint, weights=config.weights), engine,
                                 "cpu", config.precision)
    counters = checkpoint.counters
    stored = checkpoint.config if isinstance(checkpoint.config, dict) else {}
    return LoadedNet(path=path, rules=rules, engine=engine, evaluator=evaluator,
                     checkpoint=checkpoint, stored_config=stored, rules_record=checkpoint.rules,
                     counters=counters.to_dict(), label=f"checkpoint {path}",
                     description=f"checkpoint {path} (iteration {counters.iteration}, step "
                                 f"{counters.step}, games {counters.games})")


def stored_config(cls, stored: Mapping[str, Any], group: str, **overrides):
    """`cls` from the fields it knows of the stored config group `group` (defaults for the
    rest: a run of an older code version may lack some), with `overrides` on top."""
    known = {field.name for field in dataclasses.fields(cls)}
    values = {key: value for key, value in (stored.get(group) or {}).items() if key in known}
    return cls(**(values | overrides))


def search_config_of(net: LoadedNet, config: EvaluateConfig,
                     search_overrides: Mapping[str, Any] | None = None) -> SearchConfig:
    """The run's search (mcts group) with config.simulations, config.gumbel_scale, exact
    endgames off and `search_overrides` (SearchConfig fields, already typed) on top."""
    unknown = sorted(set(search_overrides or {}) - {f.name for f in dataclasses.fields(
        SearchConfig)})
    if unknown:
        raise EvaluationError(f"unknown search setting {', '.join(unknown)}")
    try:
        evaluation = {"num_simulations": config.simulations,
                      "gumbel_scale": config.gumbel_scale, "exact_endgame_cells": 0}
        return stored_config(SearchConfig, net.stored_config, "mcts",
                             **(evaluation | dict(search_overrides or {})))
    except (TypeError, ValueError) as error:
        raise EvaluationError(f"search: {error}") from error


@dataclass(frozen=True)
class KomiChoice:
    """The komi an evaluation plays at and where it came from."""

    komi: int
    fair_komi_estimate: float  # the network's estimate (empty-board value crossing zero)
    selfplay: dict | None  # the self-play sweep's report (SelfPlayBalance + seconds), if run
    source: str  # "evaluate.komi" (given), "selfplay" or "network"
    text: str  # the line saying so


def komi_to_play(net: LoadedNet, search: SearchConfig, config: EvaluateConfig) -> KomiChoice:
    """config.komi, or the net's fair komi rounded into the rules' range: its self-play
    balance (komi_from selfplay, a sweep with `search`) or its network estimate. A game type
    without komi has one komi to play: no sweep, whatever komi_from says."""
    fair_komi = estimate_fair_komi(net.engine, net.evaluator)
    komi = net.rules.nearest_komi(fair_komi) if config.komi is None else config.komi
    selfplay = None
    low, high = net.rules.komi_range
    if low < high and config.komi is None and config.komi_from == "selfplay":
        start = time.perf_counter()
        balance: SelfPlayBalance = selfplay_fair_komi(net.rules, net.evaluator, search,
                                                      config.komi_games, config.seed)
        selfplay = balance.to_dict() | {"seconds": time.perf_counter() - start}
        komi = net.rules.nearest_komi(balance.fair_komi)
    source = "evaluate.komi" if config.komi is not None else (
        "selfplay" if selfplay is not None else "network")
    measured = "" if selfplay is None else (
        f", self-play {selfplay['fair_komi']:.2f} [{selfplay['low']:.2f}, "
        f"{selfplay['high']:.2f}] ({selfplay['seconds']:.0f} s)")
    text = f"fair komi: network {fair_komi:.2f}{measured} -> komi {komi} ({source})"
    return KomiChoice(int(komi), float(fair_komi), selfplay, source, text)


@dataclass(frozen=True)
class NetAtKomi:
    """A net, its evaluation search and the komi to play it at."""

    net: LoadedNet
    search: SearchConfig
    komi: KomiChoice


def net_at_komi(config: EvaluateConfig,
                search_overrides: Mapping[str, Any] | None = None) -> NetAtKomi:
    """The net of `config` (config.threads torch threads), its search and its komi."""
    torch.set_num_threads(config.threads)
    net = load_net(config)
    search = search_config_of(net, config, search_overrides)
    return NetAtKomi(net, search, komi_to_play(net, search, config))
