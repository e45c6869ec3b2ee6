"""The training gate of a run that mixes tracks: each due checkpoint plays each track's
champion once, at that track's fair komi, with one copy however many tracks it champions, and
a crash in the middle of a track replays only the tracks not yet recorded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.arena import gating
from catena_zero.arena.config import GateConfig, TrainingGateConfig
from catena_zero.arena.gating import GateResult, MixGateResult
from catena_zero.arena.match import ColourRecord, MatchResult
from catena_zero.arena.registry import ChampionEntry, ChampionRegistry
from catena_zero.arena.specs import AgentFactory
from catena_zero.arena.stats import match_score, wilson_interval
from catena_zero.arena.training_gate import (
    PENDING_SUFFIX,
    PendingGate,
    TrainingGate,
    gate_record_path,
    read_gate_record,
)
from catena_zero.mcts import SearchConfig
from catena_zero.pipeline.messages import CheckpointEvent
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Rules, Track
from catena_zero.train.checkpoint import CheckpointError, Counters

torch.set_num_threads(1)
SIDE2, SIDE3, SIDE4 = Track(2, "komi", "standard"), Track(3, "komi", "standard"), Track(
    4, "komi", "standard")
MIX = (SIDE2, SIDE3)
SEARCH = SearchConfig(num_simulations=2, max_considered_actions=2)


class Crash(Exception):
    """Stands in for the process dying in the middle of a gate match."""


def _checkpoint(directory: Path, step: int, planes: int = NUM_PLANES) -> Path:
    """A real training checkpoint of a fresh size-general 1-block network."""
    from catena_zero.network import NetworkConfig, PolicyValueNet
    from catena_zero.train.checkpoint import save_checkpoint
    from catena_zero.train.config import TrainConfig
    from catena_zero.train.trainer import Trainer

    torch.manual_seed(step)
    net = PolicyValueNet(planes, NUM_GLOBALS, NetworkConfig(blocks=1, channels=8,
                                                            global_pool_every=0))
    trainer = Trainer(net, TrainConfig(), "cpu")
    trainer.step = step
    return save_checkpoint(directory, trainer, Counters(step=step), config={},
                           rules={"side": 6, "game_type": "komi", "scoring": "standard"}, keep=0)


def _event(run_dir: Path, iteration: int, tracks=MIX, fair_komis=None) -> CheckpointEvent:
    path = _checkpoint(run_dir / "checkpoints", 10 * iteration)
    return CheckpointEvent(path, Counters(step=10 * iteration, iteration=iteration), 0.4,
                           run_dir, tracks, {} if fair_komis is None else fair_komis)


def _gate(registry: Path, tracks: tuple[str, ...] = (), log=None) -> TrainingGate:
    settings = TrainingGateConfig(every_iterations=1, opening_plies=0, tracks=tracks,
                                  gate=GateConfig(num_games=2, registry=str(registry)))
    return gating.make_training_gate(Rules(side=2), settings, search_config=SEARCH,
                                     device="cpu", log=log)


def _synthetic(rules: Rules, wins: int, draws: int, losses: int, komi: int) -> MatchResult:
    games = wins + draws + losses
    low, high = wilson_interval(wins + 0.5 * draws, games)
    return MatchResult("candidate", "champion", Track.from_rules(rules).key, komi, 0, wins, draws,
                       losses, ColourRecord(wins, draws, losses), ColourRecord(0, 0, 0),
                       float(match_score(wins, draws, losses)), (float(low), float(high)),
                       games // 2, [])


class Scripted:
    """Stands in for play_match: the candidate wins every game on the sides in `wins` and
    loses every game elsewhere; `crash_on` sides raise Crash instead."""

    def __init__(self, wins=(), crash_on=()):
        self.wins, self.crash_on = set(wins), set(crash_on)
        self.calls: list[tuple[int, int]] = []  # (side, komi)

    def __call__(self, rules, agent_a, agent_b, num_games, komi=0, **kwargs):
        self.calls.append((rules.side, komi))
        if rules.side in self.crash_on:
            raise Crash("killed")
        won = rules.side in self.wins
        return _synthetic(rules, num_games if won else 0, 0, 0 if won else num_games, komi)


def _champions(registry: Path) -> dict[str, str]:
    file = ChampionRegistry(registry)
    return {track.key: file.champion(track).checkpoint for track in MIX if file.champion(track)}


def _store_names(gate: TrainingGate) -> list[str]:
    return sorted(path.name for path in gate.store.iterdir())


def test_the_first_checkpoint_champions_every_track_with_one_copy(tmp_path: Path) -> None:
    registry = tmp_path / "champions.json"
    gate = _gate(registry)
    event = _event(tmp_path / "run", 1, fair_komis={SIDE2.key: 0.4, SIDE3.key: 1.6})
    result = gate(event)
    assert isinstance(result, MixGateResult)
    assert [(r.track, r.reason, r.promoted) for r in result.results] == [
        (SIDE2.key, "first", True), (SIDE3.key, "first", True)]
    champions = _champions(registry)
    assert len(set(champions.values())) == 1 and set(champions) == {SIDE2.key, SIDE3.key}
    assert _store_names(gate) == [Path(champions[SIDE2.key]).name]  # one copy, no marker
    file = ChampionRegistry(registry)
    assert (file.champion(SIDE2).fair_komi, file.champion(SIDE3).fair_komi) == (0.4, 1.6)
    record = read_gate_record(gate_record_path(tmp_path / "run", 1))
    assert record["format_version"] == 2 and record["pending"] == []
    assert [(e["track"], e["komi"], e["fair_komi"], e["champion"]) for e in record["tracks"]] == [
        (SIDE2.key, 0, 0.4, None), (SIDE3.key, 2, 1.6, None)]
    assert "promoted" not in record  # a gate of several tracks keeps them in its entries
    assert record["summary"] == result.summary() and len(result.summary().splitlines()) == 2
    assert gate(event) is None and gate.prepare(event) is None  # gated once


def test_a_split_verdict_leaves_each_track_its_own_champion(tmp_path: Path,
                                                            monkeypatch) -> None:
    registry = tmp_path / "champions.json"
    run_dir = tmp_path / "run"
    gate = _gate(registry)
    first = gate(_event(run_dir, 1)).results[0].candidate
    scripted = Scripted(wins={2})
    monkeypatch.setattr(gating, "play_match", scripted)
    estimates = {SIDE2.key: 2.7, SIDE3.key: 5.2}
    second = gate(_event(run_dir, 2, fair_komis=estimates))
    assert scripted.calls == [(2, 3), (3, 5)]  # each track at its own fair komi
    assert second.promoted == [SIDE2.key]
    candidate = second.results[0].candidate
    assert _champions(registry) == {SIDE2.key: candidate, SIDE3.key: first}
    assert _store_names(gate) == sorted([Path(first).name, Path(candidate).name])
    assert ChampionRegistry(registry).champion(SIDE2).fair_komi == 2.7
    scalars = second.scalars()
    assert scalars[f"gate/{SIDE2.key}/promoted"] == 1.0
    assert scalars[f"gate/{SIDE3.key}/promoted"] == 0.0
    assert scalars[f"gate/{SIDE3.key}/score"] == 0.0 and "gate/promoted" not in scalars
    record = read_gate_record(gate_record_path(run_dir, 2))
    assert [(e["track"], e["champion"], e["promoted"], e["score"], e["games"], e["komi"])
            for e in record["tracks"]] == [(SIDE2.key, first, True, 1.0, 2, 3),
                                           (SIDE3.key, first, False, 0.0, 2, 5)]
    # A checkpoint that loses on both tracks leaves no copy; the two champions' stay.
    monkeypatch.setattr(gating, "play_match", Scripted())
    third = gate(_event(run_dir, 3))
    assert third.promoted == [] and not Path(third.results[0].candidate).exists()
    assert _store_names(gate) == sorted([Path(first).name, Path(candidate).name])
    # The first copy, champion of no track now, stays as the history's (as a single track's).
    monkeypatch.setattr(gating, "play_match", Scripted(wins={3}))
    fourth = gate(_event(run_dir, 4))
    assert fourth.promoted == [SIDE3.key] and Path(first).is_file()
    assert gate.recover(run_dir) == [] and len(_store_names(gate)) == 3


def test_a_crash_in_the_second_track_replays_only_that_track(tmp_path: Path,
                                                             monkeypatch) -> None:
    registry = tmp_path / "champions.json"
    run_dir = tmp_path / "run"
    _gate(registry)(_event(run_dir, 1))
    crashing = Scripted(wins={2}, crash_on={3})
    monkeypatch.setattr(gating, "play_match", crashing)
    with pytest.raises(Crash):
        _gate(registry)(_event(run_dir, 2))
    assert crashing.calls == [(2, 0), (3, 0)]
    (marker,) = _gate(registry).store.glob("*" + PENDING_SUFFIX)
    pending = PendingGate.from_file(marker)
    assert pending.iteration == 2 and pending.tracks == (SIDE3.key,)
    record = read_gate_record(gate_record_path(run_dir, 2))
    assert [e["track"] for e in record["tracks"]] == [SIDE2.key]
    assert record["pending"] == [SIDE3.key]

    replay = Scripted()
    monkeypatch.setattr(gating, "play_match", replay)
    lines: list[str] = []
    results = _gate(registry, log=lines.append).recover(run_dir)
    assert replay.calls == [(3, 0)]  # side 2 was recorded: not played again
    assert [(r.track, r.promoted) for r in results] == [(SIDE3.key, False)]
    assert any(f"again on {SIDE3.key}" in line for line in lines)
    record = read_gate_record(gate_record_path(run_dir, 2))
    assert [(e["track"], e["promoted"]) for e in record["tracks"]] == [
        (SIDE2.key, True), (SIDE3.key, False)]
    assert record["pending"] == [] and not marker.exists()
    assert _champions(registry)[SIDE2.key] == pending.candidate
    assert Path(pending.candidate).is_file()  # side 2's champion
    assert _gate(registry).recover(run_dir) == [] and replay.calls == [(3, 0)]


def test_a_promotion_made_just_before_a_crash_is_recorded_not_replayed(tmp_path: Path,
                                                                      monkeypatch) -> None:
    registry = tmp_path / "champions.json"
    run_dir = tmp_path / "run"
    _gate(registry)(_event(run_dir, 1))
    gate = _gate(registry)
    monkeypatch.setattr(gating, "play_match", Scripted(wins={2, 3}))

    def crash_before_the_record(pending, record):
        raise Crash("killed after the promotion")

    monkeypatch.setattr(gate, "_finish", crash_before_the_record)
    with pytest.raises(Crash):
        gate(_event(run_dir, 2))
    assert not gate_record_path(run_dir, 2).exists()
    replay = Scripted(wins={3})
    monkeypatch.setattr(gating, "play_match", replay)
    results = _gate(registry).recover(run_dir)
    assert replay.calls == [(3, 0)]  # side 2 had promoted it: recorded, not played
    assert [(r.track, r.promoted) for r in results] == [(SIDE2.key, True), (SIDE3.key, True)]
    record = read_gate_record(gate_record_path(run_dir, 2))
    assert [e["games"] for e in record["tracks"]] == [2, 2]
    assert len(ChampionRegistry(registry).history(SIDE2)) == 2
    assert len(set(_champions(registry).values())) == 1


def test_configured_tracks_gate_only_those_of_the_mix(tmp_path: Path) -> None:
    registry = tmp_path / "champions.json"
    lines: list[str] = []
    gate = _gate(registry, tracks=("3/komi/standard", "5/komi/standard"), log=lines.append)
    result = gate(_event(tmp_path / "run", 1, tracks=(SIDE2, SIDE3, SIDE4)))
    assert isinstance(result, GateResult) and result.track == SIDE3.key
    assert result.scalars() == {"gate/promoted": 1.0}  # one track gated: plain names
    assert ChampionRegistry(registry).tracks() == [SIDE3.key]
    record = read_gate_record(gate_record_path(tmp_path / "run", 1))
    assert [e["track"] for e in record["tracks"]] == [SIDE3.key] and record["promoted"]
    assert sum("5/komi/standard" in line and "not in the run's mix" in line
               for line in lines) == 1
    gate(_event(tmp_path / "run", 2, tracks=(SIDE2, SIDE3, SIDE4)))
    assert sum("not in the run's mix" in line for line in lines) == 1  # said once
    assert _gate(registry, tracks=("5/komi/standard",))(_event(tmp_path / "run", 3)) is None
    with pytest.raises(ValueError, match="TrainingGateConfig.tracks"):
        TrainingGateConfig(tracks=("3/komi",))


def test_a_marker_of_format_1_is_played_on_the_hooks_track(tmp_path: Path,
                                                          monkeypatch) -> None:
    registry = tmp_path / "champions.json"
    run_dir = (tmp_path / "run").resolve()
    gate = _gate(registry)
    gate.store.mkdir(parents=True)
    source = _checkpoint(run_dir / "checkpoints", 10)
    candidate = gate.store / "run-copy.pt"
    candidate.write_bytes(source.read_bytes())
    marker = Path(str(candidate) + PENDING_SUFFIX)
    marker.write_text(json.dumps({
        "format": "catena_zero.pending_gate", "format_version": 1, "candidate": str(candidate),
        "source": str(source), "run_dir": str(run_dir), "iteration": 1, "step": 10,
        "fair_komi": 1.2}))
    results = gate.recover(run_dir)
    assert [(r.track, r.reason, r.komi) for r in results] == [(SIDE2.key, "first", 1)]
    record = read_gate_record(gate_record_path(run_dir, 1))
    assert record["track"] == SIDE2.key and record["promoted"] and record["fair_komi"] == 1.2
    assert not marker.exists() and candidate.is_file()
    marker.write_text(json.dumps({"format": "catena_zero.pending_gate", "format_version": 2,
                                  "candidate": "x.pt", "tracks": "side2-komi-standard"}))
    with pytest.raises(ValueError, match="unreadable"):
        PendingGate.from_file(marker)


def test_a_real_mixed_gate_plays_each_track_on_its_own_board(tmp_path: Path) -> None:
    registry = tmp_path / "champions.json"
    gate = _gate(registry)
    gate(_event(tmp_path / "run", 1))
    second = gate(_event(tmp_path / "run", 2))
    assert [r.match.rules for r in second.results] == [SIDE2.key, SIDE3.key]
    assert [r.match.num_games for r in second.results] == [2, 2]


@pytest.mark.parametrize("side", [2, 3, 5])
def test_a_general_checkpoint_plays_as_an_agent_on_any_side(tmp_path: Path, side: int) -> None:
    path = _checkpoint(tmp_path, 1)  # stored rules: side 6
    registry = tmp_path / "champions.json"
    ChampionRegistry(registry).promote(Track(side, "komi", "standard"),
                                       ChampionEntry(str(path)))
    factory = AgentFactory(Rules(side=side), search_config=SEARCH, device="cpu",
                           registry=registry)
    from catena_zero.rules import Engine

    engine = Engine(Rules(side=side))
    states = engine.new_games(3)
    legal = engine.legal_actions(states)
    for spec in (f"checkpoint:{path}", "champion"):
        actions = factory(spec).select_actions(engine, states, np.random.default_rng(0))
        assert legal[np.arange(3), actions].all()


def test_factories_of_other_rules_share_the_loaded_network(tmp_path: Path) -> None:
    path = _checkpoint(tmp_path, 1)
    factory = AgentFactory(Rules(side=2), search_config=SEARCH, device="cpu")
    other = factory.for_rules(Rules(side=5))
    assert factory.for_rules(Rules(side=2)) is factory
    on_two, on_five = factory.evaluator(str(path)), other.evaluator(str(path))
    assert on_two.model is on_five.model and on_two.engine.board.side == 2
    assert on_five.engine.board.side == 5


def test_a_checkpoint_the_observation_cannot_feed_is_refused(tmp_path: Path) -> None:
    path = _checkpoint(tmp_path, 1, planes=NUM_PLANES + 1)
    with pytest.raises(CheckpointError, match=f"reads {NUM_PLANES + 1} planes"):
        AgentFactory(Rules(side=3), device="cpu")(f"checkpoint:{path}")
