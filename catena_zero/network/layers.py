"""The layers of the policy-value net: hex convolutions, masked batch norm, global pooling and
the residual block (see `model.py` for the tower they make).

Every layer takes the on-board `mask` and the board's cell count: one board for a whole
batch (mask [1, 1, H, W], an int count) or a padded batch of several boards (mask
[B, 1, H, W], float counts [B, 1]), so nothing off a position's own board reaches a
statistic, a pooled mean or a result.
"""

from __future__ import annotations

import torch
from torch import nn


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
        if self.training:
            return self.many([x], [mask], [cell_count])[0]
        if torch.is_inference_mode_enabled():
            # Self-play hot path: the cached affine with the mask folded in, one fused op,
            # then ReLU in place (no autograd). A padded batch has a mask per position, so
            # it is applied after the affine instead.
            layout = (torch.channels_last if x.is_contiguous(memory_format=torch.channels_last)
                      else torch.contiguous_format)
            if _per_position(mask, cell_count):
                scale, shift = self._eval_affine(None, x.dtype, layout)
                return torch.addcmul(shift, x, scale).relu_().mul_(mask.to(x.dtype))
            scale, shift = self._eval_affine(mask, x.dtype, layout)
            return torch.addcmul(shift, x, scale).relu_()
        return self._normalise(x, mask, self.running_mean, self.running_var)

    def many(self, xs: list[torch.Tensor], masks: list[torch.Tensor],
             cell_counts: list[int | torch.Tensor]) -> list[torch.Tensor]:
        """`forward` of buckets of one batch, each on its own grid (x [B_k, C, H_k, W_k]),
        with training statistics over the on-board cells of all of them together: the
        buckets normalise exactly as one padded batch of them would."""
        if not self.enabled or not self.training:
            return [self(x, mask, count) for x, mask, count in zip(xs, masks, cell_counts,
                                                                    strict=True)]
        # Masked sums as mat-vec products (no masked copy of x is materialised), in float32
        # even under autocast: E[x^2] - E[x]^2 would cancel badly in bfloat16.
        with torch.autocast(device_type=xs[0].device.type, enabled=False):
            sums = [_masked_sums(x, mask, count)
                    for x, mask, count in zip(xs, masks, cell_counts, strict=True)]
            count = sum(part[2] for part in sums)
            mean = sum(part[0] for part in sums) / count
            mean_square = sum(part[1] for part in sums) / count
            variance = (mean_square - mean.square()).clamp_min(0.0)
        with torch.no_grad():
            correction = count / max(count - 1, 1) if not isinstance(count, torch.Tensor) \
                else count / (count - 1).clamp_min(1.0)
            self.running_mean.lerp_(mean.detach().float(), self.momentum)
            self.running_var.lerp_((variance * correction).detach().float(), self.momentum)
        return [self._normalise(x, mask, mean, variance) for x, mask in zip(xs, masks,
                                                                           strict=True)]

    def _normalise(self, x: torch.Tensor, mask: torch.Tensor, mean: torch.Tensor,
                   variance: torch.Tensor) -> torch.Tensor:
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


def _per_position(mask: torch.Tensor, cell_count: int | torch.Tensor) -> bool:
    """True for a padded batch (a mask and a cell count per position)."""
    return mask.shape[0] != 1 or isinstance(cell_count, torch.Tensor)


def _masked_sums(x: torch.Tensor, mask: torch.Tensor, cell_count: int | torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor, int | torch.Tensor]:
    """(sum [C], sum of squares [C], on-board cells) of x [B, C, H, W] over its on-board
    cells, in float32: one board's mask [1, 1, H, W] and int count, or a padded batch's
    masks [B, 1, H, W]."""
    flat = x.float().flatten(2)  # [B, C, H * W]
    if _per_position(mask, cell_count):
        flat_mask = mask.reshape(mask.shape[0], -1, 1).float()  # [B, H * W, 1]
        total = torch.bmm(flat, flat_mask).sum(dim=0).squeeze(1)
        square = torch.bmm(flat.square(), flat_mask).sum(dim=0).squeeze(1)
        return total, square, flat_mask.sum()
    flat_mask = mask.reshape(-1).float()  # [H * W]
    return ((flat @ flat_mask).sum(dim=0), (flat.square() @ flat_mask).sum(dim=0),
            x.shape[0] * cell_count)


def dense(layer: nn.Linear, x: torch.Tensor, out_dtype: torch.dtype | None = None
          ) -> torch.Tensor:
    """`layer(x)` in the layer's own dtype (a reduced-precision copy keeps its small linear
    layers in float32, where they run faster than in bfloat16), cast to `out_dtype`. A
    dynamically quantised layer (its weight a method) takes float32."""
    weight = layer.weight
    output = layer(x.to(weight.dtype if isinstance(weight, torch.Tensor) else torch.float32))
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
        return self.many([x], [mask], [cell_count])[0]

    def many(self, xs: list[torch.Tensor], masks: list[torch.Tensor],
             cell_counts: list[int | torch.Tensor]) -> list[torch.Tensor]:
        """`forward` of buckets of one batch, each on its own grid, normalised together
        (`MaskedNormAct.many`)."""
        hidden = [self.conv1(h) for h in self.norm1.many(xs, masks, cell_counts)]
        if self.pool_channels:
            split = hidden[0].shape[1] - self.pool_channels
            pooled = self.pool_norm.many([h[:, split:] for h in hidden], masks, cell_counts)
            hidden = [h[:, :split] + dense(self.pool_linear, masked_global_pool(p, m, c),
                                           h.dtype)[:, :, None, None]
                      for h, p, m, c in zip(hidden, pooled, masks, cell_counts, strict=True)]
        hidden = [self.conv2(h) for h in self.norm2.many(hidden, masks, cell_counts)]
        # Off-board values of the residual stream are never read: every conv input comes
        # from a MaskedNormAct (which masks) and every pooling reads masked features.
        if torch.is_inference_mode_enabled():
            return [x.add_(h) for x, h in zip(xs, hidden, strict=True)]
        return [x + h for x, h in zip(xs, hidden, strict=True)]
