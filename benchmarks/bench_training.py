"""Training throughput on the mixed minibatches of a mix of tracks: one padded batch against
buckets of sides (`train.side_buckets`).

A minibatch of the general mix holds samples of every side 3..10 in the shares of the mix
(the replay window draws by track share), so one padded batch lays all of them on the 19 x 19
grid of side 10. Buckets lay each group of sides on its own grid and normalise them as one
batch (`PolicyValueNet.forward_buckets`): the same step at about each sample's own cost.

    python -m benchmarks.bench_training                          # b4c32, the mix's final shares
    python -m benchmarks.bench_training --network b4c32 --blocks 6 --repeats 5
    python -m benchmarks.bench_training --shares start           # the warm-up's shares

Samples are positions of random games (a third of the cells played) with random targets.
Each setting trains `--steps` optimiser steps on the same batches, alternated over
`--repeats` rounds; the table gives the median samples per CPU second of each and its ratio
to the padded batch (CPU time: steadier than wall time on a shared machine).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
import yaml

from benchmarks.bench_network import preset_network_config
from benchmarks.bench_padding import observed
from catena_zero.data import MixedBatch, Samples
from catena_zero.data.samples import wdl_from_outcome
from catena_zero.network import PolicyValueNet
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, get_board
from catena_zero.train import TrainConfig, Trainer

MIX_DIR = Path(__file__).resolve().parents[1] / "configs" / "mix"
SETTINGS = {"padded": [], "buckets 6/8/10": [6, 8, 10], "buckets 4/6/8/10": [4, 6, 8, 10],
            "one per side": list(range(2, 11))}


def side_shares(mix: str, which: str) -> dict[int, float]:
    """Share of each board side in configs/mix/<mix>.yaml (`which`: "final" or "start"),
    the tracks of one side summed."""
    values = yaml.safe_load((MIX_DIR / f"{mix}.yaml").read_text())
    shares = values["final_shares"] if which == "final" else values["shares"]
    by_side: dict[int, float] = defaultdict(float)
    for track, share in zip(values["tracks"], shares, strict=True):
        by_side[int(str(track).split("/")[0])] += float(share)
    total = sum(by_side.values())
    return {side: share / total for side, share in sorted(by_side.items()) if share > 0}


def random_batch(shares: dict[int, float], size: int, rng: np.random.Generator,
                 pool: dict[int, tuple[np.ndarray, np.ndarray]]) -> MixedBatch:
    """A minibatch of `size` samples, sides drawn by `shares`, positions from `pool`."""
    counts = rng.multinomial(size, list(shares.values()))
    parts = []
    for side, count in zip(shares, counts, strict=True):
        if not count:
            continue
        board = get_board(side)
        planes, globals_ = pool[side]
        rows = rng.integers(0, len(planes), count)
        legal = rng.random((count, board.num_actions)) < 0.7
        legal[:, -1] = True
        policy = rng.random((count, board.num_actions)) * legal
        parts.append(Samples.create(
            planes=planes[rows], globals=globals_[rows],
            policy_target=policy / policy.sum(axis=1, keepdims=True),
            value_target=wdl_from_outcome(rng.integers(-1, 2, count)),
            score_target=rng.normal(size=count) * 5,
            ownership_target=rng.integers(-1, 2, (count, board.num_cells)),
            weight=np.ones(count, np.float32), legal_mask=legal))
    return MixedBatch(parts)


def samples_per_cpu_second(net: PolicyValueNet, buckets: list[int],
                           batches: list[MixedBatch]) -> float:
    trainer = Trainer(net, TrainConfig(batch_size=len(batches[0]), side_buckets=buckets,
                                       warmup_steps=0), "cpu")
    trainer.train_steps(batches[:1])
    start = time.process_time()
    metrics = trainer.train_steps(batches[1:])
    return metrics.samples / max(time.process_time() - start, 1e-9)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--network", default="b4c32", help="configs/network/<name>.yaml")
    parser.add_argument("--blocks", type=int, default=0, help="override the blocks (0: keep)")
    parser.add_argument("--mix", default="general", help="configs/mix/<name>.yaml")
    parser.add_argument("--shares", choices=("final", "start"), default="final")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    config = preset_network_config(args.network)
    if args.blocks:
        config = dataclasses.replace(config, blocks=args.blocks)
    shares = side_shares(args.mix, args.shares)
    rng = np.random.default_rng(0)
    pool = {side: observed(side, 64, seed=side) for side in shares}
    batches = [random_batch(shares, args.batch, rng, pool) for _ in range(args.steps + 1)]
    torch.manual_seed(0)
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, config)
    rates: dict[str, list[float]] = {name: [] for name in SETTINGS}
    for _ in range(args.repeats):
        for name, buckets in SETTINGS.items():
            fresh = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, config)
            fresh.load_state_dict(net.state_dict())
            rates[name].append(samples_per_cpu_second(fresh, buckets, batches))
    print(f"net {config.blocks}x{config.channels}, mix {args.mix} ({args.shares} shares: "
          + " ".join(f"{side}:{share:.0%}" for side, share in shares.items())
          + f"), batch {args.batch}, {args.steps} steps, {args.repeats} rounds, "
          f"{args.threads} thread(s)")
    padded = float(np.median(rates["padded"]))
    print(f"{'setting':<16}{'samples/cpu-s':>15}{'ratio':>8}")
    for name, values in rates.items():
        median = float(np.median(values))
        print(f"{name:<16}{median:>15.0f}{median / padded:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
