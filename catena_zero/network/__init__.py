"""catena_zero.network: the policy-value net, device selection and inference.

Example::

    from catena_zero.network import InferenceModel, NetworkConfig, PolicyValueNet, resolve_device
    net = PolicyValueNet(num_planes, num_globals, NetworkConfig(blocks=4, channels=32))
    model = InferenceModel(net, resolve_device("auto"))
    out = model(planes, globals_)   # numpy NetOutput: policy_logits [B, A], value_logits [B, 3],
                                    # score [B], ownership [B, C]; out.value is [B]
    # Several board sides in one call: planes padded top-left to the largest grid G.
    out = model(pad_planes(planes, 19), globals_, sides=sides)   # grid layout [B, G*G + 1]
    for side, (rows, side_output) in out.split_by_side().items(): ...   # [b, A_n], [b, C_n]
"""

from catena_zero.network.config import NetworkConfig
from catena_zero.network.device import (
    INFERENCE_PRECISIONS,
    InferenceModel,
    autocast_dtype,
    inference_dtype,
    resolve_device,
)
from catena_zero.network.layout import (
    MAX_SIDE,
    MIN_SIDE,
    hex_cell_grid_index,
    pad_planes,
    padded_action_index,
    side_of_grid,
)
from catena_zero.network.model import (
    DRAW,
    LOSS,
    OFF_BOARD_LOGIT,
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
    "MAX_SIDE",
    "MIN_SIDE",
    "OFF_BOARD_LOGIT",
    "HexConv2d",
    "InferenceModel",
    "NetOutput",
    "NetworkConfig",
    "PolicyValueNet",
    "autocast_dtype",
    "count_parameters",
    "hex_cell_grid_index",
    "hex_kernel_mask",
    "inference_dtype",
    "pad_planes",
    "padded_action_index",
    "resolve_device",
    "side_of_grid",
    "wdl_to_value",
]
