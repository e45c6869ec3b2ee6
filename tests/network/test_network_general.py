"""One net for every board side: padded mixed batches agree with one-side batches, padding never
enters a statistic, and nets built for one side (and their saved weights) are unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from catena_zero.network import (
    OFF_BOARD_LOGIT,
    InferenceModel,
    NetOutput,
    NetworkConfig,
    PolicyValueNet,
    hex_cell_grid_index,
    pad_planes,
    padded_action_index,
    side_of_grid,
)
from catena_zero.network.model import MaskedNormAct
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, get_board
from tests.network.legacy_net_fixture import (
    FIXTURE,
    LEGACY_NUM_GLOBALS,
    OUTPUTS,
    observed_positions,
)

torch.set_num_threads(1)

SIDES = tuple(range(2, 11))
SMALL = NetworkConfig(
    blocks=2, channels=16, global_pool_every=1, global_pool_channels=4,
    policy_head_channels=4, value_head_channels=4, value_hidden=8, score_belief_bins=5,
)


def general_net(config: NetworkConfig = SMALL, seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, config)
    with torch.no_grad():  # statistics away from their initial values, as after training
        for name, tensor in net.state_dict().items():
            if name.endswith("running_var"):
                tensor.copy_(torch.rand_like(tensor) + 0.5)
            elif name.endswith("running_mean"):
                tensor.copy_(torch.randn_like(tensor) * 0.3)
    return net.eval()


def positions_by_side(per_side: int = 2) -> dict[int, tuple[np.ndarray, ...]]:
    """{side: (planes, globals, legal)} of observed positions of every side."""
    return {side: observed_positions(side, per_side, seed=side) for side in SIDES}


def padded_batch(positions: dict, order) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """(planes [B, P, G, G], globals, sides [B], [(side, rows)]) of the sides in `order`,
    each side's positions placed top-left of the largest grid, the sides interleaved."""
    grid = 2 * max(order) - 1
    planes, globals_, sides, where = [], [], [], []
    start = 0
    for side in order:
        side_planes, side_globals, _ = positions[side]
        planes.append(pad_planes(side_planes, grid))
        globals_.append(side_globals)
        sides += [side] * len(side_planes)
        where.append((side, np.arange(start, start + len(side_planes))))
        start += len(side_planes)
    return np.concatenate(planes), np.concatenate(globals_), np.array(sides), where


def legal_policy(logits, legal) -> np.ndarray:
    logits = np.where(legal, np.asarray(logits, np.float64), -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits)
    return probabilities / probabilities.sum(axis=1, keepdims=True)


def assert_same_evaluation(alone: NetOutput, mixed: NetOutput, legal, tolerance: float) -> None:
    for name in ("value", "score", "ownership"):
        np.testing.assert_allclose(np.asarray(getattr(mixed, name)),
                                   np.asarray(getattr(alone, name)), atol=tolerance, rtol=0,
                                   err_msg=name)
    np.testing.assert_allclose(legal_policy(mixed.policy_logits, legal),
                               legal_policy(alone.policy_logits, legal), atol=tolerance, rtol=0)


def to_numpy(output: NetOutput) -> NetOutput:
    return NetOutput(*(None if value is None else value.detach().numpy()
                       for value in (output.policy_logits, output.value_logits, output.score,
                                     output.ownership)))


def test_the_net_knows_the_boards_of_the_rules() -> None:
    for side in SIDES:
        board = get_board(side)
        np.testing.assert_array_equal(hex_cell_grid_index(side), board.cell_grid_index)
        padded = hex_cell_grid_index(side, 19)
        np.testing.assert_array_equal(padded, board.coords[:, 1] * 19 + board.coords[:, 0])
        assert padded_action_index(side, 19).tolist() == [*padded.tolist(), 361]
        assert side_of_grid(board.grid_size) == side
    assert side_of_grid(6) is None and side_of_grid(21) is None and side_of_grid(1) is None
    with pytest.raises(ValueError, match="cannot hold"):
        hex_cell_grid_index(6, 9)


