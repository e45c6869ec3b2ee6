"""Every top-level config composes with every preset and converts to its dataclasses; bad keys
and values stop with a message naming the key."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
from omegaconf import DictConfig, OmegaConf

from catena_zero.arena.config import TrainingGateConfig
from catena_zero.cli.common import (
    ConfigError,
    available_configs,
    compose,
    config_dir,
    group_options,
    rules_from_config,
    to_dataclass,
)
from catena_zero.cli.train import build_config
from catena_zero.mcts.config import SearchConfig
from catena_zero.network.config import NetworkConfig
from catena_zero.pipeline.config import LoopConfig, RuntimeConfig
from catena_zero.pipeline.ray import RayConfig
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.train.config import TrainConfig

# Config groups whose node converts to one dataclass, wherever a top-level config uses them.
GROUP_DATACLASSES = {
    "network": NetworkConfig,
    "mcts": SearchConfig,
    "selfplay": SelfPlayConfig,
    "train": TrainConfig,
}

CONFIGS = available_configs()
PRESETS = group_options("preset")


def test_configs_and_presets_are_discovered() -> None:
    assert "train" in CONFIGS
    assert {"tiny", "side3", "side4", "side6", "side10"} <= set(PRESETS)


def _uses_presets(config_name: str) -> bool:
    """Whether the config's defaults list has the preset group (most subcommands do)."""
    defaults = OmegaConf.load(config_dir() / f"{config_name}.yaml").get("defaults") or []
    return any(isinstance(entry, dict | DictConfig) and "preset" in entry for entry in defaults)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("config_name", CONFIGS)
def test_every_config_composes_with_every_preset(config_name: str, preset: str) -> None:
    if _uses_presets(config_name):
        config = compose(config_name, [f"preset={preset}"])
    elif preset == "side6":
        config = compose(config_name, [])  # a config without presets is composed once
    else:
        pytest.skip(f"{config_name}.yaml has no preset group")
    converted = 0
    for group, cls in GROUP_DATACLASSES.items():
        if group in config:
            assert isinstance(to_dataclass(cls, config[group], group), cls)
            converted += 1
    if "board" in config and "rules" in config and config.board.side is not None:
        rules = rules_from_config(config)
        assert rules.board.side == config.board.side
        converted += 1
    if config_name == "train":
        loop_config = build_config(config)
        assert isinstance(loop_config.loop, LoopConfig)
        assert isinstance(to_dataclass(TrainingGateConfig, config.gating, "gating"),
                          TrainingGateConfig)
        runtime = to_dataclass(RuntimeConfig, config.runtime, "runtime")
        assert isinstance(runtime, RayConfig) and runtime.name == config.runtime.name
        converted += 1
    assert converted >= 1 or not _uses_presets(config_name), (
        f"{config_name}.yaml uses none of the known groups")


@pytest.mark.parametrize("option", group_options("board"))
def test_every_board_option_makes_rules(option: str) -> None:
    rules = rules_from_config(compose("train", [f"board={option}"]))
    assert f"side{rules.board.side}" == option


@pytest.mark.parametrize("option", group_options("rules"))
def test_every_rules_option_makes_rules(option: str) -> None:
    rules_from_config(compose("train", [f"rules={option}", "preset=tiny"]))


@pytest.mark.parametrize("option", group_options("network"))
def test_every_network_option_converts(option: str) -> None:
    to_dataclass(NetworkConfig, compose("train", [f"network={option}"]).network, "network")


@pytest.mark.parametrize("option", group_options("mcts"))
def test_every_mcts_option_converts(option: str) -> None:
    to_dataclass(SearchConfig, compose("train", [f"mcts={option}"]).mcts, "mcts")


def test_presets_pick_their_board() -> None:
    for preset, side in (("tiny", 3), ("side3", 3), ("side4", 4), ("side6", 6), ("side10", 10)):
        assert compose("train", [f"preset={preset}"]).board.side == side
    assert compose("train", []).board.side == 6  # side6 is the default main job


def test_command_line_wins_over_preset() -> None:
    config = compose("train", ["preset=side4", "board=side5", "selfplay.full_simulations=7"])
    assert config.board.side == 5
    assert config.selfplay.full_simulations == 7


def test_unknown_override_key_is_named() -> None:
    with pytest.raises(ConfigError, match="no_such_key"):
        compose("train", ["selfplay.no_such_key=3"])
    with pytest.raises(ConfigError, match="bogus"):
        compose("train", ["bogus=1"])


def test_unknown_group_option_is_named() -> None:
    with pytest.raises(ConfigError, match="side42"):
        compose("train", ["board=side42"])


def test_unknown_config_name() -> None:
    with pytest.raises(ConfigError, match="nonexistent"):
        compose("nonexistent", [])


def test_wrong_type_names_the_key() -> None:
    # The schema types every node, so a wrong type stops composition itself.
    with pytest.raises(ConfigError, match=r"selfplay\.full_simulations"):
        compose("train", ["selfplay.full_simulations=lots"])


