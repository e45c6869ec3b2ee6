"""The player's `rollout_mix`: its searches mix each leaf's network value with random
playouts (SearchConfig.rollout_mix), through every play command."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

from catena_zero.cli import gtp as gtp_cli
from catena_zero.cli import play as play_cli
from catena_zero.cli import serve as serve_cli
from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.rules import Game, Rules
from tests.export.tiny_model import tiny_model_file

# The module, not the `search` function that catena_zero.mcts exports under the same name.
search_module = importlib.import_module("catena_zero.mcts.search")


def test_the_setting_reaches_the_search_and_is_checked() -> None:
    assert PlayerConfig(rollout_mix=0.5).search_config().rollout_mix == 0.5
    assert PlayerConfig().search_config().rollout_mix == PlayerConfig.rollout_mix
    with pytest.raises(ValueError, match="rollout_mix"):
        PlayerConfig(rollout_mix=1.5)
    assert PlayerConfig(rollout_mix_playouts=4).search_config().rollout_mix_playouts == 4
    assert PlayerConfig().search_config().rollout_mix_playouts == \
        PlayerConfig.rollout_mix_playouts
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="rollout_mix_playouts"):
            PlayerConfig(rollout_mix_playouts=bad)


def test_a_mixing_player_plays_legal_moves_and_its_values_move(monkeypatch) -> None:
    torch.set_num_threads(1)
    seen = []
    original = search_module.RolloutMixEvaluator

    def recording(*args, **kwargs):
        seen.append(args[3])
        return original(*args, **kwargs)

    monkeypatch.setattr(search_module, "RolloutMixEvaluator", recording)
    game = Game(Rules(side=3), komi=10)
    for mix in (0.0, 1.0):
        player = ModelPlayer(ModelLibrary(tiny_model_file(3)),
                             PlayerConfig(simulations=16, rollout_mix=mix))
        assert player.genmove(game) in game.legal_actions()
    assert seen and set(seen) == {1.0}  # only the mixing player wrapped its evaluator
    assert np.isfinite(seen).all()


def test_every_play_command_takes_the_setting() -> None:
    model = f"model={tiny_model_file(3)}"
    engine = gtp_cli.build_engine([model, "player.rollout_mix=0.25", "player.simulations=1"],
                                  warn=lambda text: None, warm_up=False)
    assert engine.player.config.rollout_mix == 0.25
    engine = gtp_cli.build_engine([model, "player.rollout_mix_playouts=4", "player.simulations=1"],
                                  warn=lambda text: None, warm_up=False)
    assert engine.player.config.search_config().rollout_mix_playouts == 4
    assert play_cli.build([model, "player.rollout_mix=0.5"])[2].rollout_mix == 0.5
    assert serve_cli.build([model, "player.rollout_mix=0.5"])[2].rollout_mix == 0.5


def test_a_mixing_player_without_noise_answers_a_position_alike_every_time() -> None:
    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(tiny_model_file(3)),
                         PlayerConfig(simulations=24, rollout_mix=0.5))
    game = Game(Rules(side=3), komi=10)
    first = player.analyze(game)
    moves = {player.genmove(game) for _ in range(4)}
    assert len(moves) == 1
    again = player.analyze(game)  # values and visits too, not only the move
    assert repr(again) == repr(first)
    komis = {player.choose_komi(Rules(side=3)) for _ in range(3)}
    assert len(komis) == 1
