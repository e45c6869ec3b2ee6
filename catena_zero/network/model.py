"""Policy-value network on the hexagon embedded in a (2n-1) x (2n-1) grid.

KataGo-style pre-activation residual tower with global pooling bias blocks. Hex
adjacency comes from 3x3 convolutions whose two non-neighbour corner taps are
masked to zero, so one layer sees exactly a cell and its six neighbours. The
inputs and every normalised activation are multiplied by the on-board mask, so
each convolution and pooling sees zeros off the board and nothing off-board can
leak into a result (the residual stream itself is not masked: it is only read
through those masked activations).

Normalisation: masked batch norm (statistics over on-board cells only) by
default. It lets the tower train at a high learning rate from scratch without
careful init, and at inference it is a fixed per-channel affine map; "none"
(conv biases, zero-initialised last conv per block so every block starts as the
identity) is there for tiny nets and for comparison.

Example::

    import torch
    from catena_zero.network import NetworkConfig, PolicyValueNet
    from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, get_board

    board = get_board(4)
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index,
                         NetworkConfig(blocks=4, channels=32))
    out = net(torch.zeros(8, NUM_PLANES, 7, 7), torch.zeros(8, NUM_GLOBALS))
    out.policy_logits.shape   # [8, 38]  (37 cells + button)
    out.value                 # [8] win - loss probability, side to move's view
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from catena_zero.network.config import NetworkConfig

WIN, DRAW, LOSS = 0, 1, 2  # order of the value logits


@dataclass
class NetOutput:
    """Network heads, batch first. Tensors from `forward`, numpy from the inference wrapper."""

    policy_logits: Any  # [B, A] cells then the button (A = C + 1)
    value_logits: Any  # [B, 3] win / draw / loss of the side to move
    score: Any  # [B] expected final margin in points, side to move's view
    ownership: Any  # [B, C] in [-1, 1]: +1 the side to move owns the cell at the end
    ownership_logit: Any = None  # [B, C] pre-tanh ownership (for the loss); None from inference
    score_belief_logits: Any = None  # [B, K] final-margin bins (for the loss); None if no head

    @property
    def value(self) -> Any:
        """Expected outcome p(win) - p(loss) in [-1, 1]. # [B]"""
        return wdl_to_value(self.value_logits)


def wdl_to_value(value_logits: Any) -> Any:
    """[B, 3] win/draw/loss logits -> [B] p(win) - p(loss), for torch tensors or numpy arrays."""
    if isinstance(value_logits, torch.Tensor):
        probabilities = torch.softmax(value_logits.float(), dim=-1)
        return probabilities[..., WIN] - probabilities[..., LOSS]
    logits = np.asarray(value_logits, dtype=np.float64)
    logits = logits - logits.max(axis=-1, keepdims=True)
    probabilities = np.exp(logits)
    probabilities /= probabilities.sum(axis=-1, keepdims=True)
    return (probabilities[..., WIN] - probabilities[..., LOSS]).astype(np.float32)


def hex_kernel_mask(kernel_size: int) -> torch.Tensor:
    """[k, k] float mask of the taps within hex distance k // 2, indexed [row offset, col offset].

    In (col, row) the six neighbour offsets are (+-1, 0), (0, +-1), (+1, +1) and (-1, -1), so
    the hex distance of (dc, dr) is max(|dc|, |dr|, |dc - dr|): taps (+1, -1) and (-1, +1)
    of a 3x3 kernel are at distance 2 and get masked.
    """
    radius = kernel_size // 2
    offsets = torch.arange(kernel_size) - radius
    row_offset = offsets[:, None]
    col_offset = offsets[None, :]
    distance = torch.maximum(
        torch.maximum(row_offset.abs(), col_offset.abs()), (col_offset - row_offset).abs()
    )
    return (distance <= radius).float()