def test_every_side_alone_equals_its_rows_of_a_mixed_batch() -> None:
    """Float32 forward in eval mode: each side's positions alone and inside a batch padded to
    the 19 x 19 grid of side 10 with all other sides (larger and smaller) around them."""
    net = general_net()
    positions = positions_by_side()
    order = (6, 2, 10, 3, 9, 4, 8, 5, 7)
    planes, globals_, sides, where = padded_batch(positions, order)
    with torch.no_grad():
        mixed = net(torch.from_numpy(planes), torch.from_numpy(globals_), sides=sides)
        assert mixed.policy_logits.shape == (len(sides), 19 * 19 + 1)
        assert torch.equal(mixed.sides, torch.from_numpy(sides))
        split = mixed.split_by_side()
        assert sorted(split) == list(SIDES)
        for side, rows in where:
            side_planes, side_globals, legal = positions[side]
            alone = net(torch.from_numpy(side_planes), torch.from_numpy(side_globals))
            assert alone.policy_logits.shape == (len(rows), get_board(side).num_actions)
            taken_rows, taken = split[side]
            assert taken_rows.tolist() == rows.tolist()
            assert_same_evaluation(to_numpy(alone), to_numpy(taken), legal, 1e-5)
            grid_row = mixed.policy_logits[rows[0]]
            off_board = np.setdiff1d(np.arange(361), hex_cell_grid_index(side, 19))
            assert torch.all(grid_row[off_board] == OFF_BOARD_LOGIT)
            assert torch.all(mixed.ownership[rows[0], off_board] == 0)


@pytest.mark.parametrize("precision,tolerance", [("float32", 1e-5), ("bfloat16", 5e-3)])
def test_inference_model_reads_every_side_alone_and_mixed(precision: str,
                                                          tolerance: float) -> None:
    model = InferenceModel(general_net(), "cpu", precision=precision)
    positions = positions_by_side(per_side=8)  # 8 rows: the bfloat16 copy runs alone too
    order = (4, 10, 2, 7, 3, 9, 5, 8, 6)
    planes, globals_, sides, where = padded_batch(positions, order)
    mixed = model(planes, globals_, sides=sides)
    assert isinstance(mixed.policy_logits, np.ndarray) and mixed.sides.tolist() == sides.tolist()
    for side, rows in where:
        side_planes, side_globals, legal = positions[side]
        alone = model(side_planes, side_globals)
        taken_rows, taken = mixed.take_side(side)
        assert taken_rows.tolist() == rows.tolist()
        assert_same_evaluation(alone, taken, legal, tolerance)
    empty = model(planes[:0], globals_[:0], sides=sides[:0])
    assert empty.policy_logits.shape == (0, 362) and empty.ownership.shape == (0, 361)
    assert model(positions[3][0][:0], positions[3][1][:0]).policy_logits.shape == (0, 20)


@pytest.mark.parametrize("training", [False, True])
def test_padding_cells_never_leak(training: bool) -> None:
    net = general_net()
    net.train(training)
    positions = positions_by_side(per_side=1)
    planes, globals_, sides, _ = padded_batch(positions, (3, 8, 5))
    planes = torch.from_numpy(planes)
    on_board = torch.zeros(len(sides), 1, 15 * 15)
    for row, side in enumerate(sides):
        on_board[row, 0, hex_cell_grid_index(int(side), 15)] = 1
    garbage = torch.randn_like(planes) * 100 * (1 - on_board.view(-1, 1, 15, 15))
    state = {name: value.clone() for name, value in net.state_dict().items()}
    clean = net(planes, torch.from_numpy(globals_), sides=sides)
    clean_state = {name: value.clone() for name, value in net.state_dict().items()}
    net.load_state_dict(state)
    noisy = net(planes + garbage, torch.from_numpy(globals_), sides=sides)
    for name in OUTPUTS:
        assert torch.equal(getattr(clean, name), getattr(noisy, name)), name
    for name, value in net.state_dict().items():
        assert torch.equal(value, clean_state[name]), name


