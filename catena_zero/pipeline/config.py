"""Configs of a training run (`catena_zero.pipeline`): the loop's own settings and the bundle of
every group's config that both runtimes take."""

from __future__ import annotations

from dataclasses import dataclass, field

from catena_zero.arena.specs import parse_agent_spec
from catena_zero.mcts.config import SearchConfig
from catena_zero.network.config import NetworkConfig
from catena_zero.network.device import INFERENCE_PRECISIONS
from catena_zero.pipeline.ray.config import RayConfig
from catena_zero.pipeline.tracks import MixConfig, TrackMix
from catena_zero.rules import Rules, Track
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.train.config import TrainConfig, require_score_belief_head

PROBE_BASELINE_KINDS = ("random", "greedy", "uct")


@dataclass(frozen=True)
class ProbeConfig:
    """The strength probe (`probe.*` keys of configs/train.yaml): every `every` iterations the
    current net plays `games` games on each track against each baseline, at the track's
    current fair komi, with a small search; the win rates go to TensorBoard and metrics.jsonl."""

    every: int = 0  # probe every this many iterations (and after the last); 0 = off
    games: int = 8  # games per track against each baseline (even; colours alternate)
    baselines: tuple[str, ...] = ("greedy", "uct:8")  # agent specs: random | greedy | uct:N
    simulations: int = 4  # search simulations per move of the net in probe games
    opening_plies: int = 2  # random placements that start each pair of probe games
    # tracks probed, "side/game_type/scoring" each, of those the run plays; empty: every one
    tracks: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.tracks, str):
            raise ValueError(f"probe.tracks must be a list of 'side/game_type/scoring' "
                             f"strings, got {self.tracks!r}")
        for track in self.tracks:
            Track.parse(track)  # ValueError names a bad one
        if self.every < 0:
            raise ValueError(f"probe.every must be >= 0, got {self.every}")
        if self.games < 2 or self.games % 2:
            raise ValueError(f"probe.games must be an even number >= 2, got {self.games}")
        if self.simulations < 1:
            raise ValueError(f"probe.simulations must be >= 1, got {self.simulations}")
        if self.opening_plies < 0:
            raise ValueError(f"probe.opening_plies must be >= 0, got {self.opening_plies}")
        if isinstance(self.baselines, str) or not self.baselines:
            raise ValueError(f"probe.baselines must be a non-empty list of agent specs, "
                             f"got {self.baselines!r}")
        for spec in self.baselines:
            if parse_agent_spec(spec).kind not in PROBE_BASELINE_KINDS:
                raise ValueError(f"probe.baselines: {spec!r} is not a fixed baseline "
                                 f"({' | '.join(PROBE_BASELINE_KINDS)})")


