"""PolicyValueNet: shapes, hex convolution, on-board masking, symmetry equivariance."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from catena_zero.network import (
    HexConv2d,
    InferenceModel,
    NetworkConfig,
    PolicyValueNet,
    count_parameters,
    hex_kernel_mask,
    resolve_device,
    wdl_to_value,
)
from catena_zero.rules import get_board

torch.set_num_threads(1)

NUM_PLANES = 5  # made-up counts: the net knows only shapes
NUM_GLOBALS = 7
SMALL = NetworkConfig(
    blocks=2, channels=16, global_pool_every=1, global_pool_channels=4,
    policy_head_channels=4, value_head_channels=4, value_hidden=8,
)


def make_net(side: int, config: NetworkConfig = SMALL, seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    board = get_board(side)
    return PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index, config)


def random_inputs(side: int, batch: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    board = get_board(side)
    generator = torch.Generator().manual_seed(seed)
    size = board.grid_size
    planes = (torch.rand(batch, NUM_PLANES, size, size, generator=generator) < 0.4).float()
    planes *= on_board_grid(side)
    globals_ = torch.rand(batch, NUM_GLOBALS, generator=generator)
    return planes, globals_


def on_board_grid(side: int) -> torch.Tensor:
    board = get_board(side)
    mask = torch.zeros(board.grid_size**2)
    mask[torch.as_tensor(board.cell_grid_index)] = 1
    return mask.view(board.grid_size, board.grid_size)


@pytest.mark.parametrize("side", [2, 4, 6, 10])
@pytest.mark.parametrize("normalisation", ["batch", "none"])
def test_output_shapes(side: int, normalisation: str) -> None:
    config = NetworkConfig(**{**SMALL.to_dict(), "normalisation": normalisation})
    net = make_net(side, config)
    board = get_board(side)
    planes, globals_ = random_inputs(side, 3)
    for mode in (True, False):
        net.train(mode)
        out = net(planes, globals_)
        assert out.policy_logits.shape == (3, board.num_actions)
        assert out.value_logits.shape == (3, 3)
        assert out.score.shape == (3,)
        assert out.ownership.shape == (3, board.num_cells)
        assert out.ownership_logit.shape == (3, board.num_cells)
        assert out.value.shape == (3,)
        assert torch.all(out.ownership.abs() <= 1)
        assert torch.isfinite(out.policy_logits).all()


def test_hex_kernel_mask_drops_the_two_non_neighbour_corners() -> None:
    mask = hex_kernel_mask(3)  # [row offset + 1, col offset + 1]
    assert mask[0, 2] == 0  # (col +1, row -1)
    assert mask[2, 0] == 0  # (col -1, row +1)
    assert mask.sum() == 7
    assert hex_kernel_mask(5).sum() == 19  # the cell and two hex rings


def test_hex_conv_reaches_exactly_the_six_neighbours() -> None:
    side = 4
    board = get_board(side)
    size = board.grid_size
    conv = HexConv2d(1, 1, 3, bias=False)
    with torch.no_grad():
        conv.weight.copy_(torch.rand_like(conv.weight) + 0.5)  # masked taps too: must not count
    for cell in range(board.num_cells):
        impulse = torch.zeros(1, 1, size * size)
        impulse[0, 0, board.cell_grid_index[cell]] = 1
        response = conv(impulse.view(1, 1, size, size)).view(-1)
        reached = set(np.flatnonzero(response.detach().numpy() != 0).tolist())
        neighbours = [n for n in board.neighbours[cell] if n < board.num_cells]
        expected = {int(board.cell_grid_index[n]) for n in [cell, *neighbours]}
        assert expected <= reached  # every neighbour
        on_board = set(board.cell_grid_index.tolist())
        assert reached & on_board == expected  # and no other cell


def test_masked_taps_get_no_gradient() -> None:
    conv = HexConv2d(2, 3, 3)
    conv(torch.rand(1, 2, 5, 5)).sum().backward()
    assert torch.all(conv.weight.grad[:, :, 0, 2] == 0)
    assert torch.all(conv.weight.grad[:, :, 2, 0] == 0)
    assert torch.all(conv.weight[:, :, 0, 2] == 0)  # zeroed at init, so weight decay keeps it 0


@pytest.mark.parametrize("training", [False, True])
def test_off_board_inputs_never_leak(training: bool) -> None:
    side = 4
    net = make_net(side)
    net.train(training)
    planes, globals_ = random_inputs(side, 4)
    garbage = torch.randn_like(planes) * 100 * (1 - on_board_grid(side))
    torch.manual_seed(1)
    clean = net(planes, globals_)
    noisy = net(planes + garbage, globals_)
    for name in ("policy_logits", "value_logits", "score", "ownership"):
        assert torch.equal(getattr(clean, name), getattr(noisy, name)), name


def make_isotropic(net: PolicyValueNet) -> None:
    """Hex-isotropic kernels (one value for the centre, one for all six neighbours): such a
    net commutes with the 12 board symmetries, which the grid embedding must preserve."""
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, HexConv2d):
                weight = module.weight
                centre = torch.randn(weight.shape[:2]) * 0.3
                ring = torch.randn(weight.shape[:2]) * 0.3
                weight.copy_(ring[:, :, None, None] * module.tap_mask)
                weight[:, :, 1, 1] = centre


@pytest.mark.parametrize("side", [3, 5])
def test_isotropic_net_is_equivariant_under_all_symmetries(side: int) -> None:
    board = get_board(side)
    net = make_net(side).eval()
    make_isotropic(net)
    planes, globals_ = random_inputs(side, 2, seed=3)
    base = net(planes, globals_)
    size = board.grid_size
    for k in range(12):
        # Move every on-board value of the planes to its image cell.
        permutation = torch.arange(size * size)
        grid = torch.as_tensor(board.cell_grid_index)
        permutation[grid] = grid[torch.as_tensor(board.symmetries[k])]
        moved = torch.empty_like(planes.view(2, NUM_PLANES, -1))
        moved[:, :, permutation] = planes.view(2, NUM_PLANES, -1)
        out = net(moved.view_as(planes), globals_)
        expected_policy = torch.empty_like(base.policy_logits)
        expected_policy[:, torch.as_tensor(board.action_symmetries[k])] = base.policy_logits
        expected_ownership = torch.empty_like(base.ownership)
        expected_ownership[:, torch.as_tensor(board.symmetries[k])] = base.ownership
        torch.testing.assert_close(out.policy_logits, expected_policy, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(out.ownership, expected_ownership, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(out.value_logits, base.value_logits, atol=1e-4, rtol=1e-4)


def test_symmetric_input_gives_symmetric_policy_for_an_isotropic_net() -> None:
    board = get_board(4)
    net = make_net(4).eval()
    make_isotropic(net)
    planes = torch.zeros(1, NUM_PLANES, board.grid_size, board.grid_size)
    planes[0, 0] = on_board_grid(4)  # the empty board is invariant under every symmetry
    policy = net(planes, torch.zeros(1, NUM_GLOBALS)).policy_logits[0]
    centre = board.parse_cell("D4")
    for k in range(12):
        torch.testing.assert_close(policy[board.action_symmetries[k]], policy, atol=1e-4, rtol=0)
    # Cells at equal distance from the centre share logits; the centre differs from a corner.
    assert not torch.isclose(policy[centre], policy[board.parse_cell("A1")])


def test_inference_model_numpy_round_trip() -> None:
    side = 3
    net = make_net(side)
    net.train()
    planes, globals_ = random_inputs(side, 5)
    model = InferenceModel(net, "cpu", precision="float32")
    assert not net.training
    out = model(planes.numpy().astype(np.uint8), globals_.numpy())
    with torch.no_grad():
        reference = net(planes, globals_)
    for name in ("policy_logits", "value_logits", "score", "ownership"):
        value = getattr(out, name)
        assert isinstance(value, np.ndarray) and value.dtype == np.float32
        np.testing.assert_allclose(value, getattr(reference, name).numpy(), rtol=1e-5, atol=1e-6)
    assert out.ownership_logit is None
    np.testing.assert_allclose(out.value, wdl_to_value(reference.value_logits).numpy(), atol=1e-6)
    empty = model(np.zeros((0, NUM_PLANES, 5, 5), np.float32), np.zeros((0, NUM_GLOBALS)))
    assert empty.policy_logits.shape == (0, get_board(side).num_actions)


def test_inference_layouts_agree() -> None:
    """Channels-last (the CPU default) and contiguous inference give the same outputs, and
    the converted weights train as before (inline runs share the net with the trainer)."""
    side = 4
    net = make_net(side)
    planes, globals_ = random_inputs(side, 7)
    planes_np, globals_np = planes.numpy().astype(np.uint8), globals_.numpy()
    default = InferenceModel(net, "cpu", precision="float32")
    assert default.memory_format == torch.channels_last
    assert net.blocks[0].conv1.weight.is_contiguous(memory_format=torch.channels_last)
    last = default(planes_np, globals_np)
    plain = InferenceModel(net, "cpu", channels_last=False, precision="float32")(
        planes_np, globals_np)
    assert net.blocks[0].conv1.weight.is_contiguous()
    for name in ("policy_logits", "value_logits", "score", "ownership"):
        np.testing.assert_allclose(getattr(last, name), getattr(plain, name), rtol=1e-5,
                                   atol=1e-5)
    InferenceModel(net, "cpu")  # back to channels-last, as an inline run's self-play leaves it
    net.train()
    output = net(planes, globals_)
    (output.policy_logits.square().mean() + output.score.square().mean()).backward()
    gradient = net.blocks[0].conv1.weight.grad
    assert gradient is not None and torch.isfinite(gradient).all()


def test_resolve_device() -> None:
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="bogus"):
        resolve_device("bogus")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


def test_bad_inputs_and_configs_are_refused() -> None:
    net = make_net(3)
    # A net reads every board side (7 x 7 is side 4), not a grid of no board side.
    with pytest.raises(ValueError, match="planes must be"):
        net(torch.zeros(1, NUM_PLANES, 6, 6), torch.zeros(1, NUM_GLOBALS))
    with pytest.raises(ValueError, match="planes must be"):
        net(torch.zeros(1, NUM_PLANES - 1, 5, 5), torch.zeros(1, NUM_GLOBALS))
    # Globals are append-only like planes: more are read as the first G, fewer are refused.
    with pytest.raises(ValueError, match="globals must be"):
        net(torch.zeros(1, NUM_PLANES, 5, 5), torch.zeros(1, NUM_GLOBALS - 1))
    with pytest.raises(ValueError, match="globals must be"):
        net(torch.zeros(1, NUM_PLANES, 5, 5), torch.zeros(2, NUM_GLOBALS))
    with pytest.raises(ValueError, match="blocks"):
        NetworkConfig(blocks=0)
    with pytest.raises(ValueError, match="normalisation"):
        NetworkConfig(normalisation="layer")
    with pytest.raises(ValueError, match="global_pool_channels"):
        NetworkConfig(channels=8, global_pool_channels=8)
    with pytest.raises(ValueError, match="unknown NetworkConfig"):
        NetworkConfig.from_dict({"blocks": 2, "depth": 3})
    with pytest.raises(ValueError, match="cell_grid_index"):
        PolicyValueNet(NUM_PLANES, NUM_GLOBALS, 3, [0, 9], SMALL)


def test_init_args_rebuild_the_same_net_and_parameter_count() -> None:
    net = make_net(4)
    clone = PolicyValueNet.from_init_args(net.init_args)
    clone.load_state_dict(net.state_dict())
    planes, globals_ = random_inputs(4, 2)
    net.eval()
    clone.eval()
    assert torch.equal(net(planes, globals_).policy_logits, clone(planes, globals_).policy_logits)
    total = sum(p.numel() for p in net.parameters())
    assert count_parameters(net) == total > 0
    bigger = make_net(4, NetworkConfig(blocks=4, channels=32))
    assert count_parameters(bigger) > count_parameters(net)


def test_masked_batch_norm_matches_batch_norm_over_on_board_cells() -> None:
    from catena_zero.network.model import MaskedNormAct

    side = 3
    board = get_board(side)
    mask = on_board_grid(side).view(1, 1, 5, 5)
    cells = torch.as_tensor(board.cell_grid_index)
    norm = MaskedNormAct(4, enabled=True, momentum=0.1)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor([1.0, 2.0, 0.5, -1.0]))
        norm.bias.copy_(torch.tensor([0.0, 0.3, -0.2, 1.0]))
    x = torch.randn(6, 4, 5, 5) * 3 + 2  # off-board values are garbage on purpose
    out = norm(x, mask, board.num_cells)
    on_board = x.flatten(2)[:, :, cells].permute(0, 2, 1).reshape(-1, 4)  # [B * C, channels]
    running_mean, running_var = torch.zeros(4), torch.ones(4)
    reference = torch.nn.functional.batch_norm(
        on_board, running_mean, running_var, norm.weight, norm.bias, training=True,
        momentum=0.1, eps=norm.eps,
    ).relu()
    got = out.flatten(2)[:, :, cells].permute(0, 2, 1).reshape(-1, 4)
    torch.testing.assert_close(got, reference, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(norm.running_mean, running_mean)
    torch.testing.assert_close(norm.running_var, running_var)
    assert torch.all(out * (1 - mask) == 0)
    norm.eval()
    with torch.inference_mode():
        cached = norm(x, mask, board.num_cells)
    torch.testing.assert_close(cached, norm(x, mask, board.num_cells))


def test_inference_follows_weight_changes_and_copies() -> None:
    import copy
    import pickle

    net = make_net(3).eval()
    planes, globals_ = random_inputs(3, 3)

    def uncached():
        with torch.no_grad():  # eval path without the inference-mode cache
            return net(planes, globals_).policy_logits

    def cached():
        with torch.inference_mode():
            return net(planes, globals_).policy_logits.clone()

    torch.testing.assert_close(cached(), uncached(), atol=1e-5, rtol=1e-5)
    with torch.no_grad():
        for module in net.modules():
            if hasattr(module, "running_var"):
                module.weight.mul_(1.5)
                module.running_mean.add_(0.1)
    torch.testing.assert_close(cached(), uncached(), atol=1e-5, rtol=1e-5)
    other = make_net(3, seed=9)
    net.load_state_dict(other.state_dict())
    torch.testing.assert_close(cached(), uncached(), atol=1e-5, rtol=1e-5)
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        with torch.inference_mode():
            assert torch.equal(clone(planes, globals_).policy_logits, cached())


def test_planes_added_after_training_are_ignored() -> None:
    """Observations are append-only: a net reads its first num_planes planes."""
    net = make_net(3).eval()
    planes, globals_ = random_inputs(3, 4)
    longer = torch.cat([planes, torch.rand(4, 3, 5, 5)], dim=1)
    torch.testing.assert_close(net(longer, globals_).policy_logits,
                               net(planes, globals_).policy_logits, rtol=0, atol=0)
