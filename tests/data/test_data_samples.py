"""Samples: construction checks, concatenation, symmetry augmentation against the engine."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.data import (
    Samples,
    augment_with_symmetries,
    random_symmetries,
    symmetry_images,
    wdl_from_outcome,
)
from catena_zero.rules import Engine, Rules, get_board, observe


def random_samples(side: int, count: int, seed: int = 0, num_planes: int = 4) -> Samples:
    board = get_board(side)
    rng = np.random.default_rng(seed)
    cells, actions, size = board.num_cells, board.num_actions, board.grid_size
    on_board = np.zeros(size * size, np.uint8)
    on_board[board.cell_grid_index] = 1
    planes = rng.integers(0, 2, (count, num_planes, size * size)) * on_board
    legal = rng.random((count, actions)) < 0.7
    legal[:, 0] = True
    policy = rng.random((count, actions)) * legal
    policy /= policy.sum(axis=1, keepdims=True)
    return Samples.create(
        planes=planes.reshape(count, num_planes, size, size),
        globals=rng.random((count, 3)),
        policy_target=policy,
        value_target=wdl_from_outcome(rng.integers(-1, 2, count)),
        score_target=rng.normal(size=count) * 5,
        ownership_target=rng.integers(-1, 2, (count, cells)),
        weight=(rng.random(count) < 0.8).astype(np.float32),
        legal_mask=legal,
    )


def play_random(engine: Engine, actions_per_game: list[list[int]]):
    """Replay per-game action lists (all the same length) in one batch."""
    state = engine.new_games(len(actions_per_game))
    for moves in zip(*actions_per_game, strict=True):
        engine.step(state, np.array(moves))
    return state


def samples_from_states(engine: Engine, state) -> Samples:
    """Targets that are functions of the position: uniform policy over legal actions,
    ownership = current stones from the mover's view."""
    planes, globals_ = observe(engine, state)
    legal = engine.legal_actions(state)
    policy = legal / legal.sum(axis=1, keepdims=True)
    to_move = state.to_move[:, None]
    ownership = np.where(state.stones == 0, 0, np.where(state.stones == to_move, 1, -1))
    return Samples.create(
        planes=planes, globals=globals_, policy_target=policy,
        value_target=wdl_from_outcome(np.zeros(len(planes), int)),
        score_target=np.zeros(len(planes)), ownership_target=ownership, legal_mask=legal,
    )


@pytest.mark.parametrize("side", [3, 4])
def test_augmented_sample_equals_the_sample_of_the_transformed_game(side: int) -> None:
    """Playing the symmetric image of every move gives the symmetric position: its observed
    planes and position-derived targets must equal the augmented sample, for all 12 k."""
    rules = Rules(side=side)
    engine = Engine(rules)
    board = rules.board
    rng = np.random.default_rng(side)
    games, moves = 6, 2 * side
    state = engine.new_games(games)
    history = []
    for _ in range(moves):
        actions = engine.random_actions(state, rng)
        assert (actions >= 0).all()
        engine.step(state, actions)
        history.append(actions)
    original = samples_from_states(engine, state)
    augmented = augment_with_symmetries(original, board, range(12))
    assert len(augmented) == 12 * games
    for k in range(12):
        image_moves = [[int(board.action_symmetries[k][a[g]]) for a in history]
                       for g in range(games)]
        expected = samples_from_states(engine, play_random(engine, image_moves))
        block = augmented.take(slice(k * games, (k + 1) * games))
        assert block.equals(expected), f"symmetry {k}"


@pytest.mark.parametrize("side", [2, 4, 5])
def test_per_row_symmetries_equal_the_samples_of_the_transformed_games(side: int) -> None:
    """symmetry_images maps row i by its own symmetry which[i]: each row equals the sample
    of the game whose every move was mapped by that symmetry."""
    rules = Rules(side=side)
    engine = Engine(rules)
    board = rules.board
    rng = np.random.default_rng(10 + side)
    games = 24
    state = engine.new_games(games)
    history = []
    for _ in range(side):  # no game ends this early
        actions = engine.random_actions(state, rng)
        engine.step(state, actions)
        history.append(actions)
    assert not state.terminal.any()
    which = np.arange(games) % 12
    images = symmetry_images(samples_from_states(engine, state), board, which)
    image_moves = [[int(board.action_symmetries[which[g]][a[g]]) for a in history]
                   for g in range(games)]
    assert images.equals(samples_from_states(engine, play_random(engine, image_moves)))