@dataclass(frozen=True)
class LoopConfig:
    """The loop's own settings (top-level keys of configs/train.yaml)."""

    run_dir: str | None = None  # output directory; None -> runs/train-<UTC time> (set by the CLI)
    resume: bool = False  # continue the run in run_dir from its newest checkpoint, exactly
    start_from: str = ""  # a checkpoint of another run to start from while run_dir has none
    #   (needs resume=true): its weights, optimiser, counters, RNG states and mix clock, its
    #   net grown to network.blocks and network.channels where those are larger
    #   (catena_zero.train.grow); "" = none
    seed: int = 0  # seeds numpy and torch; a resumed run restores RNG states instead
    device: str = "auto"  # auto | cpu | cuda
    # self-play network: auto (bf16 on a GPU or a bf16 CPU) | float32 | bfloat16
    inference_precision: str = "auto"
    # torch CPU threads of each process running the net (inline process, every Ray actor);
    # 0 = automatic (inline: torch's default; a Ray actor: 1)
    threads: int = 0
    iterations: int = 200  # self-play + training rounds; 0 = until max_minutes
    max_minutes: float = 0.0  # wall-clock budget in minutes (this process); 0 = none
    games_per_iteration: int = 128  # complete self-play games per iteration (one shard)
    # > 0: a track on a board of fewer cells plays more games per iteration, all at once, so
    # each network call holds about this many cells (pipeline.steps.track_games; at most 8x
    # the games); 0 = the same games on every board
    batch_cells: int = 0
    checkpoint_every: int = 1  # write a checkpoint every this many iterations
    keep_checkpoints: int = 3  # newest checkpoints kept on disk (0 = keep all)
    progress: bool = True  # tqdm progress bar with positions/s
    tensorboard: bool = True  # TensorBoard logs in <run_dir>/tensorboard
    sample_games: int = 2  # self-play games per iteration kept as SGF in <run_dir>/games (0: none)
    # redraw <run_dir>/report.png (strength and losses) every this many iterations and at
    # the end; 0 = never
    report_every: int = 5
    probe: ProbeConfig = field(default_factory=ProbeConfig)  # per-iteration strength probe

    def __post_init__(self) -> None:
        if self.iterations < 0:
            raise ValueError(f"iterations must be >= 0, got {self.iterations}")
        if self.max_minutes < 0:
            raise ValueError(f"max_minutes must be >= 0, got {self.max_minutes}")
        if self.iterations == 0 and self.max_minutes == 0:
            raise ValueError("iterations=0 needs max_minutes > 0 (else the run never ends)")
        for name in ("games_per_iteration", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.threads < 0:
            raise ValueError(f"threads must be >= 0, got {self.threads}")
        if isinstance(self.batch_cells, bool) or self.batch_cells < 0:
            raise ValueError(f"batch_cells must be >= 0, got {self.batch_cells}")
        if isinstance(self.sample_games, bool) or self.sample_games < 0:
            raise ValueError(f"sample_games must be >= 0, got {self.sample_games}")
        if self.report_every < 0:
            raise ValueError(f"report_every must be >= 0, got {self.report_every}")
        if self.start_from and not self.resume:
            raise ValueError("start_from needs resume=true: the run continues that checkpoint "
                             "and then its own")
        if self.keep_checkpoints < 0:
            raise ValueError(f"keep_checkpoints must be >= 0, got {self.keep_checkpoints}")
        check_device_name("device", self.device)
        if self.inference_precision not in INFERENCE_PRECISIONS:
            raise ValueError(f"inference_precision must be one of {INFERENCE_PRECISIONS}, "
                             f"got {self.inference_precision!r}")


def check_device_name(field: str, device) -> None:
    """A device setting names auto, cpu or cuda[:N] (whether this machine has it is asked
    later, by `resolve_device`); ValueError naming `field` otherwise."""
    if device not in ("auto", "cpu", "cuda") and not str(device).startswith("cuda:"):
        raise ValueError(f"{field} must be auto, cpu or cuda[:N], got {device!r}")


RUNTIMES = ("inline", "processes", "ray")


@dataclass(frozen=True)
class RuntimeConfig(RayConfig):
    """Where a run's actors run (`runtime` group): `name` picks the runtime; of the Ray settings
    it inherits, `processes` reads `num_selfplay_actors` (its worker processes; 0 = one per
    CPU) and the rest matter only to `ray`."""

    name: str = "ray"  # inline (one process) | processes (self-play processes, no Ray) | ray
    selfplay_device: str = "cpu"  # processes: where each self-play process evaluates (cpu, cuda)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.name not in RUNTIMES:
            raise ValueError(f"runtime name must be one of {', '.join(RUNTIMES)}, "
                             f"got {self.name!r}")
        check_device_name("selfplay_device", self.selfplay_device)


@dataclass(frozen=True)
class TrainLoopConfig:
    """Everything `train_loop` needs; `resolved_config` is the composed config as plain data
    (stored in checkpoints for provenance)."""

    rules: Rules
    network: NetworkConfig
    search: SearchConfig
    selfplay: SelfPlayConfig
    train: TrainConfig
    loop: LoopConfig = field(default_factory=LoopConfig)
    resolved_config: dict = field(default_factory=dict)
    mix: MixConfig = field(default_factory=MixConfig)  # tracks and shares; empty: `rules` alone

    def __post_init__(self) -> None:
        require_score_belief_head(self.train, self.network.score_belief_bins)
        selfplay = self.selfplay
        for spec in selfplay.opponents if selfplay.opponent_share > 0.0 else ():
            try:
                parsed = parse_agent_spec(spec)
            except ValueError as error:
                raise ValueError(f"selfplay.opponents: {error}") from None
            if parsed.kind == "champion":
                raise ValueError("selfplay.opponents: 'champion' is not an opponent of "
                                 "self-play (name a checkpoint:PATH)")
        if selfplay.opponent_share > 0.0 and selfplay.opponent_sides:
            sides = sorted({track.side for track in TrackMix(self.mix, self.rules).tracks})
            if not set(sides) & set(selfplay.opponent_sides):
                raise ValueError(f"selfplay.opponent_sides {list(selfplay.opponent_sides)}: "
                                 f"no track of this run is of those sides (it plays sides "
                                 f"{', '.join(map(str, sides))})")
