"""A single-side net's weights and outputs as written by the code before the size-general net.

`legacy_side4_net.npz` was written by `write_fixture` at commit 05ef397 (the last one whose
PolicyValueNet was built for one board side only). It holds the net's `init_args` (JSON),
its state dict, observed positions of side 4 (11 planes, the 11 globals of that time) and
the outputs the old code computed for them in eval mode and in one train-mode step (with the
running statistics after it). `test_network_general.py` rebuilds the net with today's code
and checks that nothing changed. Regenerate it only from such an old commit:
`PYTHONPATH=$PWD python -m tests.network.legacy_net_fixture`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from catena_zero.rules import Engine, Rules, observe

FIXTURE = Path(__file__).with_name("legacy_side4_net.npz")
OUTPUTS = ("policy_logits", "value_logits", "score", "ownership", "ownership_logit",
           "score_belief_logits")
LEGACY_NUM_GLOBALS = 11  # the globals of observation version 1


def observed_positions(side: int, count: int, seed: int, game_type: str = "komi"):
    """(planes [count, P, H, W], globals [count, G], legal [count, A]) of random games, each
    position after a different number of random moves."""
    engine = Engine(Rules(side, game_type, "standard"))
    rng = np.random.default_rng(seed)
    low, high = engine.rules.komi_range
    planes, globals_, legal = [], [], []
    for index in range(count):
        state = engine.new_games(1, komi=int(rng.integers(low, high + 1)))
        for _ in range(index * engine.board.num_cells // (2 * count)):
            if state.terminal.all():
                break
            engine.step(state, engine.random_actions(state, rng))
        position_planes, position_globals = observe(engine, state)
        planes.append(position_planes)
        globals_.append(position_globals)
        legal.append(engine.legal_actions(state))
    return np.concatenate(planes), np.concatenate(globals_), np.concatenate(legal)


def write_fixture(path: Path = FIXTURE) -> None:
    from catena_zero.network import NetworkConfig, PolicyValueNet
    from catena_zero.rules import get_board

    torch.manual_seed(3)
    board = get_board(4)
    config = NetworkConfig(blocks=2, channels=16, global_pool_every=1, global_pool_channels=4,
                           policy_head_channels=4, value_head_channels=4, value_hidden=8,
                           score_belief_bins=5)
    net = PolicyValueNet(11, LEGACY_NUM_GLOBALS, board.grid_size, board.cell_grid_index, config)
    with torch.no_grad():  # running statistics and affine maps away from their initial values
        for name, tensor in net.state_dict().items():
            if name.endswith("running_var"):
                tensor.copy_(torch.rand_like(tensor) + 0.5)
            elif name.endswith("running_mean") or name.endswith("norm1.bias"):
                tensor.copy_(torch.randn_like(tensor) * 0.3)
    planes, globals_, _ = observed_positions(4, 12, seed=5)
    arrays = {"init_args": np.frombuffer(json.dumps(net.init_args).encode(), np.uint8),
              "planes": planes, "globals": globals_}
    for name, tensor in net.state_dict().items():
        arrays[f"state/{name}"] = tensor.numpy().copy()
    planes_tensor, globals_tensor = torch.from_numpy(planes), torch.from_numpy(globals_)
    net.eval()
    with torch.no_grad():
        output = net(planes_tensor, globals_tensor)
    for name in OUTPUTS:
        arrays[f"eval/{name}"] = getattr(output, name).numpy()
    net.train()
    output = net(planes_tensor, globals_tensor)
    for name in OUTPUTS:
        arrays[f"train/{name}"] = getattr(output, name).detach().numpy()
    for name, tensor in net.state_dict().items():
        if "running" in name:
            arrays[f"after_train/{name}"] = tensor.numpy().copy()
    np.savez_compressed(path, **arrays)


if __name__ == "__main__":
    write_fixture()
