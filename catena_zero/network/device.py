"""Device selection and a numpy-in / numpy-out inference wrapper.

On CUDA the wrapper runs under autocast (bfloat16 where the GPU supports it,
else float16). On the CPU it uses channels-last activations and conv weights (oneDNN's
small convolutions ran 1.15-1.5x faster that way on the 7x7 and 11x11 grids, see
`python -m benchmarks.bench_network --compare-layouts`), and, where the CPU has bfloat16
instructions (Intel AMX tiles, or the AVX512-BF16 dot products of AMD Zen 4 and later Intel
cores), a copy of the net with bfloat16 convolutions: oneDNN runs those 1.5-5x faster than
float32 ones (`--compare-precisions`). The copy is kept in step with the net
by its tensors' version counters, so an optimiser step or `load_state_dict` on the net is
seen at the next call. `precision="float32"` turns reduced precision off on any device.
Outputs are always float32 numpy.

Example::

    from catena_zero.network import InferenceModel, resolve_device

    device = resolve_device("auto")            # cuda when present, else cpu
    model = InferenceModel(net, device)        # puts net in eval mode on device
    exact = InferenceModel(net, device, precision="float32")
    out = model(planes, globals_)              # numpy [B, P, H, W] (uint8/float), [B, G]
    out.policy_logits, out.value, out.score, out.ownership   # numpy float32
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn

from catena_zero.network.model import NetOutput


def resolve_device(name: str | torch.device = "auto") -> torch.device:
    """"auto" -> cuda if available, then mps, else cpu; otherwise `torch.device(name)`.

    Raises ValueError for an unknown name or a device that is not available here.
    """
    if isinstance(name, torch.device):
        name = str(name)
    if not isinstance(name, str):
        raise ValueError(f"device must be a string such as 'auto', 'cpu' or 'cuda', got {name!r}")
    lowered = name.strip().lower()
    if lowered == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(lowered)
    except RuntimeError as error:
        raise ValueError(f"unknown device {name!r}: {error}") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {name!r} requested but CUDA is not available")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ValueError(
                f"device {name!r}: only {torch.cuda.device_count()} CUDA device(s) present"
            )
    elif device.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ValueError(f"device {name!r} requested but MPS is not available")
    elif device.type != "cpu":
        raise ValueError(f"unsupported device {name!r} (use auto, cpu, cuda, cuda:N or mps)")
    return device


INFERENCE_PRECISIONS = ("auto", "float32", "bfloat16")
# Below this many positions per call the bfloat16 copy's fixed costs (casts, the version
# check) outweigh its faster convolutions (4x32 net on side 4: 0.5x float32's speed at
# batch 1, 0.9x at 8, 1.1x at 16; 6x64 on side 6: 0.75x at 1, 1.6x at 8), so small
# batches, as in one-game play, run the float32 net.
REDUCED_PRECISION_MIN_BATCH = 8


def cpu_has_fast_bfloat16() -> bool:
    """True where this CPU runs bfloat16 convolutions natively: Intel AMX tiles or AVX512-BF16.

    oneDNN runs this project's small bfloat16 convolutions on AMX about 5x faster than
    float32, and with AVX512-BF16's dot products (AMD Zen 4, Intel Cooper Lake) 1.5-2x
    faster at self-play batches. Elsewhere bfloat16 is emulated and no faster than float32,
    so `precision="auto"` keeps float32 there.
    """
    for name in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        check = getattr(torch.cpu, name, None)
        try:
            if check is not None and check():
                return True
        except RuntimeError:
            continue
    return False


def autocast_dtype(device: torch.device) -> torch.dtype | None:
    """Reduced precision used for CUDA inference and training on `device`, or None."""
    if device.type != "cuda":
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def inference_dtype(device: torch.device, precision: str = "auto") -> torch.dtype | None:
    """The reduced precision `InferenceModel` uses on `device`, or None for float32.

    "auto": CUDA's autocast type; bfloat16 on a CPU with AMX or AVX512-BF16; float32
    otherwise. "bfloat16" forces it anywhere (slow on CPUs without either); "float32" turns
    it off.
    """
    if precision not in INFERENCE_PRECISIONS:
        raise ValueError(f"precision must be one of {INFERENCE_PRECISIONS}, got {precision!r}")
    if precision == "float32":
        return None
    if precision == "bfloat16":
        return torch.bfloat16
    if device.type == "cuda":
        return autocast_dtype(device)
    if device.type == "cpu" and cpu_has_fast_bfloat16():
        return torch.bfloat16
    return None


def reduced_precision_copy(net: nn.Module, dtype: torch.dtype,
                           memory_format: torch.memory_format) -> nn.Module:
    """An eval-mode copy of `net` whose convolutions hold `dtype` weights.

    Normalisation layers keep float32 statistics: they fold into a per-channel affine map
    computed in float32 and cast once, which is more exact than bfloat16 running moments.
    The small linear layers (global biases and the value head) stay float32 too: bfloat16
    makes them slower, not faster, and the value and score come out at full precision.
    """
    mirror = copy.deepcopy(net)
    for module in mirror.modules():
        if isinstance(module, nn.Conv2d):
            module.to(dtype)
    mirror.to(memory_format=memory_format)
    mirror.eval()
    return mirror


def _version_key(tensors: list[torch.Tensor]) -> tuple:
    """Changes whenever one of `tensors` is modified in place or given new storage."""
    return tuple((tensor._version, tensor.data_ptr()) for tensor in tensors)


def _to_tensor(array, device: torch.device,
               memory_format: torch.memory_format = torch.preserve_format,
               dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """`array` on `device` as `dtype` in `memory_format`, converted in one copy."""
    if isinstance(array, torch.Tensor):
        tensor = array
    else:
        tensor = torch.from_numpy(np.ascontiguousarray(array))
    if device.type == "cuda" and tensor.device.type == "cpu":
        # Copy the compact (e.g. uint8) array and convert on the GPU: less to transfer.
        tensor = tensor.pin_memory().to(device, non_blocking=True)
    else:
        tensor = tensor.to(device)
    return tensor.to(dtype, memory_format=memory_format)


class InferenceModel:
    """Evaluates a PolicyValueNet (or any module returning NetOutput): eval mode,
    inference_mode, numpy in and out.

    `__call__(planes [B, P, H, W], globals [B, G], sides=None) -> NetOutput` of float32 numpy
    arrays (`ownership_logit` is None), for any board side, or a padded batch of several
    (`sides` int [B], outputs in grid layout: `NetOutput.take_side` reads each board's).
    The wrapped net is moved to `device` and put in eval mode; call `refresh()` after
    changing its weights elsewhere if it was moved off `device`.
    `precision` ("auto", "float32" or "bfloat16", see `inference_dtype`) chooses reduced
    precision: autocast on CUDA, a synchronised bfloat16 copy of the net on the CPU for
    calls of at least `REDUCED_PRECISION_MIN_BATCH` positions.
    """

    def __init__(self, net: nn.Module, device: str | torch.device = "auto",
                 channels_last: bool | None = None, precision: str = "auto"):
        self.device = resolve_device(device)
        self.net = net
        self.dtype = inference_dtype(self.device, precision)
        # On the CPU autocast would convert every weight on every call, which costs more
        # than it saves for small convolutions: a converted copy is kept instead.
        self.use_copy = self.dtype is not None and self.device.type != "cuda"
        if channels_last is None:
            channels_last = self.device.type == "cpu"
        self.memory_format = torch.channels_last if channels_last else torch.contiguous_format
        self._copy: nn.Module | None = None
        self._copy_key: tuple | None = None
        self._watched: list[torch.Tensor] = []
        self.refresh()

    def refresh(self) -> None:
        # Converting the weights once here spares oneDNN a reorder on every call; training
        # speed on the CPU does not depend on the layout, so a shared net may keep it.
        self.net.to(self.device, memory_format=self.memory_format)
        self.net.eval()
        self._copy_key = None
        # Listed once: walking the module tree on every call costs more than the check.
        # Parameters keep their objects through .to() and load_state_dict; buffers are
        # replaced by .to(), after which a refresh() is needed anyway.
        self._watched = [*self.net.parameters(), *self.net.buffers()]

    def _reduced_copy(self) -> nn.Module:
        """The reduced-precision copy of the net, brought up to date with its weights."""
        key = _version_key(self._watched)
        if self._copy is None:
            self._copy = reduced_precision_copy(self.net, self.dtype, self.memory_format)
        elif key != self._copy_key:
            with torch.no_grad():
                self._copy.load_state_dict(self.net.state_dict())
        self._copy_key = key
        return self._copy

    def _empty_output(self, planes, sides) -> NetOutput:
        size = planes.shape[-1]
        if sides is not None:
            num_cells = size * size
        elif hasattr(self.net, "num_cells_for"):
            num_cells = self.net.num_cells_for(size)
        else:
            num_cells = int(self.net.num_cells)
        return NetOutput(
            np.zeros((0, num_cells + 1), np.float32),
            np.zeros((0, 3), np.float32),
            np.zeros((0,), np.float32),
            np.zeros((0, num_cells), np.float32),
            sides=None if sides is None else np.zeros(0, np.int64),
        )

    def __call__(self, planes, globals_, sides=None) -> NetOutput:
        """planes [B, P, H, W], globals [B, G] -> float32 numpy NetOutput; with `sides` int
        [B], a padded batch of several board sides in grid layout (see `PolicyValueNet`)."""
        if len(planes) == 0:
            return self._empty_output(planes, sides)
        if self.net.training:
            self.net.eval()
        reduced = self.use_copy and len(planes) >= REDUCED_PRECISION_MIN_BATCH
        net = self._reduced_copy() if reduced else self.net
        planes_dtype = self.dtype if reduced else torch.float32
        with torch.inference_mode():
            planes_tensor = _to_tensor(planes, self.device, self.memory_format, planes_dtype)
            globals_tensor = _to_tensor(globals_, self.device)
            # Modules without padded batches (an exported program) are called as before.
            arguments = ((planes_tensor, globals_tensor) if sides is None
                         else (planes_tensor, globals_tensor, sides))
            if self.dtype is not None and not self.use_copy:
                with torch.autocast(device_type=self.device.type, dtype=self.dtype):
                    output = net(*arguments)
            else:
                output = net(*arguments)
            heads = (output.policy_logits, output.value_logits, output.score, output.ownership)
            arrays = [head.float().cpu().numpy() for head in heads]
        if sides is not None:
            return NetOutput(*arrays, sides=np.asarray(sides, dtype=np.int64).reshape(-1))
        return NetOutput(*arrays)
