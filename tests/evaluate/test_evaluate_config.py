"""`catena-zero evaluate` settings: the mode word, typed search overrides checked and named,
bad values refused in one line with exit status 2, help listing the modes and keys."""

from __future__ import annotations

import dataclasses

import pytest

from catena_zero.cli.common import ConfigError
from catena_zero.cli.evaluate import build_settings, prepare_overrides
from catena_zero.cli.main import main
from catena_zero.evaluate import MODES, EvaluateConfig


def test_search_overrides_take_the_field_types() -> None:
    _, values = build_settings(["learning", "search.algorithm=puct",
                                "search.max_considered_actions=8", "search.c_scale=0.5",
                                "search.score_utility_centered=false"])
    assert values == {"algorithm": "puct", "max_considered_actions": 8, "c_scale": 0.5,
                      "score_utility_centered": False}


@pytest.mark.parametrize("item, message", [
    ("bogus=1", "bogus"),
    ("max_considered_actions", "KEY=VALUE"),
    ("score_utility_centered=maybe", "score_utility_centered"),
    ("num_simulations=many", "many"),
])
def test_bad_search_overrides_are_named(item: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_settings(["learning", f"search.{item}"])


def test_the_mode_word_picks_the_modes_defaults() -> None:
    assert build_settings([])[0] == EvaluateConfig()  # learning when no word is given
    endgame, _ = build_settings(["endgame", "max_legal=6"])
    assert (endgame.mode, endgame.games, endgame.opponents, endgame.max_legal) == (
        "endgame", 100, ("uct",), 6)
    trajectories, _ = build_settings(["trajectories"])
    assert (trajectories.games, trajectories.opponents) == (100, ("uct",))
    generalisation, _ = build_settings(["generalisation", "run_dir=runs/a"])
    assert (generalisation.games, generalisation.seed, generalisation.run_dir) == (
        128, 123, "runs/a")
    # Every key of the YAML is a field of the dataclass, and every field has a key.
    assert set(dataclasses.asdict(endgame)) == {f.name for f in dataclasses.fields(
        EvaluateConfig)}
    assert prepare_overrides(prepare_overrides(["endgame", "search.c_scale=1"])) == [
        "evaluate=endgame", "++search.c_scale=1"]


@pytest.mark.parametrize("arguments, message", [
    (["sideways"], "unknown evaluate mode 'sideways'"),
    (["learning", "endgame"], "one evaluate mode"),
    (["learning", "games=3"], "games must be an even number"),
    (["endgame", "opponents=[random,uct]"], "opponents must name one baseline"),
    (["learning", "komi_games=0"], "komi_games must be >= 1"),
    (["learning", "opponents=[greedy]"], "opponents"),
    (["learning", "run_dir=a", "checkpoint=b"], "give one of run_dir, checkpoint"),
    (["generalisation", "model_file=m.pt"], "needs a run's checkpoint"),
    (["learning", "bogus=1"], "bogus"),
])
def test_bad_settings_are_refused_in_one_line(capsys, arguments: list[str],
                                               message: str) -> None:
    assert main(["evaluate", *arguments]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.err.count("\n") == 1
    assert "Traceback" not in captured.err and captured.out == ""


def test_a_missing_net_is_named(tmp_path, capsys) -> None:
    assert main(["evaluate", "learning"]) == 2
    assert "give run_dir, checkpoint or model_file" in capsys.readouterr().err
    assert main(["evaluate", "endgame", f"--run-dir={tmp_path}"]) == 2
    assert f"no checkpoint in {tmp_path}/checkpoints" in capsys.readouterr().err
    assert main(["evaluate", "endgame", f"checkpoint={tmp_path}/none.pt"]) == 2
    assert "none.pt" in capsys.readouterr().err


def test_help_lists_the_modes_and_keys(capsys) -> None:
    assert main(["evaluate", "--help"]) == 0
    text = capsys.readouterr().out
    for word in MODES:
        assert word in text
    for field in dataclasses.fields(EvaluateConfig):
        assert field.name in text
    assert "search.KEY=VALUE" in text
    assert "measure a trained net" in main.__globals__["usage"]()


def test_print_config_accepts_the_mode_word(capsys) -> None:
    assert main(["evaluate", "trajectories", "search.algorithm=puct", "--cfg"]) == 0
    text = capsys.readouterr().out
    assert "mode: trajectories" in text and "algorithm: puct" in text


def test_bad_config_values_name_the_field() -> None:
    with pytest.raises(ValueError, match="EvaluateConfig.max_legal"):
        EvaluateConfig(max_legal=0)
    with pytest.raises(ValueError, match="EvaluateConfig.precision"):
        EvaluateConfig(precision="int8")
    with pytest.raises(ConfigError, match="threads"):
        build_settings(["learning", "threads=0"])
