"""Policy-value network on hexagonal boards of any side, each embedded in a square grid.

KataGo-style pre-activation residual tower with global pooling bias blocks. Hex
adjacency comes from 3x3 convolutions whose two non-neighbour corner taps are
masked to zero, so one layer sees exactly a cell and its six neighbours. The
inputs and every normalised activation are multiplied by the on-board mask, so
each convolution and pooling sees zeros off the board and nothing off-board can
leak into a result (the residual stream itself is not masked: it is only read
through those masked activations).

One net evaluates every board side 2..10 (its weights have no grid-dependent tensor), and
mixes of sides in one batch, as KataGo trains one net on many board sizes: a padded batch
places every position's (2n-1) x (2n-1) planes at the top-left of one G x G grid, masks each
layer with each position's own board, divides its pooled means by its own cell count and
keeps padding cells out of the batch-norm statistics (see `layout.py`). Board-size features
reach the net through the global inputs (`catena_zero.rules.observe`).

Normalisation: masked batch norm (statistics over on-board cells only) by
default. It lets the tower train at a high learning rate from scratch without
careful init, and at inference it is a fixed per-channel affine map; "none"
(conv biases, zero-initialised last conv per block so every block starts as the
identity) is there for tiny nets and for comparison.

Example::

    import torch
    from catena_zero.network import NetworkConfig, PolicyValueNet
    from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, get_board

    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, NetworkConfig(blocks=4, channels=32))
    out = net(torch.zeros(8, NUM_PLANES, 7, 7), torch.zeros(8, NUM_GLOBALS))
    out.policy_logits.shape   # [8, 38]  (side 4: 37 cells + button)
    out.value                 # [8] win - loss probability, side to move's view

    # A padded mixed batch: sides [B], planes at the top-left of a 19 x 19 grid.
    out = net(pad_planes(planes, 19), globals_, sides=torch.tensor([4, 10, 6]))
    out.policy_logits.shape   # [3, 362] grid layout (19 * 19 cells, then the button)
    rows, side4 = out.take_side(4)   # side4.policy_logits [1, 38], side4.ownership [1, 37]

    # A net built for one side (the older signature) is the same net with a home side:
    board = get_board(4)
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index, config)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from catena_zero.network.config import NetworkConfig
from catena_zero.network.layout import (
    MAX_SIDE,
    MIN_SIDE,
    HexLayouts,
    padded_action_index,
    side_of_grid,
)

WIN, DRAW, LOSS = 0, 1, 2  # order of the value logits
# Policy logit of the padding cells of a padded batch: finite (0 * it stays 0) and far below
# any real logit, so even a softmax over the whole grid row gives them nothing.
OFF_BOARD_LOGIT = -1e9


@dataclass
class NetOutput:
    """Network heads, batch first. Tensors from `forward`, numpy from the inference wrapper.

    For a one-side batch C and A are that board's cells and actions. For a padded batch
    (`sides` set) the cells are the G * G grid positions: policy_logits [B, G*G + 1] (off-board
    logits OFF_BOARD_LOGIT, the button last), ownership [B, G*G] (0 off the board); `take_side`
    and `split_by_side` read each board's own cells out of it.
    """

    policy_logits: Any  # [B, A] cells then the button (A = C + 1)
    value_logits: Any  # [B, 3] win / draw / loss of the side to move
    score: Any  # [B] expected final margin in points, side to move's view
    ownership: Any  # [B, C] in [-1, 1]: +1 the side to move owns the cell at the end
    ownership_logit: Any = None  # [B, C] pre-tanh ownership (for the loss); None from inference
    score_belief_logits: Any = None  # [B, K] final-margin bins (for the loss); None if no head
    sides: Any = None  # int [B] board side of each row of a padded batch; None for one side

    @property
    def value(self) -> Any:
        """Expected outcome p(win) - p(loss) in [-1, 1]. # [B]"""
        return wdl_to_value(self.value_logits)

    @property
    def grid_size(self) -> int | None:
        """G of a padded output (None for a one-side output)."""
        if self.sides is None:
            return None
        return int(round((self.ownership.shape[1]) ** 0.5))

    def take_side(self, side: int) -> tuple[Any, NetOutput]:
        """(rows [b], outputs of those rows in the side-n layout: policy [b, A_n], ownership
        [b, C_n]) for the rows of a padded output whose board has side `side`."""
        if self.sides is None:
            raise ValueError("take_side needs a padded output (forward with sides=...)")
        if isinstance(self.sides, torch.Tensor):
            rows = torch.nonzero(self.sides == side).flatten()
        else:
            rows = np.flatnonzero(np.asarray(self.sides) == side)
        return rows, self.rows_on_side(rows, side)

    def rows_on_side(self, rows: Any, side: int) -> NetOutput:
        """Rows `rows` of a padded output, all of side `side`, in that side's layout."""
        grid = self.grid_size
        actions = padded_action_index(side, grid)
        cells = actions[:-1]
        def as_index(index: Any) -> Any:
            if isinstance(self.ownership, torch.Tensor):
                return torch.as_tensor(index, device=self.ownership.device)
            return index

        def pick(values: Any, columns: np.ndarray | None = None) -> Any:
            if values is None:
                return None
            picked = values[as_index(rows)]
            return picked if columns is None else picked[:, as_index(columns)]

        return NetOutput(
            policy_logits=pick(self.policy_logits, actions),
            value_logits=pick(self.value_logits),
            score=pick(self.score),
            ownership=pick(self.ownership, cells),
            ownership_logit=pick(self.ownership_logit, cells),
            score_belief_logits=pick(self.score_belief_logits),
        )

    def split_by_side(self) -> dict[int, tuple[Any, NetOutput]]:
        """{side: (rows, that side's rows in its own layout)} for each side of a padded output."""
        if self.sides is None:
            raise ValueError("split_by_side needs a padded output (forward with sides=...)")
        values = self.sides.cpu().numpy() if isinstance(self.sides, torch.Tensor) else self.sides
        return {int(side): self.take_side(int(side)) for side in np.unique(np.asarray(values))}


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
    `forward(x [B, C, H, W], mask, cell_count)`: either one board for the whole batch (mask
    [1, 1, H, W], cell_count an int) or a padded batch (mask [B, 1, H, W], cell_count float
    [B, 1]); training statistics are over all on-board cells of the batch, never padding.
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

    def forward(self, x: torch.Tensor, mask: torch.Tensor,
                cell_count: int | torch.Tensor) -> torch.Tensor:
        if not self.enabled:
            return torch.relu(x) * mask
        per_position = mask.shape[0] != 1 or isinstance(cell_count, torch.Tensor)
        if self.training:
            # Masked sums as mat-vec products (no masked copy of x is materialised), in
            # float32 even under autocast: E[x^2] - E[x]^2 would cancel badly in bfloat16.
            with torch.autocast(device_type=x.device.type, enabled=False):
                flat = x.float().flatten(2)  # [B, C, H * W]
                if per_position:
                    flat_mask = mask.reshape(mask.shape[0], -1, 1).float()  # [B, H * W, 1]
                    count = flat_mask.sum()  # on-board cells of the whole batch
                    mean = torch.bmm(flat, flat_mask).sum(dim=0).squeeze(1) / count
                    mean_square = torch.bmm(flat.square(), flat_mask).sum(dim=0).squeeze(1)
                    mean_square = mean_square / count
                    correction = count / (count - 1).clamp_min(1.0)
                else:
                    count = x.shape[0] * cell_count
                    flat_mask = mask.reshape(-1).float()  # [H * W]
                    mean = (flat @ flat_mask).sum(dim=0) / count
                    mean_square = (flat.square() @ flat_mask).sum(dim=0) / count
                    correction = count / max(count - 1, 1)
                variance = (mean_square - mean.square()).clamp_min(0.0)
            with torch.no_grad():
                unbiased = variance * correction
                self.running_mean.lerp_(mean.detach().float(), self.momentum)
                self.running_var.lerp_(unbiased.detach().float(), self.momentum)
        elif torch.is_inference_mode_enabled():
            # Self-play hot path: the cached affine with the mask folded in, one fused op,
            # then ReLU in place (no autograd). A padded batch has a mask per position, so
            # it is applied after the affine instead.
            layout = (torch.channels_last if x.is_contiguous(memory_format=torch.channels_last)
                      else torch.contiguous_format)
            if per_position:
                scale, shift = self._eval_affine(None, x.dtype, layout)
                return torch.addcmul(shift, x, scale).relu_().mul_(mask.to(x.dtype))
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

    def _eval_affine(self, mask: torch.Tensor | None, dtype: torch.dtype,
                     memory_format: torch.memory_format) -> tuple[torch.Tensor, torch.Tensor]:
        """(scale, shift) [1, C, H, W] in `dtype` and `memory_format` from the running
        statistics, cached, with the 0/1 on-board `mask` [1, 1, H, W] folded in:
        relu(a x + b) m = relu(a m x + b m); [1, C, 1, 1] without a mask (`mask=None`).

        Computed in float32 and cast once. Only used under inference_mode (the cached tensors
        are inference tensors). One entry per board grid (a net may serve several sides);
        each is keyed on the tensors' version counters, so any in-place change (an optimiser
        step, load_state_dict, .to()) recomputes it.
        """
        tensors = (self.weight, self.bias, self.running_mean, self.running_var)
        version = tuple((t._version, t.data_ptr(), t.device, t.dtype) for t in tensors)
        # The mask is one of the owning net's constant board masks (a fresh cast of it per
        # call in reduced precision), so its shape and device identify it.
        slot = (None if mask is None else (tuple(mask.shape), mask.device), dtype,
                memory_format)
        cache = self.__dict__.setdefault("_affine_cache", {})
        cached = cache.get(slot)
        if cached is None or cached[0] != version:
            with torch.no_grad():
                scale = self.weight.float() * torch.rsqrt(self.running_var.float() + self.eps)
                shift = self.bias.float() - self.running_mean.float() * scale
                scale, shift = scale.view(1, -1, 1, 1), shift.view(1, -1, 1, 1)
                if mask is not None:
                    on_board = mask.float()
                    scale, shift = scale * on_board, shift * on_board
                # In the activations' layout, so the fused op runs on one layout.
                scale, shift = scale.to(dtype), shift.to(dtype)
            if len(cache) >= 16:  # at most a few grids and dtypes are ever in use
                cache.clear()
            cached = (version, scale.contiguous(memory_format=memory_format),
                      shift.contiguous(memory_format=memory_format))
            cache[slot] = cached
        return cached[1], cached[2]


