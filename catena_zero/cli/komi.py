"""catena-zero komi [atlas]: the fair komi of a track, estimated by an agent three ways;
`atlas`: the balance of every side and variant from one model.

    catena-zero komi --side 3 agent=uct:200                 # before any model exists
    catena-zero komi --side 4 agent=champion                # the registry's champion
    catena-zero komi --side 3 rules=nokomi_standard agent=runs/side3/checkpoints/last.pt
    catena-zero komi --side 2 rules=komi_quadratic agent=solver
    catena-zero komi --side 4 agent=catena_zero/play/models/side4.pt   # a model file

Writes under out_dir: sweep_<track>.csv/.png (Black's score per komi, Wilson 95%
intervals, logistic fit), opening_<track>.csv/.png for nokomi, summary.csv; prints the
summary table (exact solver value where cached, the agent's own bisection estimate, the
empirical fair komi with its 95% profile-likelihood interval).

    catena-zero komi atlas atlas.sides=[4] atlas.variants=[komi/standard]
    catena-zero komi atlas model=runs/general/checkpoints/CHECKPOINT.pt
    catena-zero komi atlas atlas=quick atlas.output=runs/komi/atlas.json
    catena-zero komi atlas atlas.estimates=false              # exact values only (sides 2-3)

The atlas (catena_zero.komi.atlas) measures every track of atlas.sides x atlas.variants
with `model` (a model file or a checkpoint; default the bundled model that plays each
track, as `catena-zero play` chooses it) and writes atlas.json (resumable: a track
measured with the same model and settings is kept), atlas.md and the figures beside it.

    catena-zero komi curve 'curve.sides=[4,5,6]' 'curve.simulations=[8,16,32,64]' \
        atlas.target_width=2 atlas.max_games=400

The strength curve (catena_zero.komi.atlas.curve) measures the komi tracks of curve.sides
at each of curve.simulations (and curve.extra's SIDE:SIMULATIONS), one atlas file a
strength under curve.output_dir, then writes curve.json, curve.md and curve.png there.
"""

from __future__ import annotations

from pathlib import Path

import torch

from catena_zero.arena.specs import AgentFactory, load_checkpoint_model, network_file_kind
from catena_zero.cli.common import (
    ConfigError,
    InputFileError,
    compose,
    file_errors,
    rules_from_config,
    to_dataclass,
)
from catena_zero.export import load_model_file
from catena_zero.export.evaluator import read_model_network
from catena_zero.komi.atlas import AtlasError, AtlasModel, file_sha256, run_atlas
from catena_zero.komi.atlas.curve import CURVE_DIRECTORY_NAME, curve_document, curve_plan
from catena_zero.komi.atlas.document import load_atlas
from catena_zero.komi.atlas.workers import WorkersUnavailable
from catena_zero.komi.config import KomiConfig
from catena_zero.komi.solver_agent import SolverAgent
from catena_zero.mcts.config import SearchConfig
from catena_zero.network import InferenceModel
from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.model_player import PlayerConfig
from catena_zero.rules import Engine, Track
from catena_zero.selfplay.evaluator import NetworkEvaluator

NOT_KOMI_KEYS = ("board", "rules", "mcts")


def build_agent(rules, config: KomiConfig, search_config):
    """The agent named by config.agent: "solver", or anything the arena's specs accept."""
    if config.agent.strip().lower() == "solver":
        return SolverAgent()
    factory = AgentFactory(rules, search_config, config.device, config.registry_path,
                           model_reader=read_model_network)
    try:
        return factory(config.agent)
    except ValueError as error:  # a malformed spec, a missing checkpoint or champion
        if isinstance(error, file_errors()):  # a damaged file: printed as a file error
            raise
        raise ConfigError(f"agent={config.agent!r}: {error}") from error


MODES = ("atlas", "curve")


def prepare_overrides(overrides: list[str]) -> list[str]:
    """The word `atlas` or `curve` becomes `mode=atlas` or `mode=curve`. Idempotent."""
    words = [item for item in overrides if "=" not in item and not item.startswith(("~", "+"))]
    rest = [item for item in overrides if item not in words]
    if len(words) > 1 or (words and words[0] not in MODES):
        raise ConfigError(f"unknown komi mode {' '.join(words)!r}; the mode words are "
                          f"{' and '.join(MODES)}")
    return ([f"mode={words[0]}"] if words else []) + rest


def main(overrides: list[str]) -> int:
    config = compose("komi", overrides)
    rules = rules_from_config(config)
    search_config = to_dataclass(SearchConfig, config.mcts, "mcts")
    komi_config = to_dataclass(KomiConfig, {k: config[k] for k in config
                                            if k not in NOT_KOMI_KEYS})
    if komi_config.mode == "atlas":
        return run_atlas_command(komi_config, search_config)
    if komi_config.mode == "curve":
        return run_curve_command(komi_config, search_config)
    # lazy: matplotlib, which `catena-zero komi --help` (reading this module) never needs
    from catena_zero.komi.analysis import analyse_komi
    from catena_zero.komi.plots import format_summary

    agent = build_agent(rules, komi_config, search_config)
    row = analyse_komi(rules, agent, komi_config.agent, komi_config)
    print(format_summary([row]))
    print(f"files in {komi_config.out_dir}")
    return 0


