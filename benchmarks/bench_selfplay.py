"""Self-play benchmark: batched self-play against its hardware bound and a one-game baseline.

For each preset network (side4, side6 by default), with the preset's self-play settings and a
freshly initialised net:
  (a) batched self-play (`catena_zero.selfplay.SelfPlay`): positions/s (moves played, full
      and cheap searches) and network evaluations/s (positions through the net);
  (b) the raw network on random inputs at the batch size (a) actually used (mean positions
      per network call): positions/s, the hardware bound;
  (c) one game at a time with the Python MCTS (`catena_zero.mcts.single_game`), the same net
      and the same full/cheap simulation mix: positions/s.
Ratios: (a)/(b) = network evaluations/s of (a) over (b) (search, engine and data cost
1 - ratio of the time), and (a)/(c) = positions/s over positions/s. Each figure is the median
of --repeats runs. Prints a table, then JSON (also written to --json).

    python -m benchmarks.bench_selfplay                       # side4 and side6, 1 torch thread
    python -m benchmarks.bench_selfplay --presets side4 --repeats 3 --json bench.json
    python -m benchmarks.bench_selfplay --presets side4 --compare-layouts --repeats 5
    python -m benchmarks.bench_selfplay --presets side4 --compare-precisions --repeats 5

--mix NAME (configs/mix/NAME.yaml, e.g. general) measures (a) and (b) on every track of
that training mix instead (`--mix-tracks` keeps some; the preset's network and self-play
settings, a fresh net of the track's board), and weights each track's self-play time by its
share at `--mix-iteration`: the network's share of the mix's self-play time is
sum(share x network seconds) / sum(share x self-play seconds), network seconds being (a)'s
evaluations over (b)'s rate (the a/b of the whole mix). Each track plays one training
iteration's games (`games_per_iteration`, `selfplay.games_in_batch` at once; more of both on
small boards with `--override batch_cells=N`, `catena_zero.pipeline.steps.track_games`), or
--games games.

    python -m benchmarks.bench_selfplay --presets general --mix general --games 32 --repeats 1

--compare-layouts measures only (a), alternately with the network in contiguous and in
channels-last layout (the CPU default), and prints the medians of positions per CPU second
and their ratio. --compare-precisions does the same for float32 against bfloat16 inference
(the CPU default where the CPU has AMX, see `catena_zero.network.device`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.bench_network import measure_throughput, precision_name
from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.data.atomic import atomic_write_text
from catena_zero.mcts.single_game import single_game_search
from catena_zero.network import (
    INFERENCE_PRECISIONS,
    InferenceModel,
    PolicyValueNet,
    count_parameters,
    resolve_device,
)
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES, Engine
from catena_zero.selfplay.evaluator import NetworkEvaluator
from catena_zero.selfplay.selfplay import SelfPlay


def build(preset: str, overrides: list[str]):
    """(engine, net, TrainLoopConfig) of a preset with a fresh network."""
    config = build_config(compose("train", [f"preset={preset}", *overrides]))
    engine = Engine(config.rules)
    board = config.rules.board
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index,
                         config.network)
    return engine, net, config


def measure_batched(engine, net, config, games: int, seed: int, device: str = "cpu",
                    channels_last: bool | None = None, precision: str = "auto") -> dict:
    """(a): one `play_games(games)` call of batched self-play (`channels_last` None: the
    inference model's default layout for the device; `precision` as `InferenceModel`'s)."""
    evaluator = NetworkEvaluator(InferenceModel(net, device, channels_last, precision), engine)
    selfplay = SelfPlay(engine, evaluator, config.search, config.selfplay)
    start, start_cpu = time.perf_counter(), time.process_time()
    _, stats = selfplay.play_games(games, np.random.default_rng(seed))
    seconds = time.perf_counter() - start
    cpu_seconds = max(time.process_time() - start_cpu, 1e-9)
    return {
        "positions_per_s": stats.moves / seconds,
        "positions_per_cpu_s": stats.moves / cpu_seconds,
        "evaluations_per_s": evaluator.positions / seconds,
        "mean_network_batch": evaluator.positions / max(evaluator.calls, 1),
        "games": stats.games,
        "moves": stats.moves,
        "seconds": seconds,
    }


def measure_single_game(engine, net, config, seconds: float, seed: int,
                        device: str = "cpu", precision: str = "auto") -> dict:
    """(c): one game at a time, move by move, with the Python MCTS (same simulation mix)."""
    evaluator = NetworkEvaluator(net, engine, device, precision)
    rng = np.random.default_rng(seed)
    selfplay_config = config.selfplay
    full = dataclasses.replace(config.search, num_simulations=selfplay_config.full_simulations)
    cheap = dataclasses.replace(config.search, num_simulations=selfplay_config.cheap_simulations)
    state = engine.new_games(1, komi=0)
    moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or moves < 3:
        if state.terminal[0]:
            state = engine.new_games(1, komi=0)
        use_full = rng.random() < selfplay_config.full_search_probability
        output = single_game_search(engine, state, evaluator, full if use_full else cheap, rng)
        engine.step(state, np.array([output.action]))
        moves += 1
    elapsed = time.perf_counter() - start
    return {"positions_per_s": moves / elapsed, "moves": moves, "seconds": elapsed}


def bench_preset(preset: str, args) -> dict:
    engine, net, config = build(preset, args.override)
    games = args.games or 2 * config.selfplay.games_in_batch
    batched = [measure_batched(engine, net, config, games, args.seed + i, args.device,
                               precision=args.precision)
               for i in range(args.repeats)]
    batch = max(1, round(float(np.median([run["mean_network_batch"] for run in batched]))))
    raw = [measure_throughput(net, batch, args.device, args.raw_seconds, seed=args.seed + i,
                              precision=args.precision)
           for i in range(args.repeats)]
    single = [measure_single_game(engine, net, config, args.single_seconds, args.seed + i,
                                  args.device, args.precision)
              for i in range(args.repeats)]
    a_positions = float(np.median([run["positions_per_s"] for run in batched]))
    a_evaluations = float(np.median([run["evaluations_per_s"] for run in batched]))
    b_rate = float(np.median(raw))
    c_rate = float(np.median([run["positions_per_s"] for run in single]))
    return {
        "preset": preset,
        "device": args.device,
        "precision": precision_name(args.device, args.precision),
        "side": config.rules.board.side,
        "network": f"{config.network.blocks}x{config.network.channels}",
        "parameters": count_parameters(net),
        "games_in_batch": config.selfplay.games_in_batch,
        "simulations_full_cheap": [config.selfplay.full_simulations,
                                   config.selfplay.cheap_simulations],
        "full_search_probability": config.selfplay.full_search_probability,
        "algorithm": config.search.algorithm,
        "mean_network_batch": batch,
        "a_selfplay_positions_per_s": a_positions,
        "a_selfplay_evaluations_per_s": a_evaluations,
        "b_raw_network_positions_per_s": b_rate,
        "c_single_game_positions_per_s": c_rate,
        "ratio_a_over_b": a_evaluations / b_rate,
        "ratio_a_over_c": a_positions / c_rate,
        "runs": {"a": batched, "b": raw, "c": single},
    }


def network_for(config, side: int) -> PolicyValueNet:
    """A fresh network of `config.network` for the board of `side`."""
    from catena_zero.rules import get_board

    board = get_board(side)
    return PolicyValueNet(NUM_PLANES, NUM_GLOBALS, board.grid_size, board.cell_grid_index,
                          config.network)


def bench_mix(preset: str, args) -> dict:
    """(a) and (b) on each track of the mix `args.mix`, and the mix's network share."""
    import fnmatch

    from catena_zero.pipeline.steps import track_games
    from catena_zero.pipeline.tracks import TrackMix

    _, _, config = build(preset, [f"mix={args.mix}", *args.override])
    shares = TrackMix(config.mix, config.rules).shares_at(args.mix_iteration)
    patterns = [item for item in args.mix_tracks.split(",") if item]
    tracks = [track for track in shares
              if not patterns or any(fnmatch.fnmatchcase(str(track), p) for p in patterns)]
    if not tracks:
        raise ValueError(f"--mix-tracks {args.mix_tracks!r} keeps none of the mix's tracks")
    rows = []
    for track in tracks:
        engine = Engine(track.rules())
        net = network_for(config, track.side)
        # One training iteration of this track: its games and how many are searched at once
        # (more on small boards with batch_cells); --games sets how many are played instead.
        iteration_games, in_batch = track_games(config, engine.rules.board.num_cells)
        games = args.games or iteration_games
        in_batch = min(in_batch, games)
        track_config = dataclasses.replace(config, selfplay=dataclasses.replace(
            config.selfplay, games_in_batch=in_batch))
        batched = measure_batched(engine, net, track_config, games, args.seed, args.device,
                                  precision=args.precision)
        batch = max(1, round(batched["mean_network_batch"]))
        raw = measure_throughput(net, batch, args.device, args.raw_seconds, seed=args.seed,
                                 precision=args.precision)
        network_seconds = batched["evaluations_per_s"] * batched["seconds"] / raw
        rows.append({"track": str(track), "share": shares[track], "mean_network_batch": batch,
                     "a_selfplay_positions_per_s": batched["positions_per_s"],
                     "a_selfplay_evaluations_per_s": batched["evaluations_per_s"],
                     "b_raw_network_positions_per_s": raw,
                     "ratio_a_over_b": batched["evaluations_per_s"] / raw,
                     "selfplay_seconds": batched["seconds"], "network_seconds": network_seconds,
                     "games": games, "games_in_batch": in_batch,
                     "moves": batched["moves"]})
    weighted_total = sum(row["share"] * row["selfplay_seconds"] for row in rows)
    weighted_network = sum(row["share"] * row["network_seconds"] for row in rows)
    return {"preset": preset, "mix": args.mix, "mix_iteration": args.mix_iteration,
            "batch_cells": config.loop.batch_cells, "tracks": rows,
            "network_share_of_selfplay": weighted_network / weighted_total}


