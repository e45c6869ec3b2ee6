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
    from catena_zero.network import NetworkConfig, PolicyValueNet, pad_planes
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

from typing import Any

import numpy as np
import torch
from torch import nn

from catena_zero.network.config import NetworkConfig
from catena_zero.network.layers import (
    HexConv2d,
    MaskedNormAct,
    ResidualBlock,
    dense,
    hex_kernel_mask,
    masked_global_pool,
)
from catena_zero.network.layout import (
    MAX_SIDE,
    MIN_SIDE,
    HexLayouts,
    num_cells_of_side,
    side_of_grid,
)
from catena_zero.network.output import DRAW, LOSS, OFF_BOARD_LOGIT, WIN, NetOutput, wdl_to_value

# Re-exported: older code imports these from here.
__all__ = [
    "DRAW", "LOSS", "OFF_BOARD_LOGIT", "WIN", "HexConv2d", "MaskedNormAct", "NetOutput",
    "PolicyValueNet", "ResidualBlock", "count_parameters", "dense", "hex_kernel_mask",
    "masked_global_pool", "wdl_to_value",
]


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
        return num_cells_of_side(side)

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
        return self._forward_buckets([self._bucket(planes, globals_, sides)])[0]

    def forward_buckets(self, buckets: list[tuple[torch.Tensor, torch.Tensor, Any]]
                        ) -> list[NetOutput]:
        """`forward` of the buckets (planes [B_k, P, H_k, H_k], globals [B_k, G], sides
        [B_k] or None) of one batch, each on its own grid, as one batch: in training, batch
        norm takes its statistics over all of them, so the outputs are those of one padded
        batch of them on the largest grid, at each bucket's own cost (a side-6 sample on
        11 x 11 instead of 19 x 19 when the batch also holds side-10 samples)."""
        if not buckets:
            raise ValueError("forward_buckets needs at least one bucket")
        prepared = [self._bucket(planes, globals_, sides) for planes, globals_, sides in buckets]
        outputs = []
        for values, (_, _, sides) in zip(self._forward_buckets(prepared), buckets, strict=True):
            output = NetOutput(*values)
            if sides is not None:
                output.sides = torch.as_tensor(sides).to("cpu", torch.int64).reshape(-1)
            outputs.append(output)
        return outputs

    def _bucket(self, planes: torch.Tensor, globals_: torch.Tensor, sides: Any
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Any, Any]:
        """(planes, globals, mask [1 or B, 1, H, H], cell counts, cell index or None) of one
        batch, checked, its inputs cut to the planes and globals this net reads."""
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
        return planes, globals_, board_mask, cells, cell_index

    def _forward_buckets(self, buckets: list[tuple]) -> list[tuple[torch.Tensor, ...]]:
        """The forward of `_bucket`s, batch norm over all of them (`MaskedNormAct.many`)."""
        masks = [board_mask.to(planes.dtype) for planes, _, board_mask, _, _ in buckets]
        cells = [bucket[3] for bucket in buckets]
        xs = []
        for (planes, globals_, _, _, _), mask in zip(buckets, masks, strict=True):
            x = self.stem(planes * mask)
            if self.global_linear is not None:
                x = x + dense(self.global_linear, globals_, x.dtype)[:, :, None, None]
            xs.append(x)
        for block in self.blocks:
            xs = block.many(xs, masks, cells)
        xs = self.trunk_norm.many(xs, masks, cells)
        pooled_sources = self.policy_pool_norm.many([self.policy_pool_conv(x) for x in xs],
                                                    masks, cells)
        policies = []
        policy_pools = []
        for x, source, mask, count in zip(xs, pooled_sources, masks, cells, strict=True):
            policy_pooled = masked_global_pool(source, mask, count)
            policy = self.policy_conv(x)
            policies.append(policy + dense(self.policy_pool_linear, policy_pooled,
                                           policy.dtype)[:, :, None, None])
            policy_pools.append(policy_pooled)
        policies = [self.policy_out(policy)
                    for policy in self.policy_norm.many(policies, masks, cells)]
        value_features = self.value_norm.many([self.value_conv(x) for x in xs], masks, cells)
        return [self._outputs(policy, policy_pooled, features, mask, count, board_mask,
                              cell_index)
                for policy, policy_pooled, features, mask, count, (_, _, board_mask, _,
                                                                   cell_index)
                in zip(policies, policy_pools, value_features, masks, cells, buckets,
                       strict=True)]

    def _outputs(self, policy: torch.Tensor, policy_pooled: torch.Tensor,
                 value_features: torch.Tensor, mask: torch.Tensor, cells: Any,
                 board_mask: torch.Tensor, cell_index: Any) -> tuple[torch.Tensor, ...]:
        """The heads' outputs of one bucket from its policy map [B, 1, H, W], pooled policy
        features [B, 2c] and value features [B, c, H, W]."""
        batch = policy.shape[0]
        button_logit = dense(self.button_linear, policy_pooled)
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
