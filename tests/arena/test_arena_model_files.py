"""Exported model files play wherever checkpoints do: the file's header decides its kind."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from catena_zero.arena.registry import ChampionEntry, ChampionRegistry
from catena_zero.arena.specs import (
    AgentFactory,
    network_file_kind,
    parse_agent_spec,
    player_record,
    read_network_file,
)
from catena_zero.export.evaluator import model_file_evaluator, read_model_network
from catena_zero.export.model_file import load_model_file
from catena_zero.mcts import SearchConfig
from catena_zero.play.bundled import bundled_model_path
from catena_zero.rules import Engine, Rules, Track
from catena_zero.train.checkpoint import MAGIC, CheckpointError

SIDE4 = bundled_model_path(4)


def test_the_header_tells_a_model_file_from_a_checkpoint(tmp_path) -> None:
    checkpoint = tmp_path / "checkpoint.pt"
    checkpoint.write_bytes(MAGIC + b"1\n")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a network")
    assert network_file_kind(SIDE4) == "model"
    assert network_file_kind(checkpoint) == "checkpoint"
    assert network_file_kind(garbage) == "checkpoint"  # refused by the checkpoint reader
    assert network_file_kind(tmp_path / "missing.pt") == "checkpoint"
    with pytest.raises(CheckpointError, match="bad magic"):
        read_network_file(garbage)


def test_model_spec_parses_and_names_its_file() -> None:
    spec = parse_agent_spec(f"model:{SIDE4}")
    assert (spec.kind, spec.path, str(spec)) == ("model", str(SIDE4), f"model:{SIDE4}")
    with pytest.raises(ValueError, match="model:PATH"):
        parse_agent_spec("model:")


def test_a_factory_without_a_reader_refuses_a_model_file_in_one_line() -> None:
    with pytest.raises(CheckpointError, match="is a model file"):
        AgentFactory(Rules(side=4))(f"checkpoint:{SIDE4}")


@pytest.mark.parametrize("spec", [f"model:{SIDE4}", f"checkpoint:{SIDE4}", str(SIDE4)])
def test_every_spelling_of_a_model_file_searches_with_its_network(spec) -> None:
    rules = Rules(side=4)
    notes: list[str] = []
    factory = AgentFactory(rules, SearchConfig(num_simulations=4), "cpu",
                           model_reader=read_model_network, log=notes.append)
    agent = factory(spec)
    engine = Engine(rules)
    states = engine.new_games(3, komi=np.array([3, 4, 5]))
    got = agent.evaluate_fn(states)
    want = model_file_evaluator(load_model_file(SIDE4), engine, "float32")(states)
    assert got.policy_logits == pytest.approx(want.policy_logits, abs=1e-4)
    assert got.value == pytest.approx(want.value, abs=1e-4)
    actions = agent.select_actions(engine, states, np.random.default_rng(0))
    assert engine.legal_actions(states)[np.arange(3), actions].all()
    assert notes == []  # side 4 is the model's own track


def test_a_model_file_off_its_track_plays_and_says_so_once() -> None:
    notes: list[str] = []
    factory = AgentFactory(Rules(side=4), SearchConfig(num_simulations=2), "cpu",
                           model_reader=read_model_network, log=notes.append)
    other = factory.for_rules(Rules(side=3))
    engine = Engine(Rules(side=3))
    states = engine.new_games(2)
    for _ in range(2):
        action = other(f"model:{SIDE4}").select_actions(engine, states,
                                                        np.random.default_rng(1))
        assert engine.legal_actions(states)[np.arange(2), action].all()
    assert len(notes) == 1
    assert "3/komi/standard is outside the training of the model side4.pt" in notes[0]
    assert "4/komi/standard" in notes[0]


@pytest.mark.slow  # a CLI match: 10-20 s on a shared machine
def test_arena_match_plays_a_model_file(tmp_path, capsys) -> None:
    from catena_zero.cli.main import main

    out = tmp_path / "match.json"
    assert main(["arena", "--side", "3", f"arena.agent_a=model:{SIDE4}", "arena.agent_b=random",
                 "arena.num_games=2", "mcts.num_simulations=2",
                 f"arena.results_json={out}"]) == 0
    captured = capsys.readouterr()
    assert "outside the training of the model side4.pt" in captured.err
    players = json.loads(out.read_text())["players"]
    assert players["a"]["sha256"] == hashlib.sha256(SIDE4.read_bytes()).hexdigest()
    assert players["a"]["file"] == str(SIDE4)
    assert players["a"]["search"]["num_simulations"] == 2
    assert players["b"] == {"spec": "random"}


def test_a_raw_file_names_each_player_by_hash_and_search(tmp_path) -> None:
    search = SearchConfig(num_simulations=7)
    factory = AgentFactory(Rules(side=4), search, "cpu", model_reader=read_model_network)
    sha256 = hashlib.sha256(SIDE4.read_bytes()).hexdigest()
    for spec in (f"model:{SIDE4}", f"checkpoint:{SIDE4}", str(SIDE4)):
        record = factory.describe(spec)
        assert record["spec"] == spec and record["file"] == str(SIDE4)
        assert record["sha256"] == sha256 and record["search"]["num_simulations"] == 7
    assert factory.describe("uct:300") == {"spec": "uct:300",
                                           "search": {"algorithm": "uct", "playouts": 300}}
    assert factory.describe("greedy") == {"spec": "greedy"}
    assert player_record(f"model:{SIDE4}")["search"] is None  # a search not known is not made up
    # The champion is named by the checkpoint it stands for.
    registry = tmp_path / "champions.json"
    ChampionRegistry(registry).promote(Track(4, "komi", "standard"),
                                      ChampionEntry(str(SIDE4), step=1))
    champion = AgentFactory(Rules(side=4), search, "cpu", registry=registry).describe("champion")
    assert champion["spec"] == "champion" and champion["sha256"] == sha256
    with pytest.raises(ValueError, match="no champion for track side5-komi-standard"):
        AgentFactory(Rules(side=5), search, "cpu", registry=registry).describe("champion")


def test_arena_refuses_a_damaged_model_file_as_a_file_error(tmp_path, capsys) -> None:
    from catena_zero.cli.main import EXIT_BAD_FILE, main

    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(SIDE4.read_bytes()[:5000])
    assert main(["arena", "--side", "3", f"arena.agent_a=model:{damaged}",
                 "arena.agent_b=random", "arena.num_games=2"]) == EXIT_BAD_FILE
    error = capsys.readouterr().err
    assert "damaged.pt" in error and len(error.strip().splitlines()) == 1
