"""Agents built from spec strings.

    "random"            uniform random legal moves
    "greedy"            one-ply greedy heuristic
    "uct:200"           UCT search with random rollouts, 200 playouts per move
    "checkpoint:PATH"   a trained network (checkpoint file) searching with the given SearchConfig
    "model:PATH"        the same for an exported model file (catena_zero.export)
    "champion"          the registry's champion of the rules' track, as a checkpoint agent

A bare path to an existing file is read as "checkpoint:PATH". Whichever of `checkpoint:` and
`model:` a spec says, the file's header decides how it is read (`network_file_kind`), so a
model file named by `checkpoint:PATH` plays too. Model files are read by the factory's
`model_reader` (`catena_zero.export.evaluator.read_model_network`: the export package sits
above the arena); a factory without one refuses them in one line. A network plays any
board side, whichever it was trained on (a size-general network has none); one whose network
reads more input planes or globals than the observation has is refused. A model file whose
recorded tracks do not include the rules' track still plays, and the factory's `log` says so
once.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catena_zero.arena import agents
from catena_zero.arena.registry import ChampionRegistry, Track
from catena_zero.data.file_history import file_sha256
from catena_zero.mcts.config import SearchConfig
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Engine, Rules

SPEC_KINDS = ("random", "greedy", "uct", "checkpoint", "model", "champion")
NETWORK_KINDS = ("checkpoint", "model")  # spec kinds naming a network file
MODEL_FILE_MAGIC = b"PK\x03\x04"  # a model file is a zip archive (catena_zero.export)
HEADER_BYTES = 64
MAX_CACHED_NETWORKS = 8  # networks an AgentFactory keeps loaded
SAMPLE_ALL_MOVES = 1 << 30  # temperature_moves that covers every move of a game


@dataclass(frozen=True)
class AgentSpec:
    kind: str  # one of SPEC_KINDS
    playouts: int = 0  # "uct": playouts per move
    path: str = ""  # "checkpoint" / "model": the network's file (either kind, by its header)

    def __str__(self) -> str:
        if self.kind == "uct":
            return f"uct:{self.playouts}"
        if self.kind in NETWORK_KINDS:
            return f"{self.kind}:{self.path}"
        return self.kind


@dataclass(frozen=True)
class NetworkFile:
    """A network read from a checkpoint or a model file, ready for NetworkEvaluator."""

    model: Any  # catena_zero.network.InferenceModel
    kind: str  # "checkpoint" or "model"
    trained_tracks: tuple[str, ...] = ()  # a model file's tracks ("6/komi/standard"); ()
    # when the file records none (a checkpoint: it plays every track unremarked)

    def note(self, rules: Rules, path: str | os.PathLike) -> str | None:
        """One line when `rules` are outside the tracks the model file was trained on."""
        track = str(Track.from_rules(rules))
        if not self.trained_tracks or track in self.trained_tracks:
            return None
        named = ", ".join(self.trained_tracks[:4])
        more = (f" and {len(self.trained_tracks) - 4} more"
                if len(self.trained_tracks) > 4 else "")
        return (f"note: {track} is outside the training of the model {Path(path).name} "
                f"(trained on {named}{more}); it plays, but its strength there is unmeasured")


# (path, device) -> NetworkFile of a model file; ValueError naming the file when unusable.
ModelReader = Callable[[Path, str], NetworkFile]


def network_file_kind(path: str | os.PathLike) -> str:
    """"model" for a model file (a zip archive), else "checkpoint" (which the checkpoint
    reader then accepts or refuses, naming the file), read from the first bytes only."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(HEADER_BYTES)
    except OSError:
        return "checkpoint"  # the checkpoint reader names the problem
    return "model" if header.startswith(MODEL_FILE_MAGIC) else "checkpoint"


