"""Device selection and a numpy-in / numpy-out inference wrapper.

On CUDA the wrapper runs under autocast (bfloat16 where the GPU supports it,
else float16); on the CPU it runs in float32 with channels-last activations and conv
weights (oneDNN's small convolutions ran 1.15-1.5x faster that way on the 7x7 and 11x11
grids, see `scripts/bench_network.py --compare-layouts`). Outputs are always float32 numpy.

Example::

    from catena_zero.network import InferenceModel, resolve_device

    device = resolve_device("auto")            # cuda when present, else cpu
    model = InferenceModel(net, device)        # puts net in eval mode on device
    out = model(planes, globals_)              # numpy [B, P, H, W] (uint8/float), [B, G]
    out.policy_logits, out.value, out.score, out.ownership   # numpy float32
"""

from __future__ import annotations

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


def autocast_dtype(device: torch.device) -> torch.dtype | None:
    """Reduced precision used for inference on `device`, or None for float32."""
    if device.type != "cuda":
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def _to_tensor(array, device: torch.device,
               memory_format: torch.memory_format = torch.preserve_format) -> torch.Tensor:
    """`array` on `device` as float32 in `memory_format`, converted in one copy."""
    if isinstance(array, torch.Tensor):
        tensor = array
    else:
        tensor = torch.from_numpy(np.ascontiguousarray(array))
    if device.type == "cuda" and tensor.device.type == "cpu":
        # Copy the compact (e.g. uint8) array and convert on the GPU: less to transfer.
        tensor = tensor.pin_memory().to(device, non_blocking=True)
    else:
        tensor = tensor.to(device)
    return tensor.to(torch.float32, memory_format=memory_format)


class InferenceModel:
    """Evaluates a PolicyValueNet (or any module returning NetOutput): eval mode,
    inference_mode, numpy in and out.

    `__call__(planes [B, P, H, W], globals [B, G]) -> NetOutput` of float32 numpy arrays
    (`ownership_logit` is None). The wrapped net is moved to `device` and put in eval mode;
    call `refresh()` after changing its weights elsewhere if it was moved off `device`.
    """

    def __init__(self, net: nn.Module, device: str | torch.device = "auto",
                 channels_last: bool | None = None):
        self.device = resolve_device(device)
        self.net = net
        self.dtype = autocast_dtype(self.device)
        if channels_last is None:
            channels_last = self.device.type == "cpu"
        self.memory_format = torch.channels_last if channels_last else torch.contiguous_format
        self.refresh()

    def refresh(self) -> None:
        # Converting the weights once here spares oneDNN a reorder on every call; training
        # speed on the CPU does not depend on the layout, so a shared net may keep it.
        self.net.to(self.device, memory_format=self.memory_format)
        self.net.eval()

    def __call__(self, planes, globals_) -> NetOutput:
        if len(planes) == 0:
            num_cells = int(self.net.num_cells)
            return NetOutput(
                np.zeros((0, num_cells + 1), np.float32),
                np.zeros((0, 3), np.float32),
                np.zeros((0,), np.float32),
                np.zeros((0, num_cells), np.float32),
            )
        if self.net.training:
            self.net.eval()
        with torch.inference_mode():
            planes_tensor = _to_tensor(planes, self.device, self.memory_format)
            globals_tensor = _to_tensor(globals_, self.device)
            if self.dtype is not None:
                with torch.autocast(device_type=self.device.type, dtype=self.dtype):
                    output = self.net(planes_tensor, globals_tensor)
            else:
                output = self.net(planes_tensor, globals_tensor)
            heads = (output.policy_logits, output.value_logits, output.score, output.ownership)
            arrays = [head.float().cpu().numpy() for head in heads]
        return NetOutput(*arrays)