def test_random_symmetries_draw_every_symmetry_and_keep_scalar_targets() -> None:
    samples = random_samples(4, 600, seed=3)
    board = get_board(4)
    images = random_symmetries(samples, board, np.random.default_rng(0))
    for name in ("globals", "value_target", "score_target", "weight"):
        np.testing.assert_array_equal(getattr(images, name), getattr(samples, name))
    np.testing.assert_allclose(images.policy_target.sum(axis=1), 1.0, rtol=1e-5)
    # Each row is the image of its own row under one of the 12 symmetries, and all 12 occur.
    all_images = augment_with_symmetries(samples, board, range(12))
    used = set()
    for row in range(len(samples)):
        matches = [k for k in range(12)
                   if all_images.take([k * len(samples) + row]).equals(images.take([row]))]
        assert matches, f"row {row} is no symmetry image of its sample"
        used.update(matches)
    assert used == set(range(12))
    # The same generator state gives the same images; the samples are left untouched.
    again = random_symmetries(samples, board, np.random.default_rng(0))
    assert again.equals(images)


def test_symmetry_images_refuse_bad_arguments() -> None:
    samples = random_samples(3, 4)
    board = get_board(3)
    with pytest.raises(ValueError, match="one symmetry per sample"):
        symmetry_images(samples, board, np.zeros(3, int))
    with pytest.raises(ValueError, match="symmetry index -1"):
        symmetry_images(samples, board, np.array([0, 1, -1, 2]))


def test_identity_augmentation_is_a_copy_and_order_is_k_major() -> None:
    samples = random_samples(3, 5)
    board = get_board(3)
    same = augment_with_symmetries(samples, board, [0])
    assert same.equals(samples)
    two = augment_with_symmetries(samples, board, [0, 7])
    assert two.take(slice(0, 5)).equals(samples)
    assert not two.take(slice(5, 10)).equals(samples)
    # Applying a symmetry and then its inverse gives the original back.
    table = board.symmetries
    for k in range(12):
        inverse = next(j for j in range(12) if np.array_equal(table[j][table[k]], np.arange(19)))
        back = augment_with_symmetries(augment_with_symmetries(samples, board, [k]), board,
                                       [inverse])
        assert back.equals(samples)


def test_augmentation_refuses_bad_arguments() -> None:
    samples = random_samples(3, 2)
    with pytest.raises(ValueError, match="symmetry index 12"):
        augment_with_symmetries(samples, get_board(3), [12])
    with pytest.raises(ValueError, match="cells"):
        augment_with_symmetries(samples, get_board(4), [1])


def test_create_converts_and_validates() -> None:
    samples = random_samples(3, 4)
    assert samples.planes.dtype == np.uint8
    assert samples.ownership_target.dtype == np.int8
    assert len(samples) == samples.num_samples == 4
    fields = {name: getattr(samples, name) for name in ("planes", "globals", "policy_target",
              "value_target", "score_target", "ownership_target", "weight", "legal_mask")}
    with pytest.raises(ValueError, match="0/1"):
        Samples.create(**{**fields, "planes": fields["planes"] * 0.5})
    with pytest.raises(ValueError, match="ownership_target must be -1/0/1"):
        Samples.create(**{**fields, "ownership_target": fields["ownership_target"] * 2})
    bad_policy = fields["policy_target"].copy()
    rows = np.flatnonzero(samples.weight > 0)
    bad_policy[rows[0]] *= 2
    with pytest.raises(ValueError, match=f"row {rows[0]} sums to"):
        Samples.create(**{**fields, "policy_target": bad_policy})
    with pytest.raises(ValueError, match="rows"):
        Samples.create(**{**fields, "score_target": np.zeros(3)})
    with pytest.raises(ValueError, match="dtype"):
        Samples(**{**fields, "planes": fields["planes"].astype(np.float32)})


def test_concatenate_take_and_trained_only() -> None:
    a, b = random_samples(3, 4, seed=1), random_samples(3, 6, seed=2)
    joined = Samples.concatenate([a, b])
    assert len(joined) == 10
    assert joined.take(np.arange(4)).equals(a)
    assert joined.take(slice(4, 10)).equals(b)
    trained = joined.trained_only()
    assert (trained.weight > 0).all() and len(trained) == int((joined.weight > 0).sum())
    other_board = random_samples(4, 2)
    with pytest.raises(ValueError, match="part 1"):
        Samples.concatenate([a, other_board])
    with pytest.raises(ValueError, match="at least one"):
        Samples.concatenate([])


def test_wdl_from_outcome() -> None:
    np.testing.assert_array_equal(
        wdl_from_outcome(np.array([1, 0, -1])), np.eye(3, dtype=np.float32)
    )
    with pytest.raises(ValueError, match="1/0/-1"):
        wdl_from_outcome(np.array([2]))
