"""Gating decisions (threshold and SPRT) on synthetic results, and the registry updates."""

from __future__ import annotations

import pytest

from catena_zero.arena import gating
from catena_zero.arena.agents import GreedyAgent, RandomAgent
from catena_zero.arena.config import GateConfig
from catena_zero.arena.match import ColourRecord, MatchResult
from catena_zero.arena.registry import ChampionEntry, ChampionRegistry, Track
from catena_zero.arena.sprt import SprtConfig
from catena_zero.arena.stats import match_score, wilson_interval
from catena_zero.rules import Rules

RULES = Rules(side=3)
TRACK = Track.from_rules(RULES)


def _synthetic(wins: int, draws: int, losses: int, name_a="candidate", name_b="champion"
               ) -> MatchResult:
    games = wins + draws + losses
    low, high = wilson_interval(wins + 0.5 * draws, games)
    half = ColourRecord(wins // 2, draws // 2, losses // 2)
    rest = ColourRecord(wins - half.wins, draws - half.draws, losses - half.losses)
    return MatchResult(name_a, name_b, "side3-komi-standard", 0, 0, wins, draws, losses,
                       half, rest, float(match_score(wins, draws, losses)),
                       (float(low), float(high)), games // 2, [])


class ScriptedMatches:
    """Stands in for play_match: returns the queued (W, D, L) per call, scaled to its games."""

    def __init__(self, outcomes, on_call=None):
        self.outcomes = list(outcomes)
        self.calls = []
        self.on_call = on_call

    def __call__(self, rules, agent_a, agent_b, num_games, **kwargs):
        wins, draws, losses = self.outcomes.pop(0)
        assert wins + draws + losses == num_games
        self.calls.append(num_games)
        if self.on_call is not None:
            self.on_call()
        return _synthetic(wins, draws, losses, kwargs["name_a"], kwargs["name_b"])


@pytest.mark.parametrize(("outcome", "promote"), [
    ((55, 0, 45), True), ((54, 0, 46), False), ((50, 10, 40), True), ((49, 10, 41), False),
])
def test_threshold_decision(monkeypatch, outcome, promote):
    scripted = ScriptedMatches([outcome])
    monkeypatch.setattr(gating, "play_match", scripted)
    decided, reason, match, last_sprt = gating.gate_match(
        RULES, None, None, GateConfig(num_games=100, threshold=0.55))
    assert (decided, reason, last_sprt) == (promote, "threshold", None)
    assert scripted.calls == [100] and match.num_games == 100


def test_sprt_accepts_and_rejects_early(monkeypatch):
    config = GateConfig(num_games=400, use_sprt=True, chunk_games=20,
                        sprt=SprtConfig(elo0=0, elo1=35))
    strong = ScriptedMatches([(17, 0, 3)] * 20)
    monkeypatch.setattr(gating, "play_match", strong)
    decided, reason, match, last_sprt = gating.gate_match(RULES, None, None, config)
    assert decided and reason == "sprt" and last_sprt.decision == "accept"
    assert match.num_games < 400 and match.num_games == sum(strong.calls)
    weak = ScriptedMatches([(6, 0, 14)] * 20)
    monkeypatch.setattr(gating, "play_match", weak)
    decided, reason, match, last_sprt = gating.gate_match(RULES, None, None, config)
    assert not decided and reason == "sprt" and last_sprt.decision == "reject"
    assert match.num_games < 400


def test_undecided_sprt_falls_back_to_the_threshold(monkeypatch):
    config = GateConfig(num_games=40, use_sprt=True, chunk_games=20, threshold=0.55)
    monkeypatch.setattr(gating, "play_match", ScriptedMatches([(12, 0, 8), (11, 0, 9)]))
    decided, reason, match, last_sprt = gating.gate_match(RULES, None, None, config)
    assert (decided, reason) == (True, "threshold")  # 23 / 40 = 0.575
    assert last_sprt.decision == "continue" and match.num_games == 40


class PathFactory:
    """Maps "checkpoint:<x>.pt" to a baseline agent by the file's stem."""

    def __call__(self, spec):
        stem = spec.split(":", 1)[1].rsplit("/", 1)[-1].removesuffix(".pt")
        return GreedyAgent() if stem.startswith("greedy") else RandomAgent()


def test_run_gate_updates_the_registry(tmp_path, monkeypatch):
    config = GateConfig(num_games=20, registry=str(tmp_path / "champions.json"))
    registry = ChampionRegistry(config.registry)
    first = gating.run_gate(RULES, "checkpoint:random0.pt", config, PathFactory(), step=0)
    assert first.promoted and first.reason == "first" and first.match is None
    assert registry.champion(TRACK).checkpoint == "random0.pt"

    monkeypatch.setattr(gating, "play_match", ScriptedMatches([(9, 0, 11)]))
    rejected = gating.run_gate(RULES, "checkpoint:random1.pt", config, PathFactory(), step=1)
    assert not rejected.promoted and rejected.champion == "random0.pt"
    assert registry.champion(TRACK).checkpoint == "random0.pt"

    monkeypatch.setattr(gating, "play_match", ScriptedMatches([(15, 2, 3)]))
    promoted = gating.run_gate(RULES, "checkpoint:greedy2.pt", config, PathFactory(), step=2)
    assert promoted.promoted and promoted.reason == "threshold"
    champion = registry.champion(TRACK)
    assert (champion.checkpoint, champion.step, champion.previous) == ("greedy2.pt", 2,
                                                                       "random0.pt")
    assert champion.score == pytest.approx(0.8) and champion.extra["draws"] == 2
    assert [e.checkpoint for e in registry.history(TRACK)] == ["random0.pt", "greedy2.pt"]
    assert promoted.scalars()["gate/promoted"] == 1.0
    assert "PROMOTED" in promoted.summary()
    with pytest.raises(ValueError, match="already the champion"):
        gating.run_gate(RULES, "checkpoint:greedy2.pt", config, PathFactory())
    with pytest.raises(ValueError, match="uct:5"):
        gating.run_gate(RULES, "uct:5", config, PathFactory())


def test_a_champion_changed_during_the_match_makes_the_gate_stale(tmp_path, monkeypatch):
    config = GateConfig(num_games=20, registry=str(tmp_path / "champions.json"))
    registry = ChampionRegistry(config.registry)
    registry.promote(TRACK, ChampionEntry("old.pt"))

    def rival_promotes():
        registry.promote(TRACK, ChampionEntry("rival.pt"))

    monkeypatch.setattr(gating, "play_match", ScriptedMatches([(20, 0, 0)], rival_promotes))
    result = gating.run_gate(RULES, "checkpoint:new.pt", config, PathFactory())
    assert not result.promoted and result.reason == "stale"
    assert registry.champion(TRACK).checkpoint == "rival.pt"


def test_gating_callback_plays_real_games(tmp_path):
    config = GateConfig(num_games=8, threshold=0.55, registry=str(tmp_path / "champions.json"))
    lines = []
    callback = gating.make_gating_callback(RULES, config, log=lines.append,
                                           factory=PathFactory())
    assert callback("random0.pt", 0).reason == "first"
    result = callback("greedy1.pt", 100)
    assert result.match.num_games == 8 and result.step == 100
    assert result.match.name_a == "greedy1.pt" and result.match.name_b == "random0.pt"
    champion = ChampionRegistry(config.registry).champion(TRACK).checkpoint
    assert champion == ("greedy1.pt" if result.match.score >= 0.55 else "random0.pt")
    assert result.promoted == (champion == "greedy1.pt")
    assert len(lines) == 2 and "greedy1.pt" in lines[1]


def test_gating_callback_takes_a_checkpoint_event(tmp_path):
    from types import SimpleNamespace

    config = GateConfig(num_games=4, registry=str(tmp_path / "champions.json"))
    callback = gating.make_gating_callback(RULES, config, log=None, factory=PathFactory())
    callback(SimpleNamespace(path="random0.pt", counters=SimpleNamespace(step=0),
                             fair_komi=3.4))
    event = SimpleNamespace(path="greedy7.pt", counters=SimpleNamespace(step=7), fair_komi=3.4)
    result = callback(event)
    assert result.step == 7 and result.match.komi == 3  # the fair komi, rounded
    far = SimpleNamespace(path="greedy8.pt", counters=SimpleNamespace(step=8), fair_komi=40.0)
    assert callback(far).match.komi == 15  # clipped into the komi range
    with pytest.raises(ValueError, match="step"):
        callback("greedy9.pt")
