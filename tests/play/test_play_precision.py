"""Every way to play a model runs it in the self-play inference wrapper at the `precision`
setting: bfloat16 where the CPU has AMX or AVX512-BF16 under `auto`, float32 elsewhere."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from catena_zero.cli import analysis as analysis_cli
from catena_zero.cli import gtp as gtp_cli
from catena_zero.cli import play as play_cli
from catena_zero.cli import serve as serve_cli
from catena_zero.network.device import cpu_has_fast_bfloat16
from catena_zero.play.bundled import ModelLibrary, bundled_general_path
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.rules import Game, Rules
from catena_zero.selfplay.evaluator import NetworkEvaluator
from tests.export.tiny_model import tiny_model_file

AUTO = torch.bfloat16 if cpu_has_fast_bfloat16() else None  # what "auto" means here
DTYPES = {"auto": AUTO, "float32": None, "bfloat16": torch.bfloat16}


@pytest.mark.parametrize("precision", list(DTYPES))
def test_the_player_runs_its_model_at_the_precision(precision) -> None:
    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(tiny_model_file(3)),
                         PlayerConfig(simulations=8, precision=precision))
    evaluator = player.evaluator(Rules(side=3))
    assert isinstance(evaluator, NetworkEvaluator)
    assert evaluator.model.dtype == DTYPES[precision]
    name = "float32" if DTYPES[precision] is None else "bfloat16"
    assert player.search_line().endswith(f", {name} network")
    game = Game(Rules(side=3))
    assert player.genmove(game) in game.legal_actions()


def test_a_bad_precision_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="precision must be one of auto, float32, bfloat16"):
        PlayerConfig(precision="float16")


def test_every_play_command_takes_the_precision_setting(monkeypatch) -> None:
    model = f"model={tiny_model_file(3)}"
    engine = gtp_cli.build_engine([model, "player.precision=bfloat16", "player.simulations=1"],
                                  warn=lambda text: None, warm_up=False)
    assert engine.player.evaluator(Rules(side=3)).model.dtype == torch.bfloat16
    assert play_cli.build([model, "player.precision=float32"])[2].precision == "float32"
    assert serve_cli.build([model, "player.precision=float32"])[2].precision == "float32"
    analysis = analysis_cli.build_engine([model, "precision=float32"])
    assert analysis.evaluator(Rules(side=3)).model.dtype is None
    assert gtp_cli.build_engine([model], warn=lambda text: None,
                                warm_up=False).player.config.precision == "auto"


@pytest.mark.parametrize(("command", "setting"), [("gtp", "player.precision=half"),
                                                  ("analysis", "precision=half")])
def test_a_bad_precision_on_the_command_line_is_one_line_and_exit_2(command, setting) -> None:
    done = subprocess.run([sys.executable, "-m", "catena_zero.cli.main", command, setting],
                          input="", capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert "precision must be one of auto, float32, bfloat16" in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.strip().count("\n") == 0


@pytest.mark.skipif(not bundled_general_path().is_file(), reason="no bundled general model")
def test_the_bundled_model_plays_a_game_in_bfloat16() -> None:
    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(), PlayerConfig(simulations=32, precision="bfloat16"))
    game = Game(Rules(side=4))
    for _ in range(6):
        if game.is_over:
            break
        action = player.genmove(game)
        assert action in game.legal_actions()
        game.play(game.rules.board.action_name(action))
    evaluator = player.evaluator(Rules(side=4))
    assert evaluator.model.dtype == torch.bfloat16 and evaluator.calls > 0
    analysis = player.analyze(game, simulations=16)
    assert 0.0 <= analysis.winrate <= 1.0
    assert player.search_line().endswith("bfloat16 network")