def atlas_models(model_path: str, device: str, precision: str = "auto",
                 library: ModelLibrary | None = None):
    """models(side, variant) for the atlas: `model_path` for every track when given, else
    the bundled model that plays the track (the library's per-track choice, as play makes
    it; None where none does); `precision` is the network arithmetic of the games
    (InferenceModel's). Each file is loaded once."""
    if model_path:
        model = load_atlas_model(model_path, device, precision)
        return lambda side, variant: model
    library = library if library is not None else ModelLibrary()
    loaded: dict[str, object] = {}

    def track_model(side: int, variant: str):
        name = library.choice(Track(side, *variant.split("/")))
        if name is None:
            return None
        if name not in loaded:
            loaded[name] = load_atlas_model(str(library.bundled_directory() / name), device,
                                            precision)
        return loaded[name]

    return track_model


def load_atlas_model(path: str, device: str, precision: str = "auto"):
    """An AtlasModel of a model file (catena-zero export) or a training checkpoint, told
    apart by the file's first bytes as every agent spec is (arena.specs.network_file_kind),
    its network an InferenceModel in `precision` ("auto": bfloat16 on a CPU with fast
    bfloat16, catena_zero.network.device); InputFileError naming the file when it cannot be
    read as that kind."""
    if not Path(path).is_file():
        raise InputFileError(f"model={path}: no such file")
    kind = network_file_kind(path)
    try:
        if kind == "model":
            # The network reads the planes and globals it was trained on (the first ones).
            network = InferenceModel(load_model_file(path).network, device, precision=precision)
        else:
            network = load_checkpoint_model(path, device, precision)
    except ValueError as error:  # ModelFileError, CheckpointError: the file's own defect
        raise InputFileError(f"model={path}: not a readable {kind} file: {error}") from None
    evaluator = lambda rules: NetworkEvaluator(network, Engine(rules))  # noqa: E731
    arithmetic = "float32" if network.dtype is None else str(network.dtype).removeprefix("torch.")
    return AtlasModel(Path(path).name, file_sha256(path), evaluator, arithmetic)


def run_atlas_command(config: KomiConfig, search_config) -> int:
    """`catena-zero komi atlas`: run the atlas, then write its table and figures."""
    # lazy: matplotlib, which `catena-zero komi --help` (reading this module) never needs
    from catena_zero.komi.atlas.report import write_report

    if config.atlas.workers > 1 and config.device != "cpu":
        raise InputFileError(f"atlas.workers={config.atlas.workers} forks the command, which "
                             f"a {config.device} device does not survive; use device=cpu or "
                             f"atlas.workers=1")
    torch.set_num_threads(config.atlas.threads)
    models = (atlas_models(config.model, config.device, config.inference_precision)
              if config.atlas.estimates else None)
    try:
        document = run_atlas(config.atlas, models, search_config)
    except (AtlasError, WorkersUnavailable) as error:
        raise InputFileError(str(error)) from None
    try:
        written = write_report(document, Path(config.atlas.output).parent,
                               PlayerConfig().simulations, PlayerConfig().rollout_mix,
                               ModelLibrary().komi_standard_players())
    except AtlasError as error:  # a damaged strength curve beside the atlas
        raise InputFileError(str(error)) from None
    print(f"atlas: {len(document['records'])} tracks in {config.atlas.output}; "
          f"{', '.join(str(path) for path in written)}")
    return 0


def rewrite_designer_beside(curve_directory: Path) -> list[Path]:
    """designer.md again, with the new curve, when the curve was written into the directory
    an atlas's page reads it from (ATLAS_DIR/curve beside ATLAS_DIR/atlas.json)."""
    # lazy: matplotlib (report's import), which `catena-zero komi --help` never needs
    from catena_zero.komi.atlas.report import write_designer

    atlas_path = curve_directory.parent / "atlas.json"
    if curve_directory.name != CURVE_DIRECTORY_NAME or not atlas_path.is_file():
        return []
    try:
        return [write_designer(load_atlas(atlas_path), curve_directory.parent,
                               PlayerConfig().simulations, PlayerConfig().rollout_mix,
                               ModelLibrary().komi_standard_players())]
    except AtlasError as error:
        raise InputFileError(str(error)) from None


def run_curve_command(config: KomiConfig, search_config) -> int:
    """`catena-zero komi curve`: each strength's atlas (catena_zero.komi.atlas.curve), then
    the curve's files."""
    # lazy: matplotlib, which `catena-zero komi --help` (reading this module) never needs
    from catena_zero.komi.atlas.curve_plot import write_curve

    torch.set_num_threads(config.atlas.threads)
    models = atlas_models(config.model, config.device, config.inference_precision)
    for simulations, atlas in curve_plan(config.curve, config.atlas):
        print(f"curve: {simulations} simulations a move on sides "
              f"{', '.join(map(str, atlas.sides))} into {atlas.output}")
        try:
            run_atlas(atlas, models, search_config)
        except (AtlasError, WorkersUnavailable) as error:
            raise InputFileError(str(error)) from None
    document = curve_document(config.curve)
    written = write_curve(document, config.curve.output_dir)
    written += rewrite_designer_beside(Path(config.curve.output_dir))
    print(f"curve: {len(document['rows'])} measurements; "
          f"{', '.join(str(path) for path in written)}")
    return 0
