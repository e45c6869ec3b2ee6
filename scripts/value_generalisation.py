"""Does a trained net's value head overfit its replay window? Fresh games against old shards.

Loads the newest checkpoint of a run (or --checkpoint), plays --games fresh self-play games
with the run's own self-play and search settings (komi drawn around the net's fair-komi
estimate as in training, or around --komi) and prints the value head's win/draw/loss
cross-entropy on the fresh positions beside the same loss on the run's newest --shards
shards, which the net was trained on. Equal losses mean the value head generalises and its
plateau is the noise of the game outcomes (or capacity), not memorised samples; a fresh
loss well above the shards' means overfitting.

    python scripts/value_generalisation.py --run-dir runs/side4-cl-sims64-m8
    python scripts/value_generalisation.py --checkpoint CK --games 256 --shards 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from evaluate_learning import (  # noqa: E402  (a sibling script)
    add_checkpoint_arguments,
    checkpoint_path,
    load_net_at_komi,
    stored_config,
)

from catena_zero.data import Samples, list_shards, read_shard  # noqa: E402
from catena_zero.data.atomic import atomic_write_text  # noqa: E402
from catena_zero.mcts.config import SearchConfig  # noqa: E402
from catena_zero.selfplay.config import SelfPlayConfig  # noqa: E402
from catena_zero.selfplay.selfplay import KomiSampler, SelfPlay  # noqa: E402


def value_cross_entropy(net: torch.nn.Module, samples: Samples, batch_size: int = 1024) -> float:
    """Mean cross-entropy of the value head's win/draw/loss against the samples' targets."""
    net.eval()
    total, count = 0.0, 0
    with torch.inference_mode():
        for start in range(0, len(samples.planes), batch_size):
            stop = start + batch_size
            output = net(torch.as_tensor(samples.planes[start:stop], dtype=torch.float32),
                         torch.as_tensor(samples.globals[start:stop], dtype=torch.float32))
            log_probability = torch.log_softmax(output.value_logits.float(), dim=1)
            target = torch.as_tensor(samples.value_target[start:stop], dtype=torch.float32)
            total += float(-(target * log_probability).sum())
            count += target.shape[0]
    if count == 0:
        raise ValueError("no samples to measure the value loss on")
    return total / count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_checkpoint_arguments(parser)
    parser.add_argument("--games", type=int, default=128, help="fresh self-play games")
    parser.add_argument("--shards", type=int, default=3, help="newest shards of the run")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--seed", type=int, default=123)
    parser.add_argument("--json", default="", help="also write the JSON here")
    args = parser.parse_args(argv)
    if args.games < 1 or args.shards < 0:
        parser.error("--games must be >= 1 and --shards >= 0")
    torch.set_num_threads(args.threads)
    path = checkpoint_path(parser, args)
    checkpoint, _, engine, evaluator, fair_komi, _ = load_net_at_komi(path, args.komi)
    net = evaluator.net
    selfplay_config = stored_config(SelfPlayConfig, checkpoint, "selfplay")
    search_config = stored_config(SearchConfig, checkpoint, "mcts")
    centre = fair_komi if args.komi is None else args.komi
    sampler = KomiSampler(engine, selfplay_config, centre)
    fresh, stats = SelfPlay(engine, evaluator, search_config, selfplay_config,
                            sampler).play_games(args.games, np.random.default_rng(args.seed))
    report = {"checkpoint": str(path), "fair_komi_estimate": fair_komi,
              "fresh": {"games": stats.games, "positions": len(fresh.planes),
                        "value_cross_entropy": value_cross_entropy(net, fresh)},
              "shards": []}
    print(f"checkpoint {path}; fair komi {fair_komi:.2f}")
    print(f"fresh games  {stats.games:4d} games {len(fresh.planes):6d} positions  "
          f"value cross-entropy {report['fresh']['value_cross_entropy']:.4f}")
    shard_dir = path.parent.parent / "shards"
    for shard in (list_shards(shard_dir)[-args.shards:] if args.shards else []):
        samples, _ = read_shard(shard)
        loss = value_cross_entropy(net, samples)
        report["shards"].append({"shard": shard.name, "positions": len(samples.planes),
                                 "value_cross_entropy": loss})
        print(f"{shard.name}  {len(samples.planes):6d} positions  value cross-entropy {loss:.4f}")
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
