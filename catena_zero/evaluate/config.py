"""Settings of `catena-zero evaluate` (configs/evaluate.yaml, one file per mode in
configs/evaluate/), validated on construction: a bad value raises ValueError naming the field.

The search the net plays with is not here: it is the run's own (the `mcts` group stored in
its checkpoint) with `simulations`, `gumbel_scale` and exact endgames off, and the `search`
overrides of the command line on top (see `catena_zero.evaluate.loading.search_config_of`).
"""

from __future__ import annotations

from dataclasses import dataclass

from catena_zero.network import INFERENCE_PRECISIONS

MODES = ("learning", "endgame", "trajectories", "generalisation")
KOMI_SOURCES = ("selfplay", "network")
OPPONENTS = ("random", "uct")
WEIGHTS = ("published", "trained")
# Modes that play one baseline and report on it alone.
SINGLE_OPPONENT_MODES = ("endgame", "trajectories")
# Modes whose games alternate colours in pairs (arena matches).
PAIRED_MODES = ("learning", "endgame")


class EvaluationError(ValueError):
    """An evaluation cannot run as asked: no checkpoint, a model file where a run is needed,
    search settings the run's search rejects (the message names what was wrong)."""


@dataclass(frozen=True)
class EvaluateConfig:
    """What to evaluate, how, and where the report goes; `mode` picks the measurement."""

    mode: str = "learning"  # learning | endgame | trajectories | generalisation (the word)
    run_dir: str = ""  # a run directory: its newest checkpoint (and its shards)
    checkpoint: str = ""  # a checkpoint file instead of a run's newest
    model_file: str = ""  # an exported model file (catena-zero export) instead of a checkpoint
    games: int = 200  # learning: per match; endgame: in all; trajectories: per colour
    simulations: int = 32  # the net's search simulations per move
    gumbel_scale: float = 0.0  # Gumbel root noise of the net's search (0 = deterministic)
    opponents: tuple[str, ...] = ("random", "uct")  # baselines (endgame, trajectories: one)
    uct_playouts: int = 200  # random-rollout playouts per move of the uct baseline
    komi: int | None = None  # komi to play at; None = the net's fair komi (komi_from)
    komi_from: str = "selfplay"  # the fair komi from the net's self-play balance or "network"
    komi_games: int = 64  # self-play games per komi of the selfplay sweep
    opening_plies: int = 0  # learning: random opening plies shared by each colour pair
    max_legal: int = 10  # endgame: judge positions with at most this many legal cells
    shards: int = 3  # generalisation: the run's newest shards to compare with
    weights: str = "published"  # the run's averaged weights when kept, or "trained" (latest)
    precision: str = "auto"  # inference precision (auto: bfloat16 on a CPU with AMX or AVX512-BF16)
    threads: int = 1  # torch CPU threads
    seed: int = 0  # seeds the games, the komi sweep and the baselines
    json: str = ""  # also write the report here (atomically)

    def __post_init__(self) -> None:
        _choice("mode", self.mode, MODES)
        _choice("komi_from", self.komi_from, KOMI_SOURCES)
        _choice("weights", self.weights, WEIGHTS)
        _choice("precision", self.precision, INFERENCE_PRECISIONS)
        if not self.opponents:
            raise ValueError("EvaluateConfig.opponents must name at least one baseline")
        for opponent in self.opponents:
            _choice("opponents", opponent, OPPONENTS)
        if self.mode in SINGLE_OPPONENT_MODES and len(self.opponents) != 1:
            raise ValueError(f"EvaluateConfig.opponents must name one baseline in mode "
                             f"{self.mode}, got {list(self.opponents)}")
        sources = [name for name in ("run_dir", "checkpoint", "model_file") if getattr(self, name)]
        if len(sources) > 1:
            raise ValueError(f"EvaluateConfig: give one of run_dir, checkpoint, model_file, "
                             f"got {', '.join(sources)}")
        if self.mode == "generalisation" and self.model_file:
            raise ValueError("EvaluateConfig.model_file: mode generalisation needs a run's "
                             "checkpoint (its shards and self-play settings)")
        if self.mode in PAIRED_MODES:
            if self.games < 2 or self.games % 2:
                raise ValueError(f"EvaluateConfig.games must be an even number >= 2 in mode "
                                 f"{self.mode} (colours alternate), got {self.games}")
        else:
            _at_least("games", self.games, 1)
        _at_least("simulations", self.simulations, 1)
        _at_least("uct_playouts", self.uct_playouts, 1)
        _at_least("komi_games", self.komi_games, 1)
        _at_least("opening_plies", self.opening_plies, 0)
        _at_least("max_legal", self.max_legal, 1)
        _at_least("shards", self.shards, 0)
        _at_least("threads", self.threads, 1)
        if self.gumbel_scale < 0:
            raise ValueError(f"EvaluateConfig.gumbel_scale must be >= 0, got {self.gumbel_scale}")

    @property
    def source(self) -> str:
        """The file or run named (run_dir, checkpoint or model_file; "" when none)."""
        return self.run_dir or self.checkpoint or self.model_file


def _choice(name: str, value, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"EvaluateConfig.{name}={value!r}; expected one of {list(choices)}")


def _at_least(name: str, value: int, minimum: int) -> None:
    if value < minimum:
        raise ValueError(f"EvaluateConfig.{name} must be >= {minimum}, got {value}")
