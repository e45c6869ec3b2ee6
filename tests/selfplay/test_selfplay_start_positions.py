"""Self-play games started inside recorded games: the games file reader, the batched draw of
start positions, and self-play with a share of its games started there."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from catena_zero.data.game_record import record_from_actions
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.evaluation import UniformEvaluator
from catena_zero.rules import Engine, Rules, Track
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.selfplay.selfplay import SelfPlay
from catena_zero.selfplay.start_positions import (
    StartPositionsError,
    load_start_positions,
    read_start_positions,
)

REPO = Path(__file__).resolve().parents[2]
LOSS_STUDY = REPO / "docs" / "results" / "data" / "2026-12-06-loss-study-games.json"
# Three complete random games of side 3 (19 cells, the button is action 19).
SIDE3_GAMES = [[18, 8, 10, 16, 4, 15, 1, 17, 12, 19, 6],
               [1, 16, 15, 12, 4, 14, 2, 3, 6, 11, 7],
               [1, 14, 8, 10, 6, 0, 18, 7, 2, 19, 16]]


def write_games_file(path: Path, games: list[list[int]], points: list[float],
                track: str = "3/komi/standard", **changes) -> Path:
    document = {"format": "catena_zero.loss_study_games", "format_version": 1,
                "track": track, "komi": 2,
                "matches": {"side3-uct8": {"games": [
                    {"actions": actions, "a_points": score}
                    for actions, score in zip(games, points, strict=True)]}}} | changes
    path.write_text(json.dumps(document))
    return path


def test_reads_the_lost_games_of_the_side_6_loss_study() -> None:
    document = json.loads(LOSS_STUDY.read_text())
    games = [game for match in document["matches"].values() for game in match["games"]]
    lost = [game["actions"] for game in games if game["a_points"] == 0]
    assert (len(games), len(lost)) == (400, 146)
    positions = read_start_positions(LOSS_STUDY)
    assert positions.track == Track(6, "komi", "standard") and positions.num_games == 146
    assert positions.lengths.tolist() == [len(actions) for actions in lost]
    assert [positions.prefix(row, len(lost[row])) for row in (0, 145)] == [
        tuple(lost[0]), tuple(lost[145])]
    assert read_start_positions(LOSS_STUDY, lost_only=False).num_games == 400


def test_reads_a_literal_games_file_keeping_the_lost_games(tmp_path: Path) -> None:
    path = write_games_file(tmp_path / "games.json", SIDE3_GAMES, [0.0, 1.0, 0.0])
    positions = read_start_positions(path)
    assert positions.track == Track(3, "komi", "standard")
    assert positions.lengths.tolist() == [11, 11]
    assert positions.prefix(1, 11) == tuple(SIDE3_GAMES[2])
    assert positions.actions.shape == (2, 11)
    assert read_start_positions(path, lost_only=False).num_games == 3
    assert positions.applies_to(Rules(3, "komi", "longest"))
    assert not positions.applies_to(Rules(4)) and not positions.applies_to(Rules(3, "double"))


@pytest.mark.parametrize(("write", "problem"), [
    (None, "no such file"),
    (lambda path: path.write_text("{not json"), "not valid JSON"),
    (lambda path: path.write_bytes(b'{"format": "\xff"}'), "not UTF-8"),
    (lambda path: write_games_file(path, [SIDE3_GAMES[0]], [0.0], format="catena_zero.ratings"),
     "not a games file"),
    (lambda path: write_games_file(path, [SIDE3_GAMES[0]], [0.0], format_version=2),
     "format version 2"),
    (lambda path: write_games_file(path, [SIDE3_GAMES[0]], [0.0], track="3/komi"), "track:"),
    (lambda path: write_games_file(path, [[18, 8, 8]], [0.0]),
     r"match 'side3-uct8' game 0: action 2 \(\w+\) is illegal there"),
    (lambda path: write_games_file(path, [SIDE3_GAMES[0] + [5]], [0.0]),
     "action 11 .* is illegal after the game ended"),
    (lambda path: write_games_file(path, [[18, 20]], [0.0]),
     r"action 1 is 20, not an action 0\.\.19"),
    (lambda path: write_games_file(path, [[18, True]], [0.0]), "action 1 is True"),
    (lambda path: write_games_file(path, [[]], [0.0]), "actions must be a non-empty list"),
    (lambda path: write_games_file(path, [SIDE3_GAMES[0]], [0.25]), "a_points must be 0, 0.5 or 1"),
    (lambda path: write_games_file(path, [SIDE3_GAMES[0]], [1.0]), "no game the model lost"),
    (lambda path: write_games_file(path, [SIDE3_GAMES[0]], [0.0], matches={}),
     "matches must map"),
])
def test_a_bad_games_file_is_refused_in_one_line_naming_it(tmp_path: Path, write,
                                                            problem: str) -> None:
    path = tmp_path / "games.json"
    if write is not None:
        write(path)
    with pytest.raises(StartPositionsError, match=problem) as caught:
        read_start_positions(path)
    message = str(caught.value)
    assert message.startswith(f"start positions file {path}: ") and "\n" not in message


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StartPositionsError, match=r"not a regular file \(a directory\)"):
        read_start_positions(tmp_path)


def test_drawn_positions_equal_a_replay_of_their_games_first_moves() -> None:
    positions = read_start_positions(LOSS_STUDY)
    engine = Engine(Rules(6))
    komi = np.arange(12, dtype=np.int32) % 16  # [12] a komi per position
    drawn = positions.draw(engine, komi, np.random.default_rng(5))
    assert drawn.state.batch_size == 12 and not drawn.state.terminal.any()
    np.testing.assert_array_equal(drawn.state.move_number, drawn.plies)
    for row in range(12):
        actions = positions.prefix(int(drawn.games[row]), int(drawn.plies[row]))
        direct = engine.new_games(1, komi=int(komi[row]))
        for action in actions:
            engine.step(direct, np.array([action]))
        one = drawn.state.take([row])
        for name, array in direct._arrays().items():
            np.testing.assert_array_equal(getattr(one, name), array, err_msg=name)


@pytest.mark.parametrize(("low", "high"), [(0.5, 0.9), (0.2, 0.3), (0.0, 1.0)])
def test_drawn_plies_lie_in_the_share_range_of_their_games(low: float, high: float) -> None:
    positions = read_start_positions(LOSS_STUDY)
    engine = Engine(Rules(6))
    drawn = positions.draw(engine, np.full(600, 13), np.random.default_rng(9), low, high)
    lengths = positions.lengths[drawn.games]
    assert (drawn.plies >= np.ceil(low * lengths)).all()
    assert (drawn.plies <= np.minimum(np.floor(high * lengths), lengths - 1)).all()
    assert len(np.unique(drawn.games)) > 100  # games drawn across the file
    # both ends of the range are reached (the shortest game is 42 moves)
    shares = drawn.plies / lengths
    assert shares.min() < low + 0.05 and shares.max() > min(high, 1 - 1 / 42) - 0.05


def _selfplay(engine: Engine, sample_games: int = 0, seed: int = 3, **overrides):
    config = SelfPlayConfig(**({"games_in_batch": 4, "full_simulations": 4,
                                "cheap_simulations": 2, "augment_symmetries": False,
                                "fixed_komi": 13 if engine.rules.side == 6 else None}
                               | overrides))
    evaluator = UniformEvaluator(engine.rules.board.num_actions)
    selfplay = SelfPlay(engine, evaluator, SearchConfig(max_considered_actions=4), config)
    return selfplay, selfplay.play_games(6, np.random.default_rng(seed), sample_games)


def test_every_game_starts_inside_a_lost_game_and_only_its_own_moves_are_samples() -> None:
    engine = Engine(Rules(6))
    selfplay, (samples, stats) = _selfplay(
        engine, sample_games=6, start_positions=str(LOSS_STUDY), start_share=1.0,
        full_search_probability=1.0)
    assert stats.games == 6 and stats.start_games == 6
    # every move played is a sample; the recorded moves before each start are not
    assert stats.positions == len(samples) == stats.moves < sum(stats.game_lengths)
    lost = {tuple(selfplay.start_positions.prefix(row, int(length)))
            for row, length in enumerate(selfplay.start_positions.lengths)}
    for game in stats.sample_games:  # each begins with a lost game's first half or more
        starts = [recorded for recorded in lost
                  if any(game.actions[:ply] == recorded[:ply]
                         for ply in range(math.ceil(0.5 * len(recorded)), len(recorded)))]
        assert starts, game
        record_from_actions(engine.rules, game.komi, game.actions)  # legal, whole games
    np.testing.assert_allclose(samples.policy_target.sum(axis=1), 1.0, atol=1e-4)
    assert not (samples.policy_target * ~samples.legal_mask).any()
    np.testing.assert_array_equal(samples.value_target.sum(axis=1), 1.0)
    # every sample has the stones of its start position on the board: at least half of a
    # game of 42 or more moves, one of which may have taken the button
    assert (samples.planes[:, :2].sum(axis=(1, 2, 3)) >= 20).all()


def _same_samples(first, second) -> None:
    (samples, stats), (other, other_stats) = first, second
    assert stats.moves == other_stats.moves and stats.game_lengths == other_stats.game_lengths
    for name in ("planes", "globals", "policy_target", "value_target", "score_target"):
        np.testing.assert_array_equal(getattr(samples, name), getattr(other, name))


def test_a_zero_share_plays_exactly_as_without_start_positions() -> None:
    engine = Engine(Rules(6))
    _, before = _selfplay(engine)
    selfplay, after = _selfplay(engine, start_positions=str(LOSS_STUDY), start_share=0.0)
    assert selfplay.start_positions is None and after[1].start_games == 0
    _same_samples(before, after)


def test_a_track_of_another_side_ignores_the_games_file() -> None:
    engine = Engine(Rules(3))
    _, before = _selfplay(engine)
    selfplay, after = _selfplay(engine, start_positions=str(LOSS_STUDY), start_share=1.0)
    assert selfplay.start_positions is None and after[1].start_games == 0
    _same_samples(before, after)


def test_the_games_file_is_read_once_per_process() -> None:
    assert load_start_positions(LOSS_STUDY) is load_start_positions(str(LOSS_STUDY))


@pytest.mark.parametrize(("fields", "problem"), [
    ({"start_share": 0.5}, "start_share > 0 needs start_positions"),
    ({"start_share": 1.5, "start_positions": "x.json"}, r"start_share must be in \[0, 1\]"),
    ({"start_plies": (0.9, 0.5)}, "start_plies must be"),
    ({"start_plies": (0.5, 1.5)}, "start_plies must be"),
    ({"start_plies": (0.5,)}, "start_plies must be"),
])
def test_bad_start_settings_are_refused(fields: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        SelfPlayConfig(**fields)