class HexConv2d(nn.Conv2d):
    """Conv2d whose kernel is restricted to a hex neighbourhood (non-hex taps held at zero)."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int = 3, bias: bool = True
    ):
        super().__init__(
            in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=bias
        )
        self.register_buffer("tap_mask", hex_kernel_mask(kernel_size), persistent=False)
        with torch.no_grad():
            self.weight.mul_(self.tap_mask)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._conv_forward(x, self.weight * self.tap_mask, self.bias)


class MaskedNormAct(nn.Module):
    """Batch norm with statistics over on-board cells, then ReLU, then the on-board mask.

    With `enabled=False` it is a ReLU and mask only (the convs carry the biases).
    """

    def __init__(self, channels: int, enabled: bool, momentum: float = 0.01, eps: float = 1e-5):
        super().__init__()
        self.enabled = enabled
        self.momentum = momentum
        self.eps = eps
        if enabled:
            self.weight = nn.Parameter(torch.ones(channels))
            self.bias = nn.Parameter(torch.zeros(channels))
            self.register_buffer("running_mean", torch.zeros(channels))
            self.register_buffer("running_var", torch.ones(channels))

    def forward(self, x: torch.Tensor, mask: torch.Tensor, cell_count: int) -> torch.Tensor:
        if not self.enabled:
            return torch.relu(x) * mask
        if self.training:
            count = x.shape[0] * cell_count
            # Masked sums as mat-vec products (no masked copy of x is materialised), in
            # float32 even under autocast: E[x^2] - E[x]^2 would cancel badly in bfloat16.
            with torch.autocast(device_type=x.device.type, enabled=False):
                flat_mask = mask.reshape(-1).float()  # [H * W]
                flat = x.float().flatten(2)  # [B, C, H * W]
                mean = (flat @ flat_mask).sum(dim=0) / count
                mean_square = (flat.square() @ flat_mask).sum(dim=0) / count
                variance = (mean_square - mean.square()).clamp_min(0.0)
            with torch.no_grad():
                unbiased = variance * (count / max(count - 1, 1))
                self.running_mean.lerp_(mean.detach().float(), self.momentum)
                self.running_var.lerp_(unbiased.detach().float(), self.momentum)
        elif torch.is_inference_mode_enabled():
            # Self-play hot path: the cached affine with the mask folded in, one fused op,
            # then ReLU in place (no autograd).
            layout = (torch.channels_last if x.is_contiguous(memory_format=torch.channels_last)
                      else torch.contiguous_format)
            scale, shift = self._eval_affine(mask, x.dtype, layout)
            return torch.addcmul(shift, x, scale).relu_()
        else:
            mean, variance = self.running_mean, self.running_var
        scale = self.weight * torch.rsqrt(variance + self.eps)
        shift = self.bias - mean * scale
        return torch.relu(x * scale[None, :, None, None] + shift[None, :, None, None]) * mask

    def __getstate__(self) -> dict:
        # The cache holds inference tensors tied to this object's storage: never ship it.
        state = self.__dict__.copy()
        state.pop("_affine_cache", None)
        return state

    def _eval_affine(self, mask: torch.Tensor, dtype: torch.dtype,
                     memory_format: torch.memory_format) -> tuple[torch.Tensor, torch.Tensor]:
        """(scale, shift) [1, C, H, W] in `dtype` and `memory_format` from the running
        statistics, cached, with the 0/1 on-board `mask` [1, 1, H, W] folded in:
        relu(a x + b) m = relu(a m x + b m).

        Computed in float32 and cast once. Only used under inference_mode (the cached tensors
        are inference tensors). The cache is keyed on the tensors' version counters, so any
        in-place change (an optimiser step, load_state_dict, .to()) recomputes it.
        """
        tensors = (self.weight, self.bias, self.running_mean, self.running_var)
        # The mask is the owning net's constant board mask (a fresh cast of it per call in
        # reduced precision), so its shape and device identify it.
        key = (tuple((t._version, t.data_ptr(), t.device, t.dtype) for t in tensors),
               tuple(mask.shape), mask.device, dtype, memory_format)
        cached = getattr(self, "_affine_cache", None)
        if cached is None or cached[0] != key:
            with torch.no_grad():
                scale = self.weight.float() * torch.rsqrt(self.running_var.float() + self.eps)
                shift = self.bias.float() - self.running_mean.float() * scale
                on_board = mask.float()
                # In the activations' layout, so the fused op runs on one layout.
                scale = (scale.view(1, -1, 1, 1) * on_board).to(dtype)
                shift = (shift.view(1, -1, 1, 1) * on_board).to(dtype)
            cached = (key, scale.contiguous(memory_format=memory_format),
                      shift.contiguous(memory_format=memory_format))
            self._affine_cache = cached
        return cached[1], cached[2]


def dense(layer: nn.Linear, x: torch.Tensor, out_dtype: torch.dtype | None = None
          ) -> torch.Tensor:
    """`layer(x)` in the layer's own dtype (a reduced-precision copy keeps its small linear
    layers in float32, where they run faster than in bfloat16), cast to `out_dtype`."""
    output = layer(x.to(layer.weight.dtype))
    return output if out_dtype is None else output.to(out_dtype)


def masked_global_pool(x: torch.Tensor, mask: torch.Tensor, cell_count: int) -> torch.Tensor:
    """[B, C, H, W] (zero off-board, >= 0 after ReLU) -> [B, 2C]: on-board mean and max."""
    mean = x.sum(dim=(2, 3)) / cell_count
    # Inputs are post-ReLU (>= 0) and zero off-board, so off-board zeros never exceed the max.
    maximum = x.amax(dim=(2, 3))
    return torch.cat([mean, maximum], dim=1)


class ResidualBlock(nn.Module):
    """Pre-activation residual block; with `pool_channels` > 0 a global pooling bias block."""

    def __init__(self, channels: int, pool_channels: int, normalise: bool):
        super().__init__()
        self.pool_channels = pool_channels
        regular = channels - pool_channels
        self.norm1 = MaskedNormAct(channels, normalise)
        self.conv1 = HexConv2d(channels, channels, bias=not normalise)
        if pool_channels:
            self.pool_norm = MaskedNormAct(pool_channels, normalise)
            self.pool_linear = nn.Linear(2 * pool_channels, regular, bias=False)
        self.norm2 = MaskedNormAct(regular, normalise)
        self.conv2 = HexConv2d(regular, channels, bias=not normalise)
        if not normalise:
            # Without normalisation each block starts as the identity, so depth cannot blow up.
            with torch.no_grad():
                self.conv2.weight.zero_()

    def forward(self, x: torch.Tensor, mask: torch.Tensor, cell_count: int) -> torch.Tensor:
        hidden = self.conv1(self.norm1(x, mask, cell_count))
        if self.pool_channels:
            split = hidden.shape[1] - self.pool_channels
            regular, pooled = hidden[:, :split], hidden[:, split:]
            pooled = masked_global_pool(self.pool_norm(pooled, mask, cell_count), mask, cell_count)
            hidden = regular + dense(self.pool_linear, pooled, regular.dtype)[:, :, None, None]
        hidden = self.conv2(self.norm2(hidden, mask, cell_count))
        # Off-board values of the residual stream are never read: every conv input comes
        # from a MaskedNormAct (which masks) and every pooling reads masked features.
        if torch.is_inference_mode_enabled():
            return x.add_(hidden)
        return x + hidden


class PolicyValueNet(nn.Module):
    """Residual hex conv net; see the module docstring.

    Args:
        num_planes: input planes P (the first P of the observation; later ones are ignored).
        num_globals: global inputs G.
        grid_size: H = W = 2n - 1.
        cell_grid_index: int [C], cell i sits at flat grid position row * H + col.
        config: NetworkConfig.
    """

    def __init__(
        self,
        num_planes: int,
        num_globals: int,
        grid_size: int,
        cell_grid_index: Any,
        config: NetworkConfig | None = None,
    ):
        super().__init__()
        config = config if config is not None else NetworkConfig()
        config.validate()
        cell_index = np.asarray(cell_grid_index, dtype=np.int64).reshape(-1)
        if num_planes < 1 or num_globals < 0 or grid_size < 1:
            raise ValueError(
                f"bad network shape: num_planes={num_planes}, num_globals={num_globals},"
                f" grid_size={grid_size}"
            )
        if cell_index.size == 0 or cell_index.min() < 0 or cell_index.max() >= grid_size**2:
            raise ValueError(f"cell_grid_index must lie in [0, {grid_size**2}), got {cell_index}")
        if np.unique(cell_index).size != cell_index.size:
            raise ValueError("cell_grid_index has repeated grid positions")
        self.config = config
        self.num_planes = num_planes
        self.num_globals = num_globals
        self.grid_size = grid_size
        self.num_cells = int(cell_index.size)
        self.num_actions = self.num_cells + 1
        normalise = config.normalisation == "batch"
        channels = config.channels

        board_mask = torch.zeros(grid_size * grid_size)
        board_mask[torch.from_numpy(cell_index)] = 1.0
        self.register_buffer(
            "cell_grid_index", torch.from_numpy(cell_index.copy()), persistent=False
        )
        self.register_buffer(
            "board_mask", board_mask.view(1, 1, grid_size, grid_size), persistent=False
        )

        self.stem = HexConv2d(num_planes, channels, config.stem_kernel, bias=False)
        self.global_linear = nn.Linear(num_globals, channels) if num_globals else None
        blocks = []
        for index in range(config.blocks):
            pooling = config.global_pool_every and (index + 1) % config.global_pool_every == 0
            blocks.append(
                ResidualBlock(channels, config.global_pool_channels if pooling else 0, normalise)
            )
        self.blocks = nn.ModuleList(blocks)
        self.trunk_norm = MaskedNormAct(channels, normalise)

        policy_channels = config.policy_head_channels
        self.policy_conv = nn.Conv2d(channels, policy_channels, 1, bias=not normalise)
        self.policy_pool_conv = nn.Conv2d(channels, policy_channels, 1, bias=not normalise)
        self.policy_pool_norm = MaskedNormAct(policy_channels, normalise)
        self.policy_pool_linear = nn.Linear(2 * policy_channels, policy_channels, bias=False)
        self.policy_norm = MaskedNormAct(policy_channels, normalise)
        self.policy_out = nn.Conv2d(policy_channels, 1, 1)
        self.button_linear = nn.Linear(2 * policy_channels, 1)

        value_channels = config.value_head_channels
        self.value_conv = nn.Conv2d(channels, value_channels, 1, bias=not normalise)
        self.value_norm = MaskedNormAct(value_channels, normalise)
        self.value_hidden = nn.Linear(2 * value_channels, config.value_hidden)
        self.value_out = nn.Linear(config.value_hidden, 3)
        self.score_out = nn.Linear(config.value_hidden, 1)
        self.ownership_out = nn.Conv2d(value_channels, 1, 1)
        # KataGo's score belief: a distribution over the final margin, an auxiliary target
        # that tells the trunk how far a game is from being won at every komi, not just this one.
        self.score_belief_out = (nn.Linear(config.value_hidden, config.score_belief_bins)
                                 if config.score_belief_bins else None)

    @property
    def init_args(self) -> dict[str, Any]:
        """Plain-data constructor arguments: `PolicyValueNet.from_init_args(net.init_args)`."""
        return {
            "num_planes": self.num_planes,
            "num_globals": self.num_globals,
            "grid_size": self.grid_size,
            "cell_grid_index": self.cell_grid_index.cpu().tolist(),
            "config": self.config.to_dict(),
        }

    @classmethod
    def from_init_args(cls, args: dict[str, Any]) -> PolicyValueNet:
        return cls(
            args["num_planes"],
            args["num_globals"],
            args["grid_size"],
            args["cell_grid_index"],
            NetworkConfig.from_dict(dict(args["config"])),
        )

    def _check_inputs(self, planes: torch.Tensor, globals_: torch.Tensor) -> None:
        size = self.grid_size
        if (planes.dim() != 4 or planes.shape[1] < self.num_planes
                or tuple(planes.shape[2:]) != (size, size)):
            raise ValueError(f"planes must be [B, P >= {self.num_planes}, {size}, {size}], "
                             f"got {tuple(planes.shape)}")
        if globals_.dim() != 2 or globals_.shape != (planes.shape[0], self.num_globals):
            raise ValueError(
                f"globals must be [{planes.shape[0]}, {self.num_globals}],"
                f" got {tuple(globals_.shape)}"
            )

    def forward_tuple(
        self, planes: torch.Tensor, globals_: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        """(policy_logits [B, A], value_logits [B, 3], score [B], ownership [B, C],
        ownership_logit [B, C], score_belief_logits [B, K] or None) from planes [B, P, H, W]
        and globals [B, G]."""
        self._check_inputs(planes, globals_)
        # Input planes are append-only: a net trained on an older, shorter observation reads
        # its first num_planes planes and ignores the ones added since.
        planes = planes[:, : self.num_planes]
        mask = self.board_mask.to(planes.dtype)
        cells = self.num_cells
        batch = planes.shape[0]

        x = self.stem(planes * mask)
        if self.global_linear is not None:
            x = x + dense(self.global_linear, globals_, x.dtype)[:, :, None, None]
        for block in self.blocks:
            x = block(x, mask, cells)
        x = self.trunk_norm(x, mask, cells)

        pooled_source = self.policy_pool_norm(self.policy_pool_conv(x), mask, cells)
        policy_pooled = masked_global_pool(pooled_source, mask, cells)
        policy = self.policy_conv(x)
        policy = policy + dense(self.policy_pool_linear, policy_pooled, policy.dtype)[
            :, :, None, None]
        policy = self.policy_out(self.policy_norm(policy, mask, cells))
        cell_logits = policy.reshape(batch, -1)[:, self.cell_grid_index]
        button_logit = dense(self.button_linear, policy_pooled)
        policy_logits = torch.cat([cell_logits.to(button_logit.dtype), button_logit], dim=1)

        value_features = self.value_norm(self.value_conv(x), mask, cells)
        hidden = torch.relu(dense(self.value_hidden,
                                  masked_global_pool(value_features, mask, cells)))
        value_logits = self.value_out(hidden)
        score = self.score_out(hidden).squeeze(1) * self.config.score_scale
        ownership_logit = self.ownership_out(value_features).reshape(batch, -1)
        ownership_logit = ownership_logit[:, self.cell_grid_index]
        score_belief_logits = (None if self.score_belief_out is None
                               else self.score_belief_out(hidden))
        return (policy_logits, value_logits, score, torch.tanh(ownership_logit), ownership_logit,
                score_belief_logits)

    def forward(self, planes: torch.Tensor, globals_: torch.Tensor) -> NetOutput:
        """planes [B, P, H, W] float, globals [B, G] float -> NetOutput (see its fields)."""
        return NetOutput(*self.forward_tuple(planes, globals_))

    def as_tuple_module(self) -> nn.Module:
        """A module whose forward returns the first four outputs as a tuple (for tracing/export)."""
        return _TupleOutput(self)


class _TupleOutput(nn.Module):
    def __init__(self, net: PolicyValueNet):
        super().__init__()
        self.net = net

    def forward(self, planes: torch.Tensor, globals_: torch.Tensor):
        return self.net.forward_tuple(planes, globals_)[:4]


def count_parameters(net: nn.Module, trainable_only: bool = True) -> int:
    """Number of (trainable) parameters."""
    return sum(p.numel() for p in net.parameters() if p.requires_grad or not trainable_only)
