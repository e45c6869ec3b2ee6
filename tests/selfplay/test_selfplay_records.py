"""Final targets of recorded positions, symmetry augmentation, komi sampling, fair komi."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.data import symmetry_images
from catena_zero.komi.fair import estimate_fair_komi
from catena_zero.mcts.evaluation import Evaluation
from catena_zero.rules import BLACK, EMPTY, WHITE, Engine, Rules, observe
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.selfplay.records import PositionRecords, symmetry_augment, to_samples
from catena_zero.selfplay.selfplay import KomiSampler


def _random_game(engine: Engine, rng: np.random.Generator, moves: int, komi: int = 3):
    state = engine.new_games(1, komi=komi)
    actions = []
    for _ in range(moves):
        if state.terminal[0]:
            break
        action = engine.random_actions(state, rng)
        engine.step(state, action)
        actions.append(int(action[0]))
    return state, actions


def _samples_of(engine: Engine, state) -> dict:
    planes, globals_ = observe(engine, state)
    board = engine.rules.board
    rng = np.random.default_rng(5)
    # A valid sample (as Samples checks it): the policy puts mass on legal actions only.
    legal = engine.legal_actions(state)
    policy = (rng.random((1, board.num_actions)) * legal).astype(np.float32)
    return {
        "planes": planes, "globals": globals_, "policy_target": policy / policy.sum(),
        "value_target": np.eye(3, dtype=np.float32)[[0]],
        "score_target": np.array([2.5], np.float32),
        "ownership_target": rng.choice([-1.0, 0.0, 1.0], size=(1, board.num_cells)),
        "weight": np.ones(1, np.float32),
        "legal_mask": legal,
    }


@pytest.mark.parametrize("side", [3, 4])
def test_symmetric_planes_equal_the_observation_of_the_symmetric_game(side: int) -> None:
    engine = Engine(Rules(side=side))
    board = engine.rules.board
    state, actions = _random_game(engine, np.random.default_rng(side), moves=8)
    samples = _samples_of(engine, state)
    action_symmetries = np.asarray(board.action_symmetries)
    for k in range(12):
        mirrored = engine.new_games(1, komi=3)
        for action in actions:
            engine.step(mirrored, np.array([action_symmetries[k, action]]))
        planes, globals_ = observe(engine, mirrored)
        out = symmetry_images(to_samples(samples), board, np.array([k]))
        np.testing.assert_array_equal(out.planes, planes)
        np.testing.assert_array_equal(out.globals, globals_)
        # A per-action / per-cell target follows its cell: y[sym[k]] = x.
        expected_policy = np.empty_like(samples["policy_target"])
        expected_policy[:, action_symmetries[k]] = samples["policy_target"]
        np.testing.assert_array_equal(out.policy_target, expected_policy)
        expected_ownership = np.empty_like(samples["ownership_target"])
        expected_ownership[:, np.asarray(board.symmetries)[k]] = samples["ownership_target"]
        np.testing.assert_array_equal(out.ownership_target, expected_ownership)
        expected_legal = np.empty_like(samples["legal_mask"])
        expected_legal[:, action_symmetries[k]] = samples["legal_mask"]
        np.testing.assert_array_equal(out.legal_mask, expected_legal)


def test_symmetry_copies_are_distinct_transforms() -> None:
    engine = Engine(Rules(side=4))
    state, _ = _random_game(engine, np.random.default_rng(1), moves=6)
    samples = _samples_of(engine, state)
    out = symmetry_augment(to_samples(samples), engine.rules.board, 12,
                           np.random.default_rng(0))
    assert out.planes.shape[0] == 12
    # The 12 images of an asymmetric position are pairwise different.
    flat = out.policy_target.reshape(12, -1)
    assert len({row.tobytes() for row in flat}) == 12
    np.testing.assert_allclose(out.policy_target.sum(axis=1), 1.0, rtol=1e-5)


def test_final_targets_follow_the_side_to_move() -> None:
    engine = Engine(Rules(side=3))
    board = engine.rules.board
    records = PositionRecords(board)
    cells, actions = board.num_cells, board.num_actions
    planes = np.zeros((4, 6, 5, 5), np.float32)
    policy = np.full((4, actions), 1.0 / actions, np.float32)
    # Games 10 and 11: positions with Black, White, Black, White to move.
    records.add(planes, np.zeros((4, 3)), policy, policy > 0,
                np.array([BLACK, WHITE, BLACK, WHITE]),
                np.array([10, 10, 11, 11]))
    stones = np.zeros((2, cells), np.int8)
    stones[:, 0], stones[:, 1] = BLACK, WHITE
    out = records.pop_finished(np.array([11]), np.array([WHITE]), np.array([-3.5]), stones[:1])
    assert out["positions"] == 2 and len(records) == 2  # game 10 still pending
    np.testing.assert_array_equal(out["value_target"], [[0, 0, 1], [1, 0, 0]])  # W won
    np.testing.assert_array_equal(out["score_target"], [-3.5, 3.5])
    assert out["ownership_target"][0, 0] == 1 and out["ownership_target"][0, 1] == -1
    assert out["ownership_target"][1, 0] == -1 and out["ownership_target"][1, 1] == 1
    assert out["ownership_target"][0, 2] == 0  # empty at the end
    draw = records.pop_finished(np.array([10]), np.array([EMPTY]), np.array([0.0]), stones[1:])
    np.testing.assert_array_equal(draw["value_target"], [[0, 1, 0], [0, 1, 0]])
    assert len(records) == 0


def test_value_target_blends_the_outcome_with_the_search_value() -> None:
    board = Engine(Rules(side=3)).rules.board
    actions = board.num_actions
    planes = np.zeros((2, 6, 5, 5), np.float32)
    policy = np.full((2, actions), 1.0 / actions, np.float32)
    records = PositionRecords(board, search_value_weight=0.25)
    # One game, Black then White to move; searches valued them +0.6 and -0.2 (mover's view).
    records.add(planes, np.zeros((2, 3)), policy, policy > 0, np.array([BLACK, WHITE]),
                np.array([3, 3]), root_value=np.array([0.6, -0.2]))
    stones = np.zeros((1, board.num_cells), np.int8)
    out = records.pop_finished(np.array([3]), np.array([BLACK]), np.array([2.5]), stones)
    # Black won: outcome (1, 0, 0) for Black's position, (0, 0, 1) for White's.
    np.testing.assert_allclose(out["value_target"], [[0.75 + 0.25 * 0.8, 0, 0.25 * 0.2],
                                                     [0.25 * 0.4, 0, 0.75 + 0.25 * 0.6]])
    np.testing.assert_allclose(out["value_target"].sum(axis=1), 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="root_value is needed"):
        records.add(planes, np.zeros((2, 3)), policy, policy > 0, np.array([BLACK, WHITE]),
                    np.array([4, 4]))
    with pytest.raises(ValueError, match="search_value_weight"):
        PositionRecords(board, search_value_weight=1.5)
    with pytest.raises(ValueError, match="search_value_weight"):
        SelfPlayConfig(search_value_weight=-0.1)


def test_komi_sampler_stays_in_range_and_centres_on_the_estimate() -> None:
    engine = Engine(Rules(side=4))
    config = SelfPlayConfig(komi_spread=1.0, komi_wide_probability=0.1)
    sampler = KomiSampler(engine, config, fair_komi=6.3)
    komis = sampler.sample(20000, np.random.default_rng(0))
    low, high = engine.rules.komi_range
    assert komis.dtype == np.int32 and komis.min() >= low and komis.max() <= high
    assert (komis == 6).mean() > 0.3  # the bulk sits near the estimate
    assert (komis == high).sum() > 0 and (komis == low).sum() > 0  # wide draws reach the ends
    fixed = KomiSampler(engine, SelfPlayConfig(fixed_komi=4))
    assert set(fixed.sample(50, np.random.default_rng(0)).tolist()) == {4}
    with pytest.raises(ValueError, match="99"):
        KomiSampler(engine, SelfPlayConfig(fixed_komi=99))


def test_komi_sampler_without_komi_game_type() -> None:
    engine = Engine(Rules(side=4, game_type="nokomi"))
    sampler = KomiSampler(engine, SelfPlayConfig(), fair_komi=5.0)
    assert set(sampler.sample(100, np.random.default_rng(0)).tolist()) == {0}


def test_fair_komi_finds_the_zero_crossing() -> None:
    engine = Engine(Rules(side=4))

    def evaluate(states) -> Evaluation:  # Black's value falls linearly, zero at komi 7.25
        komi = np.asarray(states.komi, dtype=np.float32)
        count, actions = komi.size, engine.rules.board.num_actions
        return Evaluation(policy_logits=np.zeros((count, actions), np.float32),
                          value=np.clip((7.25 - komi) / 10.0, -1, 1).astype(np.float32))

    assert estimate_fair_komi(engine, evaluate) == pytest.approx(7.25, abs=1e-4)
    quadratic = Engine(Rules(side=4, scoring="quadratic"))
    assert estimate_fair_komi(quadratic, evaluate) == pytest.approx(7.25, abs=1e-4)
    nokomi = Engine(Rules(side=4, game_type="nokomi"))
    assert estimate_fair_komi(nokomi, evaluate) == 0.0


def test_config_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="cheap_simulations"):
        SelfPlayConfig(full_simulations=4, cheap_simulations=8)
    with pytest.raises(ValueError, match="symmetry_copies"):
        SelfPlayConfig(symmetry_copies=13)
    assert SelfPlayConfig(temperature_start=1.0, temperature_end=0.0,
                          temperature_half_life=2.0).temperature(2) == pytest.approx(0.5)