def test_invalid_value_names_the_key() -> None:
    config = compose("train", ["selfplay.full_search_probability=1.5"])
    with pytest.raises(ConfigError, match="full_search_probability"):
        to_dataclass(SelfPlayConfig, config.selfplay, "selfplay")
    config = compose("train", ["mcts.algorithm=alphabeta"])
    with pytest.raises(ConfigError, match="algorithm"):
        to_dataclass(SearchConfig, config.mcts, "mcts")
    with pytest.raises(ConfigError, match="game_type|nonsense"):
        rules_from_config(compose("train", ["rules.game_type=nonsense"]))


def test_settings_of_two_groups_that_do_not_fit_are_named(tmp_path) -> None:
    from catena_zero.cli.train import build_config, main

    overrides = ["preset=tiny", "train.score_belief_weight=0.5", f"run_dir={tmp_path}/run"]
    with pytest.raises(ConfigError, match=r"network\.score_belief_bins"):
        build_config(compose("train", overrides))
    with pytest.raises(ConfigError, match="score_belief"):
        main(overrides)
    assert not (tmp_path / "run").exists()  # refused before anything is written
    config = build_config(compose("train", overrides + ["network.score_belief_bins=9"]))
    assert config.network.score_belief_bins == 9


def test_unknown_key_in_a_node_is_named() -> None:
    with pytest.raises(ConfigError, match=r"selfplay\.extra"):
        to_dataclass(SelfPlayConfig, {"extra": 1}, "selfplay")


@dataclass
class _Example:
    count: int = 1  # an int field
    ratio: float = 0.5  # a float field
    name: str | None = None  # optional
    sizes: tuple[int, ...] = (1, 2)  # a tuple
    flag: bool = False  # a bool


def test_to_dataclass_converts_and_checks_types() -> None:
    example = to_dataclass(_Example, {"count": 3, "ratio": 2, "sizes": [4, 5], "flag": True})
    assert example == _Example(count=3, ratio=2.0, name=None, sizes=(4, 5), flag=True)
    assert dataclasses.is_dataclass(example)
    with pytest.raises(ConfigError, match="count"):
        to_dataclass(_Example, {"count": 1.5})
    with pytest.raises(ConfigError, match="flag"):
        to_dataclass(_Example, {"flag": "yes"})
    with pytest.raises(ConfigError, match=r"sizes\[1\]"):
        to_dataclass(_Example, {"sizes": [1, "x"]})


@pytest.mark.parametrize("option", group_options("runtime"))
def test_every_runtime_option_converts(option: str) -> None:
    config = compose("train", [f"runtime={option}", "preset=tiny"])
    runtime = to_dataclass(RuntimeConfig, config.runtime, "runtime")
    assert isinstance(runtime, RayConfig) and runtime.name == option


@pytest.mark.parametrize("config_name", CONFIGS)
def test_every_config_starts_from_its_schema(config_name: str) -> None:
    defaults = OmegaConf.load(config_dir() / f"{config_name}.yaml").get("defaults") or []
    assert defaults[0] == f"{config_name}_schema"


# (board and rules options are names for their whole value: side6.yaml is side 6.)
@pytest.mark.parametrize("group", ["mcts", "network", "runtime", "arena", "player"])
def test_group_files_hold_only_what_differs_from_the_schema(group: str) -> None:
    """A key of a group file that repeats the schema's default is noise: it hides what the
    option changes and goes stale when the default moves."""
    from catena_zero.cli.schemas import SCHEMAS

    schema = OmegaConf.structured(SCHEMAS["train" if group != "arena" else "arena"])
    if group == "player":
        schema = OmegaConf.structured(SCHEMAS["gtp"])
    for option in group_options(group):
        path = config_dir() / group / f"{option}.yaml"
        if not path.exists():
            continue
        values = OmegaConf.to_container(OmegaConf.load(path)) or {}
        values.pop("defaults", None)
        defaults = OmegaConf.to_container(schema[group])
        repeated = [key for key, value in values.items()
                    if key in defaults and defaults[key] == value and key != "mode"]
        assert not repeated, f"{path.name} repeats schema defaults: {repeated}"


def test_short_board_and_rules_keys_work_in_every_subcommand() -> None:
    from catena_zero.cli.main import translate_arguments

    overrides = translate_arguments(["--side", "4", "scoring=longest"])
    assert overrides == ["side=4", "scoring=longest"]  # compose() reads the short keys
    for name in CONFIGS:
        # serve: the page chooses each game's board and rules; evaluate: the checkpoint's;
        # analysis: each query's.
        if name in ("serve", "evaluate", "analysis"):
            with pytest.raises(ConfigError, match="board"):
                compose(name, overrides)
            continue
        config = compose(name, overrides)
        assert config.board.side == 4, name
        assert config.rules.scoring == "longest", name


@pytest.mark.parametrize("option", group_options("player"))
@pytest.mark.parametrize("config_name", ["gtp", "play", "serve"])
def test_every_player_option_converts_in_every_play_subcommand(config_name: str,
                                                               option: str) -> None:
    from catena_zero.play.model_player import PlayerConfig

    config = compose(config_name, [f"player={option}"])
    assert isinstance(to_dataclass(PlayerConfig, config.player, "player"), PlayerConfig)