def dense(layer: nn.Linear, x: torch.Tensor, out_dtype: torch.dtype | None = None
          ) -> torch.Tensor:
    """`layer(x)` in the layer's own dtype (a reduced-precision copy keeps its small linear
    layers in float32, where they run faster than in bfloat16), cast to `out_dtype`."""
    output = layer(x.to(layer.weight.dtype))
    return output if out_dtype is None else output.to(out_dtype)


def masked_global_pool(x: torch.Tensor, mask: torch.Tensor,
                       cell_count: int | torch.Tensor) -> torch.Tensor:
    """[B, C, H, W] (zero off-board, >= 0 after ReLU) -> [B, 2C]: on-board mean and max.

    `cell_count`: the board's cells (int), or each position's own (float [B, 1]) in a padded
    batch, so a small board's mean is not diluted by its padding."""
    mean = x.sum(dim=(2, 3)) / cell_count
    if isinstance(cell_count, torch.Tensor):
        mean = mean.to(x.dtype)
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

    def forward(self, x: torch.Tensor, mask: torch.Tensor,
                cell_count: int | torch.Tensor) -> torch.Tensor:
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
    """Residual hex conv net for every board side; see the module docstring.

    `PolicyValueNet(num_planes, num_globals, config)` builds a net for any side. The older
    form `PolicyValueNet(num_planes, num_globals, grid_size, cell_grid_index, config)` builds
    the same net with a home board: batches on that grid read its `cell_grid_index` exactly
    as before, and its `init_args` (in checkpoints and model files) keep that form; it
    evaluates other sides too.

    Args:
        num_planes: input planes P (the first P of the observation; later ones are ignored).
        num_globals: global inputs G (the first G of the observation; later ones are ignored).
        grid_size: H = W = 2n - 1 of the home board, or None (the config may be given here).
        cell_grid_index: int [C] of the home board, cell i at flat grid position row * H + col.
        config: NetworkConfig.
    """

    def __init__(
        self,
        num_planes: int,
        num_globals: int,
        grid_size: int | NetworkConfig | None = None,
        cell_grid_index: Any = None,
        config: NetworkConfig | None = None,
    ):
        super().__init__()
        if isinstance(grid_size, NetworkConfig):
            if config is not None or cell_grid_index is not None:
                raise ValueError("PolicyValueNet(num_planes, num_globals, config) takes no "
                                 "cell_grid_index and no second config")
            grid_size, config = None, grid_size
        config = config if config is not None else NetworkConfig()
        config.validate()
        if num_planes < 1 or num_globals < 0 or (grid_size is not None and grid_size < 1):
            raise ValueError(
                f"bad network shape: num_planes={num_planes}, num_globals={num_globals},"
                f" grid_size={grid_size}"
            )
        if (grid_size is None) != (cell_grid_index is None):
            raise ValueError("a home board needs both grid_size and cell_grid_index "
                             f"(got grid_size={grid_size!r})")
        self.config = config
        self.num_planes = num_planes
        self.num_globals = num_globals
        self.grid_size = grid_size  # H of the home board; None for a net without one
        self.num_cells = None  # C and A of the home board
        self.num_actions = None
        self.layouts = HexLayouts()
        if grid_size is not None:
            self._register_home_board(grid_size, cell_grid_index)
        normalise = config.normalisation == "batch"
        channels = config.channels

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

    def _register_home_board(self, grid_size: int, cell_grid_index: Any) -> None:
        cell_index = np.asarray(cell_grid_index, dtype=np.int64).reshape(-1)
        if cell_index.size == 0 or cell_index.min() < 0 or cell_index.max() >= grid_size**2:
            raise ValueError(f"cell_grid_index must lie in [0, {grid_size**2}), got {cell_index}")
        if np.unique(cell_index).size != cell_index.size:
            raise ValueError("cell_grid_index has repeated grid positions")
        self.num_cells = int(cell_index.size)
        self.num_actions = self.num_cells + 1
        board_mask = torch.zeros(grid_size * grid_size)
        board_mask[torch.from_numpy(cell_index)] = 1.0
        self.register_buffer(
            "cell_grid_index", torch.from_numpy(cell_index.copy()), persistent=False
        )
        self.register_buffer(
            "board_mask", board_mask.view(1, 1, grid_size, grid_size), persistent=False
        )

    @property
    def side(self) -> int | None:
        """Side n of the home board (None for a net built without one)."""
        return None if self.grid_size is None else side_of_grid(self.grid_size)

    @property
    def init_args(self) -> dict[str, Any]:
        """Plain-data constructor arguments: `PolicyValueNet.from_init_args(net.init_args)`."""
        args: dict[str, Any] = {"num_planes": self.num_planes, "num_globals": self.num_globals}
        if self.grid_size is not None:
            args["grid_size"] = self.grid_size
            args["cell_grid_index"] = self.cell_grid_index.cpu().tolist()
        args["config"] = self.config.to_dict()
        return args

    @classmethod
    def from_init_args(cls, args: dict[str, Any]) -> PolicyValueNet:
        """Rebuild from `init_args`: those of a net with a home board (as every checkpoint and
        model file written before the size-general net holds) or without one."""
        return cls(
            args["num_planes"],
            args["num_globals"],
            args.get("grid_size"),
            args.get("cell_grid_index"),
            NetworkConfig.from_dict(dict(args["config"])),
        )

    def num_cells_for(self, grid_size: int) -> int:
        """C of the outputs of a one-side batch on an H x H grid."""
        if grid_size == self.grid_size:
            return int(self.num_cells)
        side = side_of_grid(grid_size)
        if side is None:
            raise ValueError(f"no board side has a {grid_size}x{grid_size} grid")
        return 3 * side * (side - 1) + 1

    def _check_inputs(self, planes: torch.Tensor, globals_: torch.Tensor) -> None:
        if (planes.dim() != 4 or planes.shape[1] < self.num_planes
                or planes.shape[2] != planes.shape[3]):
            raise ValueError(f"planes must be [B, P >= {self.num_planes}, H, H], "
                             f"got {tuple(planes.shape)}")
        if (globals_.dim() != 2 or globals_.shape[0] != planes.shape[0]
                or globals_.shape[1] < self.num_globals):
            raise ValueError(
                f"globals must be [{planes.shape[0]}, G >= {self.num_globals}],"
                f" got {tuple(globals_.shape)}"
            )

    def _one_board(self, size: int) -> tuple[torch.Tensor, int, torch.Tensor]:
        """(mask [1, 1, H, H], cell count, cell index [C]) of the board filling an H-grid."""
        if size == self.grid_size:
            return self.board_mask, self.num_cells, self.cell_grid_index
        side = side_of_grid(size)
        if side is None:
            sizes = ", ".join(str(2 * n - 1) for n in range(MIN_SIDE, MAX_SIDE + 1))
            raise ValueError(f"planes must be [B, P >= {self.num_planes}, H, H] with H = 2n - 1"
                             f" of a board side n (H in {sizes}), got a {size}x{size} grid")
        index = self.layouts.cell_index(side)
        return self.layouts.mask(side), int(index.shape[0]), index

    def _padded_boards(self, sides: Any, size: int) -> tuple[torch.Tensor, torch.Tensor,
                                                               torch.Tensor]:
        """(sides int64 [B] on the CPU, masks [B, 1, G, G], cell counts [B, 1]) of a padded
        batch on a G-grid."""
        sides = torch.as_tensor(sides).to("cpu", torch.int64).reshape(-1)
        if sides.numel():
            low, high = int(sides.min()), int(sides.max())
            if low < MIN_SIDE or high > MAX_SIDE or 2 * high - 1 > size:
                raise ValueError(f"sides must lie in {MIN_SIDE}..{MAX_SIDE} and fit the "
                                 f"{size}x{size} grid (2n - 1 <= {size}), got {low}..{high}")
        masks, counts = self.layouts.padded(sides, size)
        return sides, masks, counts

    def forward_tuple(
        self, planes: torch.Tensor, globals_: torch.Tensor, sides: Any = None
    ) -> tuple[torch.Tensor, ...]:
        """(policy_logits [B, A], value_logits [B, 3], score [B], ownership [B, C],
        ownership_logit [B, C], score_belief_logits [B, K] or None) from planes [B, P, H, W]
        and globals [B, G]: one board side (the one whose grid H is) when `sides` is None,
        else a padded batch of the boards `sides` [B] in grid layout (C = H * W, see
        NetOutput)."""
        self._check_inputs(planes, globals_)
        if sides is not None and len(sides) != planes.shape[0]:
            raise ValueError(f"sides must give one side per position: {len(sides)} for "
                             f"{planes.shape[0]} positions")
        # Inputs are append-only: a net trained on an older, shorter observation reads its
        # first num_planes planes and num_globals globals and ignores the ones added since.
        planes = planes[:, : self.num_planes]
        globals_ = globals_[:, : self.num_globals]
        size = planes.shape[2]
        if sides is None:
            board_mask, cells, cell_index = self._one_board(size)
        else:
            _, board_mask, cells = self._padded_boards(sides, size)
            cell_index = None
        mask = board_mask.to(planes.dtype)
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
        button_logit = dense(self.button_linear, policy_pooled)
        value_features = self.value_norm(self.value_conv(x), mask, cells)
        hidden = torch.relu(dense(self.value_hidden,
                                  masked_global_pool(value_features, mask, cells)))
        value_logits = self.value_out(hidden)
        score = self.score_out(hidden).squeeze(1) * self.config.score_scale
        ownership_logit = self.ownership_out(value_features).reshape(batch, -1)
        if cell_index is not None:
            cell_logits = policy.reshape(batch, -1)[:, cell_index]
            ownership_logit = ownership_logit[:, cell_index]
        else:
            # Grid layout: every grid position, padding held at fixed values.
            on_board = board_mask.reshape(batch, -1) > 0
            cell_logits = policy.reshape(batch, -1).float().masked_fill(~on_board,
                                                                        OFF_BOARD_LOGIT)
            ownership_logit = ownership_logit.masked_fill(~on_board, 0.0)
        policy_logits = torch.cat([cell_logits.to(button_logit.dtype), button_logit], dim=1)
        score_belief_logits = (None if self.score_belief_out is None
                               else self.score_belief_out(hidden))
        return (policy_logits, value_logits, score, torch.tanh(ownership_logit), ownership_logit,
                score_belief_logits)

    def forward(self, planes: torch.Tensor, globals_: torch.Tensor,
                sides: Any = None) -> NetOutput:
        """planes [B, P, H, W] float, globals [B, G] float -> NetOutput (see its fields).

        `sides` None: every position is of the board side whose grid is H x H (the home board
        of a net built for one, read through its own cell index); outputs [B, A_n], [B, C_n].
        `sides` int [B]: a padded batch, position b's board (side sides[b]) at the top-left of
        the H x H grid; outputs in grid layout with `NetOutput.sides` set.
        """
        output = NetOutput(*self.forward_tuple(planes, globals_, sides))
        if sides is not None:
            output.sides = torch.as_tensor(sides).to("cpu", torch.int64).reshape(-1)
        return output

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
