"""catena_zero.network: the policy-value net, device selection and inference.

Example::

    from catena_zero.network import InferenceModel, NetworkConfig, PolicyValueNet, resolve_device
    net = PolicyValueNet(num_planes, num_globals, board.grid_size, board.cell_grid_index,
                         NetworkConfig(blocks=4, channels=32))
    model = InferenceModel(net, resolve_device("auto"))
    out = model(planes, globals_)   # numpy NetOutput: policy_logits [B, A], value_logits [B, 3],
                                    # score [B], ownership [B, C]; out.value is [B]
"""

from catena_zero.network.config import NetworkConfig
from catena_zero.network.device import (
    INFERENCE_PRECISIONS,
    InferenceModel,
    autocast_dtype,
    inference_dtype,
    resolve_device,
)
from catena_zero.network.model import (
    DRAW,
    LOSS,
    WIN,
    HexConv2d,
    NetOutput,
    PolicyValueNet,
    count_parameters,
    hex_kernel_mask,
    wdl_to_value,
)

__all__ = [
    "DRAW",
    "LOSS",
    "WIN",
    "INFERENCE_PRECISIONS",
    "HexConv2d",
    "InferenceModel",
    "NetOutput",
    "NetworkConfig",
    "PolicyValueNet",
    "autocast_dtype",
    "count_parameters",
    "hex_kernel_mask",
    "inference_dtype",
    "resolve_device",
    "wdl_to_value",
]