def test_masked_batch_norm_of_a_padded_batch_uses_only_each_boards_cells() -> None:
    """Training statistics of a padded mixed batch equal batch norm over the on-board cells
    alone (gathered without any padding), and so do the running statistics."""
    sides = torch.tensor([2, 4, 3, 4])
    grid = 7
    masks = torch.zeros(len(sides), 1, grid * grid)
    for row, side in enumerate(sides.tolist()):
        masks[row, 0, hex_cell_grid_index(side, grid)] = 1
    masks = masks.view(-1, 1, grid, grid)
    counts = masks.flatten(1).sum(1, keepdim=True)
    norm = MaskedNormAct(4, enabled=True, momentum=0.1)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor([1.0, 2.0, 0.5, -1.0]))
        norm.bias.copy_(torch.tensor([0.0, 0.3, -0.2, 1.0]))
    x = torch.randn(len(sides), 4, grid, grid) * 3 + 2  # padding holds garbage on purpose
    out = norm(x, masks, counts)
    cells = [x[row].flatten(1)[:, hex_cell_grid_index(side, grid)].T
             for row, side in enumerate(sides.tolist())]
    on_board = torch.cat(cells)  # [all on-board cells, channels]
    running_mean, running_var = torch.zeros(4), torch.ones(4)
    reference = torch.nn.functional.batch_norm(
        on_board, running_mean, running_var, norm.weight, norm.bias, training=True,
        momentum=0.1, eps=norm.eps).relu()
    got = torch.cat([out[row].flatten(1)[:, hex_cell_grid_index(side, grid)].T
                     for row, side in enumerate(sides.tolist())])
    torch.testing.assert_close(got, reference, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(norm.running_mean, running_mean)
    torch.testing.assert_close(norm.running_var, running_var)
    assert torch.all(out * (1 - masks) == 0)
    norm.eval()
    with torch.inference_mode():
        cached = norm(x, masks, counts)
    torch.testing.assert_close(cached, norm(x, masks, counts))


def test_a_train_step_on_a_padded_batch_equals_one_on_the_unpadded_boards() -> None:
    """One side padded into a larger grid: the same train-mode outputs, running statistics and
    gradients as the batch on its own grid (padding enters no statistic and no pooling)."""
    positions = positions_by_side(per_side=4)
    planes, globals_, _ = positions[4]
    nets = [general_net(seed=2).train(), general_net(seed=2).train()]
    native = nets[0](torch.from_numpy(planes), torch.from_numpy(globals_))
    padded = nets[1](torch.from_numpy(pad_planes(planes, 13)), torch.from_numpy(globals_),
                     sides=[4] * len(planes))
    _, taken = padded.take_side(4)
    for name in OUTPUTS:
        torch.testing.assert_close(getattr(taken, name), getattr(native, name),
                                   atol=1e-5, rtol=1e-5, msg=name)
    for name, value in nets[0].state_dict().items():
        torch.testing.assert_close(nets[1].state_dict()[name], value, atol=1e-6, rtol=1e-5)
    for output in (native, taken):
        (output.value_logits.sum() + output.policy_logits.logsumexp(1).sum()
         + output.ownership.sum()).backward()
    for (name, first), second in zip(nets[0].named_parameters(), nets[1].parameters(),
                                     strict=True):
        assert (first.grad is None) == (second.grad is None), name
        if first.grad is not None:  # float32 sums over cells in another order: ~1e-5 of 5
            torch.testing.assert_close(second.grad, first.grad, atol=2e-4, rtol=1e-4, msg=name)


def load_legacy_net() -> tuple[PolicyValueNet, dict]:
    data = dict(np.load(FIXTURE))
    init_args = json.loads(data["init_args"].tobytes().decode())
    net = PolicyValueNet.from_init_args(init_args)
    net.load_state_dict({name[len("state/"):]: torch.from_numpy(value)
                         for name, value in data.items() if name.startswith("state/")})
    return net, data


def test_a_net_built_for_one_side_computes_what_it_computed_before() -> None:
    """The weights and outputs in the fixture were written by the code before the general net."""
    net, data = load_legacy_net()
    assert net.init_args == json.loads(data["init_args"].tobytes().decode())
    assert net.side == 4 and net.num_globals == LEGACY_NUM_GLOBALS
    planes, globals_ = torch.from_numpy(data["planes"]), torch.from_numpy(data["globals"])
    # Today's observation has more globals: the old net reads its first eleven.
    wider = torch.cat([globals_, torch.rand(len(globals_), NUM_GLOBALS + 2 - globals_.shape[1])],
                      dim=1)
    net.eval()
    with torch.no_grad():
        for inputs in (globals_, wider):
            output = net(planes, inputs)
            for name in OUTPUTS:
                np.testing.assert_allclose(getattr(output, name).numpy(), data[f"eval/{name}"],
                                           atol=1e-6, rtol=1e-6, err_msg=name)
    model = InferenceModel(net, "cpu", precision="float32")
    np.testing.assert_allclose(model(data["planes"], data["globals"]).policy_logits,
                               data["eval/policy_logits"], atol=1e-5, rtol=1e-5)
    net.train()
    output = net(planes, globals_)
    for name in OUTPUTS:
        np.testing.assert_allclose(getattr(output, name).detach().numpy(),
                                   data[f"train/{name}"], atol=1e-5, rtol=1e-5, err_msg=name)
    for name, value in net.state_dict().items():
        if "running" in name:
            np.testing.assert_allclose(value.numpy(), data[f"after_train/{name}"],
                                       atol=1e-6, rtol=1e-6, err_msg=name)


def test_a_net_built_for_one_side_plays_every_side() -> None:
    """Weights have no grid-dependent tensor: the side-4 net evaluates side 6 alone and in a
    mixed batch, and a size-free net with its weights gives the same outputs."""
    old, _ = load_legacy_net()
    old.eval()
    general = PolicyValueNet(old.num_planes, old.num_globals, old.config)
    general.load_state_dict(old.state_dict())
    general.eval()
    assert "grid_size" not in general.init_args and general.side is None
    positions = {side: observed_positions(side, 3, seed=side) for side in (3, 4, 6)}
    planes, globals_, sides, where = padded_batch(positions, (4, 6, 3))
    with torch.no_grad():
        mixed = old(torch.from_numpy(planes[:, :11]), torch.from_numpy(globals_), sides=sides)
        for side, _ in where:
            side_planes, side_globals, legal = positions[side]
            alone = old(torch.from_numpy(side_planes), torch.from_numpy(side_globals))
            free = general(torch.from_numpy(side_planes), torch.from_numpy(side_globals))
            for name in OUTPUTS:
                assert torch.equal(getattr(alone, name), getattr(free, name)), (side, name)
            assert_same_evaluation(to_numpy(alone), to_numpy(mixed.take_side(side)[1]), legal,
                                   1e-5)


def test_constructor_forms_and_bad_sides_are_refused() -> None:
    net = general_net()
    clone = PolicyValueNet.from_init_args(net.init_args)
    assert clone.init_args == net.init_args and clone.grid_size is None
    assert net.num_cells_for(7) == 37
    planes = torch.zeros(2, NUM_PLANES, 7, 7)
    globals_ = torch.zeros(2, NUM_GLOBALS)
    with pytest.raises(ValueError, match="one side per position"):
        net(planes, globals_, sides=[4])
    with pytest.raises(ValueError, match="fit the 7x7 grid"):
        net(planes, globals_, sides=[4, 5])
    with pytest.raises(ValueError, match="sides must lie"):
        net(planes, globals_, sides=[1, 4])
    with pytest.raises(ValueError, match="home board needs both"):
        PolicyValueNet(NUM_PLANES, NUM_GLOBALS, 7, None, SMALL)
    with pytest.raises(ValueError, match="takes no cell_grid_index"):
        PolicyValueNet(NUM_PLANES, NUM_GLOBALS, SMALL, [0, 1])
    with pytest.raises(ValueError, match="padded output"):
        net(planes, globals_).take_side(4)
