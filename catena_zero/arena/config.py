"""Arena settings: matches, gating and the Elo ladder (presets in configs/arena/*.yaml).

Agents are named by spec strings (see `catena_zero.arena.specs`): "random",
"greedy", "uct:200", "checkpoint:PATH", "champion".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catena_zero.arena.sprt import SprtConfig
from catena_zero.rules import Track

MODES = ("match", "gate", "ladder")
PAIRINGS = ("round_robin", "sampled")


def _require_even_games(owner: str, name: str, value: int) -> None:
    if not isinstance(value, int) or value < 2 or value % 2:
        raise ValueError(f"{owner}.{name} must be an even int >= 2 (colours alternate per "
                         f"pair of games), got {value!r}")


@dataclass
class GateConfig:
    num_games: int = 100  # games of a gate match (even); with SPRT the most it may play
    threshold: float = 0.55  # promote when the candidate scores at least this (draws as half)
    use_sprt: bool = False  # stop early on an SPRT decision; the threshold decides if none came
    sprt: SprtConfig = field(default_factory=SprtConfig)  # SPRT hypotheses and error rates
    chunk_games: int = 20  # games between two SPRT looks (even)
    # champion registry file (one JSON for all tracks); training: relative = inside run_dir
    registry: str = "champions.json"

    def __post_init__(self) -> None:
        _require_even_games("GateConfig", "num_games", self.num_games)
        _require_even_games("GateConfig", "chunk_games", self.chunk_games)
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"GateConfig.threshold must lie in (0, 1], got {self.threshold!r}")
        if not self.registry:
            raise ValueError("GateConfig.registry must name a file")


@dataclass
class LadderConfig:
    run_dir: str | None = None  # run whose checkpoints are rated (its checkpoints/ folder)
    checkpoints: list[str] = field(default_factory=list)  # extra checkpoint paths to rate
    max_checkpoints: int = 0  # rate at most this many, evenly spaced by step (0 = all)
    baselines: list[str] = field(default_factory=lambda: ["random", "greedy", "uct:200"])  # specs
    pairing: str = "round_robin"  # "round_robin" (every pair) or "sampled" (random pairs)
    games_per_pair: int = 20  # games per pairing (even)
    sampled_pairs: int = 3  # "sampled": pairings per player (plus each checkpoint's successor)
    anchor: str = "random"  # player fixed at Elo 0 (must be among the players)
    output_dir: str | None = None  # where elo.csv / elo.png / TensorBoard go (default run_dir/elo)

    def __post_init__(self) -> None:
        _require_even_games("LadderConfig", "games_per_pair", self.games_per_pair)
        if self.pairing not in PAIRINGS:
            raise ValueError(f"LadderConfig.pairing must be one of {PAIRINGS}, "
                             f"got {self.pairing!r}")
        if self.max_checkpoints < 0:
            raise ValueError(f"LadderConfig.max_checkpoints must be >= 0, "
                             f"got {self.max_checkpoints!r}")
        if self.sampled_pairs < 1:
            raise ValueError(f"LadderConfig.sampled_pairs must be >= 1, got {self.sampled_pairs!r}")


@dataclass
class ArenaConfig:
    mode: str = "match"  # "match" (A against B), "gate" (candidate against champion), "ladder"
    agent_a: str = "greedy"  # match: first agent's spec
    agent_b: str = "random"  # match: second agent's spec
    candidate: str | None = None  # gate: the candidate's spec (e.g. "checkpoint:runs/a/...pt")
    num_games: int = 64  # match: games (even; colours alternate per pair)
    # komi of every game (validated against the rules' range); null: 0 in match and gate,
    # the track's fair komi in ladder (exact where solved, else the run's estimate)
    komi: int | None = None
    seed: int = 0  # seeds openings and agents' randomness
    opening_plies: int = 2  # random placements that start each pair of games
    opening_agent: str | None = None  # spec of an agent making the openings instead of random
    device: str = "auto"  # torch device of checkpoint agents: "auto", "cpu" or "cuda"
    results_json: str | None = None  # also write the full result (per-game records) here
    gate: GateConfig = field(default_factory=GateConfig)  # gating settings
    ladder: LadderConfig = field(default_factory=LadderConfig)  # Elo ladder settings

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"ArenaConfig.mode must be one of {MODES}, got {self.mode!r}")
        _require_even_games("ArenaConfig", "num_games", self.num_games)
        if self.opening_plies < 0:
            raise ValueError(f"ArenaConfig.opening_plies must be >= 0, "
                             f"got {self.opening_plies!r}")


@dataclass
class TrainingGateConfig:
    """Gating inside `catena-zero train`: each chosen checkpoint plays the champion of each
    track of the run's mix (or of `tracks`), one match per track."""

    enabled: bool = True  # gate checkpoints while training (the evaluator)
    every_iterations: int = 10  # gate the checkpoint written at every this many iterations
    opening_plies: int = 2  # random plies that start each pair of gate games
    gate: GateConfig = field(default_factory=lambda: GateConfig(num_games=40))  # the match
    # tracks gated, "side/game_type/scoring" each (e.g. "6/komi/standard"), of those the
    # run plays; empty: every track of the run
    tracks: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.every_iterations < 1:
            raise ValueError(
                f"TrainingGateConfig.every_iterations must be >= 1, got {self.every_iterations}")
        if isinstance(self.tracks, str) or not isinstance(self.tracks, tuple | list):
            raise ValueError(f"TrainingGateConfig.tracks must be a list of 'side/game_type/"
                             f"scoring' strings, got {self.tracks!r}")
        parsed = []
        for entry in self.tracks:
            try:
                parsed.append(str(Track.parse(entry)))
            except (ValueError, TypeError) as error:
                raise ValueError(f"TrainingGateConfig.tracks: {error}") from None
        if len(set(parsed)) != len(parsed):
            raise ValueError(f"TrainingGateConfig.tracks names a track twice: {self.tracks!r}")
        self.tracks = tuple(parsed)
