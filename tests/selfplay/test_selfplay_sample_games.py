"""Self-play keeps a few whole games: they replay legally and to the game's own length."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.data.game_record import record_from_actions, replay
from catena_zero.mcts.evaluation import UniformEvaluator
from catena_zero.rules import Engine, Rules
from tests.selfplay.test_selfplay_games import _selfplay


@pytest.mark.parametrize("game_type", ["komi", "nokomi", "double"])
def test_the_first_games_are_kept_whole_and_replay(game_type: str) -> None:
    engine = Engine(Rules(3, game_type, "standard"))
    evaluator = UniformEvaluator(engine.rules.board.num_actions)
    selfplay = _selfplay(engine, evaluator, games_in_batch=3)
    _, stats = selfplay.play_games(7, np.random.default_rng(1), sample_games=4)
    assert [game.game_id for game in stats.sample_games] == [0, 1, 2, 3]
    for game in stats.sample_games:
        record = record_from_actions(engine.rules, game.komi, game.actions)
        assert replay(record).is_over and record.result is not None
        assert len(game.actions) in stats.game_lengths


def test_no_games_are_kept_by_default_and_the_games_are_unchanged() -> None:
    engine = Engine(Rules(3))
    evaluator = UniformEvaluator(engine.rules.board.num_actions)
    samples, stats = _selfplay(engine, evaluator).play_games(5, np.random.default_rng(2))
    assert stats.sample_games == []
    kept_samples, kept_stats = _selfplay(engine, evaluator).play_games(
        5, np.random.default_rng(2), sample_games=2)
    assert kept_stats.game_lengths == stats.game_lengths  # keeping draws no random numbers
    np.testing.assert_array_equal(kept_samples.policy_target, samples.policy_target)