# name -> (channels_last, precision) of the two settings each comparison alternates.
LAYOUTS = {"contiguous": (False, "float32"), "channels_last": (True, "float32")}
PRECISIONS = {"float32": (True, "float32"), "bfloat16": (True, "bfloat16")}


def compare_settings(preset: str, args, settings: dict) -> dict:
    """(a) alternately with the two network `settings`, --repeats pairs; the ratio is the
    second's positions per CPU second over the first's."""
    engine, net, config = build(preset, args.override)
    games = args.games or 2 * config.selfplay.games_in_batch
    runs = {name: [] for name in settings}
    for index in range(args.repeats):
        for name, (channels_last, precision) in settings.items():
            runs[name].append(measure_batched(engine, net, config, games, args.seed + index,
                                              args.device, channels_last, precision))
    medians = {name: float(np.median([run["positions_per_cpu_s"] for run in values]))
               for name, values in runs.items()}
    first, second = settings
    return {"preset": preset, "positions_per_cpu_s": medians,
            "ratio": medians[second] / medians[first], "runs": runs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="+", default=["side4", "side6"])
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--games", type=int, default=0,
                        help="games per batched run (0 = 2 x games_in_batch)")
    parser.add_argument("--raw-seconds", type=float, default=2.0, help="timed seconds of (b)")
    parser.add_argument("--single-seconds", type=float, default=10.0,
                        help="timed seconds of (c)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu",
                        help="where the network runs: cpu, cuda or auto (bf16 on a GPU)")
    parser.add_argument("--precision", default="auto", choices=INFERENCE_PRECISIONS,
                        help="inference precision (auto: bf16 on a GPU or a bf16 CPU)")
    parser.add_argument("--json", default="", help="also write the JSON here")
    parser.add_argument("--override", nargs="*", default=[],
                        help="extra Hydra overrides for the train config, e.g. "
                             "selfplay.games_in_batch=128")
    parser.add_argument("--mix", default="",
                        help="measure every track of this training mix (configs/mix/NAME)")
    parser.add_argument("--mix-tracks", default="",
                        help="with --mix: comma-separated tracks or patterns to keep")
    parser.add_argument("--mix-iteration", type=int, default=0,
                        help="with --mix: the iteration whose shares weight the tracks")
    parser.add_argument("--compare-layouts", action="store_true",
                        help="only (a), contiguous against channels-last network layout")
    parser.add_argument("--compare-precisions", action="store_true",
                        help="only (a), float32 against bfloat16 inference")
    args = parser.parse_args(argv)
    try:
        args.device = str(resolve_device(args.device))
    except ValueError as error:
        parser.error(f"--device: {error}")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.mix:
        try:
            mixes = [bench_mix(preset, args) for preset in args.presets]
        except ValueError as error:
            parser.error(str(error))
        for row in mixes:
            print(f"{row['preset']} with mix {row['mix']} (shares at iteration "
                  f"{row['mix_iteration']}, batch_cells={row['batch_cells']})")
            print(f"{'track':<20}{'share':>7}{'games':>7}{'batch':>7}{'(a) pos/s':>11}"
                  f"{'(a) eval/s':>12}{'(b) raw/s':>11}{'a/b':>7}")
            for track in row["tracks"]:
                print(f"{track['track']:<20}{track['share']:>7.3f}{track['games']:>7}"
                      f"{track['mean_network_batch']:>7}"
                      f"{track['a_selfplay_positions_per_s']:>11.1f}"
                      f"{track['a_selfplay_evaluations_per_s']:>12.0f}"
                      f"{track['b_raw_network_positions_per_s']:>11.0f}"
                      f"{track['ratio_a_over_b']:>7.2f}")
            print(f"network share of the mix's self-play time (a/b): "
                  f"{row['network_share_of_selfplay']:.2f}")
        text = json.dumps({"device": args.device, "threads": args.threads, "mixes": mixes},
                          indent=2)
        if args.json:
            atomic_write_text(args.json, text + "\n")
        return 0
    if args.compare_layouts or args.compare_precisions:
        settings = LAYOUTS if args.compare_layouts else PRECISIONS
        comparisons = [compare_settings(preset, args, settings) for preset in args.presets]
        print(f"(a) positions per CPU second, medians of {args.repeats} alternated runs")
        for row in comparisons:
            rates = "  ".join(f"{name} {rate:8.1f}"
                              for name, rate in row["positions_per_cpu_s"].items())
            print(f"{row['preset']:<8} {rates}  ratio {row['ratio']:.2f}")
        if args.json:
            atomic_write_text(Path(args.json), json.dumps(comparisons, indent=2))
        return 0
    results = [bench_preset(preset, args) for preset in args.presets]
    header = (f"{'preset':<8}{'net':>7}{'B':>5}{'sims':>7}{'batch':>7}{'(a) pos/s':>11}"
              f"{'(a) eval/s':>12}{'(b) raw/s':>11}{'(c) pos/s':>11}{'a/b':>7}{'a/c':>8}")
    print(f"device={args.device}, torch threads={args.threads}, cpu count={os.cpu_count()}, "
          f"medians of {args.repeats} runs")
    print(header)
    for r in results:
        sims = "/".join(str(s) for s in r["simulations_full_cheap"])
        print(f"{r['preset']:<8}{r['network']:>7}{r['games_in_batch']:>5}{sims:>7}"
              f"{r['mean_network_batch']:>7}{r['a_selfplay_positions_per_s']:>11.1f}"
              f"{r['a_selfplay_evaluations_per_s']:>12.0f}"
              f"{r['b_raw_network_positions_per_s']:>11.0f}"
              f"{r['c_single_game_positions_per_s']:>11.2f}{r['ratio_a_over_b']:>7.2f}"
              f"{r['ratio_a_over_c']:>8.1f}")
    text = json.dumps({"device": args.device, "threads": args.threads, "repeats": args.repeats,
                       "results": results}, indent=2)
    print(text)
    if args.json:
        atomic_write_text(args.json, text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