def parse_agent_spec(spec: str) -> AgentSpec:
    """Parse a spec string; ValueError naming the spec when it is malformed."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    text = spec.strip()
    kind, _, argument = text.partition(":")
    kind = kind.lower()
    if kind in ("random", "greedy", "champion"):
        if argument:
            raise ValueError(f"agent spec {spec!r}: {kind!r} takes no argument")
        return AgentSpec(kind)
    if kind == "uct":
        if not argument.isdigit() or int(argument) < 1:
            raise ValueError(f"agent spec {spec!r}: expected uct:N with N >= 1 playouts")
        return AgentSpec("uct", playouts=int(argument))
    if kind in NETWORK_KINDS:
        if not argument:
            raise ValueError(f"agent spec {spec!r}: expected {kind}:PATH")
        return AgentSpec(kind, path=argument)
    if Path(text).is_file():
        return AgentSpec("checkpoint", path=text)
    raise ValueError(f"unknown agent spec {spec!r}; expected one of random, greedy, uct:N, "
                     f"checkpoint:PATH, model:PATH, champion (or the path of a checkpoint or "
                     f"model file)")


def player_record(spec: str, search: Any = None) -> dict:
    """How a raw match file names a player: its spec; for a network, its file, the file's
    SHA-256 and `search` (a SearchConfig, or None when not known); for a rollout MCTS, its
    playouts."""
    parsed = parse_agent_spec(spec)
    record: dict[str, Any] = {"spec": spec}
    if parsed.kind in NETWORK_KINDS:
        record["file"] = parsed.path
        record["sha256"] = file_sha256(parsed.path)
        record["search"] = None if search is None else dataclasses.asdict(search)
    elif parsed.kind == "uct":
        record["search"] = {"algorithm": "uct", "playouts": parsed.playouts}
    return record


class AgentFactory:
    """Builds agents from specs for one set of rules, caching loaded networks by path.

    search_config: `catena_zero.mcts.config.SearchConfig` for checkpoint agents (the
    default SearchConfig when None). registry: champion registry file for "champion".
    A checkpoint agent plays these rules whatever board its network was trained on (every
    network's weights fit every side); `for_rules` gives the factory of other rules, sharing
    the loaded networks (a mixed run gates one checkpoint on each of its tracks).
    """

    def __init__(self, rules: Rules, search_config: Any = None, device: str = "auto",
                 registry: str | os.PathLike | None = None,
                 model_reader: ModelReader | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.rules = rules
        self.search_config = search_config
        self.device = device
        self.registry = None if registry is None else ChampionRegistry(registry)
        self._networks = _NetworkCache(MAX_CACHED_NETWORKS, model_reader)
        self._engine: Any = None
        self.log = log if log is not None else _print_to_stderr
        self._noted: set[tuple[str, str]] = set()

    def for_rules(self, rules: Rules) -> AgentFactory:
        """The factory of `rules` with these settings and registry, sharing the networks
        loaded by this one; this factory itself when `rules` are its own track's."""
        if Track.from_rules(rules) == Track.from_rules(self.rules):
            return self
        other = AgentFactory(rules, self.search_config, self.device, log=self.log)
        other.registry = self.registry
        other._noted = self._noted
        other._networks = self._networks
        return other

    def __call__(self, spec: str | AgentSpec, temperature: float = 0.0) -> Any:
        """The agent of `spec`. temperature > 0: checkpoint agents sample every move from
        their visit counts ** (1 / temperature) (for openings) instead of playing the best."""
        parsed = spec if isinstance(spec, AgentSpec) else parse_agent_spec(spec)
        if parsed.kind == "random":
            agent = agents.RandomAgent()
        elif parsed.kind == "greedy":
            agent = agents.GreedyAgent()
        elif parsed.kind == "uct":
            agent = agents.UCTAgent(parsed.playouts)
        elif parsed.kind in NETWORK_KINDS:
            agent = agents.SearchAgent(
                self.evaluator(parsed.path), self._search_config(), temperature=temperature,
                temperature_moves=SAMPLE_ALL_MOVES if temperature > 0 else 0)
        else:
            return self(AgentSpec("checkpoint", path=self.champion_path()), temperature)
        _set_name(agent, str(parsed))
        return agent

    def describe(self, spec: str) -> dict:
        """`player_record` of the agent this factory builds from `spec`: a network with this
        factory's search, "champion" by the registry's checkpoint it stands for."""
        parsed = parse_agent_spec(spec)
        if parsed.kind == "champion":
            return {**player_record(f"checkpoint:{self.champion_path()}",
                                    self._search_config()), "spec": spec}
        return player_record(spec, self._search_config() if parsed.kind in NETWORK_KINDS
                             else None)

    def champion_path(self) -> str:
        """Checkpoint path of the registry's champion for these rules' track."""
        if self.registry is None:
            raise ValueError("agent spec 'champion' needs a champion registry file")
        track = Track.from_rules(self.rules)
        entry = self.registry.champion(track)
        if entry is None:
            raise ValueError(f"no champion for track {track.key} in {self.registry.path}")
        return entry.checkpoint

    def _search_config(self) -> Any:
        if self.search_config is not None:
            return self.search_config
        return SearchConfig()

    def evaluator(self, path: str) -> Any:
        """A NetworkEvaluator of these rules for the checkpoint or model file at `path` (its
        network loaded once for this factory and those of `for_rules`)."""
        if self._engine is None:
            self._engine = Engine(self.rules)
        evaluator = self._networks.evaluator(path, self._engine, self.device)
        note = self._networks.network(path).note(self.rules, path)
        key = (str(Path(path).resolve()), str(Track.from_rules(self.rules)))
        if note is not None and key not in self._noted:
            self._noted.add(key)
            self.log(note)
        return evaluator


def _print_to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _NetworkCache:
    """The networks of checkpoints and model files (NetworkFiles by resolved path) and their
    evaluators (by path and track). Least recently used last; bounded so a long training
    run's gates do not keep every checkpoint's network alive."""

    def __init__(self, limit: int, model_reader: ModelReader | None = None) -> None:
        self.limit = limit
        self.model_reader = model_reader
        self.models: OrderedDict[str, NetworkFile] = OrderedDict()
        self.evaluators: dict[tuple[str, str], Any] = {}

    def network(self, path: str | os.PathLike) -> NetworkFile:
        """The loaded NetworkFile of `path` (after `evaluator` loaded it)."""
        return self.models[str(Path(path).resolve())]

    def evaluator(self, path: str | os.PathLike, engine: Any, device: str) -> Any:
        # lazy: torch (seconds to import), loaded only once a network plays
        from catena_zero.selfplay.evaluator import NetworkEvaluator

        key = str(Path(path).resolve())
        if key not in self.models:
            self.models[key] = read_network_file(path, device, self.model_reader)
            while len(self.models) > self.limit:
                evicted, _ = self.models.popitem(last=False)
                for cached in [cached for cached in self.evaluators if cached[0] == evicted]:
                    del self.evaluators[cached]
        self.models.move_to_end(key)
        track = Track.from_rules(engine.rules).key
        if (key, track) not in self.evaluators:
            self.evaluators[(key, track)] = NetworkEvaluator(self.models[key].model, engine)
        return self.evaluators[(key, track)]


def _set_name(agent: Any, name: str) -> None:
    try:
        agent.name = name
    except AttributeError:  # an agent with slots or a read-only name keeps its own
        pass


def read_network_file(path: str | os.PathLike, device: str = "auto",
                      model_reader: ModelReader | None = None) -> NetworkFile:
    """The network of a checkpoint or a model file (told apart by the header), on `device`.

    A model file needs `model_reader`; without one it is refused (CheckpointError, one line).
    Other refusals as `load_checkpoint_model` and the reader's."""
    # lazy: torch (seconds to import), loaded only once a network is read
    from catena_zero.train.checkpoint import CheckpointError

    if network_file_kind(path) == "model":
        if model_reader is None:
            raise CheckpointError(f"{path}: is a model file (an exported network); this "
                                  f"command reads checkpoints only")
        return model_reader(Path(path), device)
    return NetworkFile(load_checkpoint_model(path, device), "checkpoint")


def load_checkpoint_model(path: str | os.PathLike, device: str = "auto",
                          precision: str = "auto") -> Any:
    """The network of a training checkpoint as an InferenceModel on `device` (arithmetic:
    `precision`, InferenceModel's), for any board.

    Refuses (CheckpointError, a ValueError, one line naming the file) a missing or damaged
    file or a network the observation cannot feed (`check_network_inputs`).
    """
    # lazy: torch (seconds to import), loaded only once a network is read
    from catena_zero.network import InferenceModel
    from catena_zero.train.checkpoint import CheckpointError, load_checkpoint

    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path}: does not exist")
    checkpoint = load_checkpoint(path)
    net = checkpoint.net
    check_network_inputs(net, path)
    net.eval()
    return InferenceModel(net, device, precision=precision)


def check_network_inputs(net: Any, path: Path) -> None:
    """CheckpointError (a ValueError) when the network of the checkpoint at `path` reads more
    input planes or globals than the observation has.

    A network reads the first `num_planes` planes and `num_globals` globals of the observation
    and has no tensor tied to a board's size, so one trained on any side (or on none, a
    size-general net) plays every side; game type and scoring reach it only through its
    global inputs, so the gate keeps tracks apart by the arena's rules.
    """
    # lazy: torch (seconds to import), loaded only once a network is read
    from catena_zero.train.checkpoint import CheckpointError

    if net.num_planes > NUM_PLANES or net.num_globals > NUM_GLOBALS:
        raise CheckpointError(f"checkpoint {path}: its network reads {net.num_planes} planes "
                              f"and {net.num_globals} globals, the observation has "
                              f"{NUM_PLANES} and {NUM_GLOBALS}")
