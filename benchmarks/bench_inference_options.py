"""Inference options for the network's forward pass on the CPU, measured side by side.

Self-play on sides 6 and up spends most of its time in the network's forward pass, so an
option that evaluates a batch faster at the same strength is strength per CPU-hour. Each
option runs the same model file's net on the same random side-N batch; the options take
turns `--repeats` times in one process (machine noise hits all alike) and the table gives
the median positions per CPU-second and the ratio to the default (what `InferenceModel`
does on this CPU at that batch: a bfloat16 copy on an AMX CPU from batch 8, float32
otherwise), plus each option's
largest deviation from float32 over the batch (the policy's total-variation distance, the
expected value win - loss), which says whether strength could change at all. The batch is
real positions: random moves from the empty board.

    python -m benchmarks.bench_inference_options
    python -m benchmarks.bench_inference_options --model runs/ratings/champion.pt --side 8 \\
        --batches 32 128 --repeats 7 --options float32 bfloat16 bfloat16+compile

Options: float32 (eager), bfloat16 (eager copy with bfloat16 convolutions, the project's
reduced-precision path), float32+compile and bfloat16+compile (`torch.compile`, inductor,
static shapes; compile time is reported, not counted), int8-dynamic
(`torch.ao.quantization.quantize_dynamic` on the linear layers, the only layers it covers;
the 3x3 convolutions stay float32).
"""

from __future__ import annotations

import argparse
import copy
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

from catena_zero.export.model_file import load_model_file
from catena_zero.network.device import (
    REDUCED_PRECISION_MIN_BATCH,
    inference_dtype,
    reduced_precision_copy,
)
from catena_zero.play.bundled import bundled_general_path
from catena_zero.rules import Engine, Rules, get_board
from catena_zero.rules.observe import observe

OPTIONS = ("float32", "bfloat16", "float32+compile", "bfloat16+compile", "int8-dynamic")
Forward = Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, ...]]


RECOMPILE_LIMIT = 256  # compiled graphs kept per function: options x batch sizes x breaks


def allow_recompiles() -> None:
    """Let dynamo keep a compiled graph for every (option, batch size): the options share
    the net's code, and past dynamo's default limit (8 per function) the later ones would
    silently run eager, with guard checks on top, and measure nothing of compile."""
    for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                 "accumulated_cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, max(getattr(torch._dynamo.config, name),
                                                    RECOMPILE_LIMIT))


def build_option(net: nn.Module, option: str) -> tuple[Forward, torch.dtype, float]:
    """(forward(planes, globals) -> (policy logits, value logits), the planes' dtype, the
    seconds spent building it); the net is copied, never changed."""
    started = time.perf_counter()
    base = copy.deepcopy(net).eval()
    dtype = torch.float32
    if option.startswith("bfloat16"):
        base, dtype = reduced_precision_copy(base, torch.bfloat16, torch.channels_last), \
            torch.bfloat16
    else:
        base = base.to(memory_format=torch.channels_last)
    if option == "int8-dynamic":
        with warnings.catch_warnings():  # torch.ao.quantization's deprecation notice
            warnings.simplefilter("ignore")
            base = torch.ao.quantization.quantize_dynamic(base, {nn.Linear}, dtype=torch.qint8)
    module = base
    if option.endswith("+compile"):
        allow_recompiles()
        module = torch.compile(base, dynamic=False)

    def forward(planes: torch.Tensor, globals_: torch.Tensor) -> tuple[torch.Tensor, ...]:
        # The cast of the float32 planes is part of every call, as in InferenceModel.
        output = module(planes.to(dtype), globals_)
        return output.policy_logits.float(), output.value_logits.float()

    return forward, dtype, time.perf_counter() - started


def batch_tensors(side: int, batch_size: int, seed: int = 0):
    """The observation of `batch_size` side-`side` komi/standard positions, each a random
    number of random moves (0 to 3/4 of the cells) from the empty board: planes
    [B, P, H, W] (channels-last) and globals [B, G]."""
    engine = Engine(Rules(side=side))
    states = engine.new_games(batch_size, komi=5)
    rng = np.random.default_rng([seed, side])
    stop = rng.integers(0, 3 * get_board(side).num_cells // 4 + 1, batch_size)
    for ply in range(int(stop.max())):
        moving = np.flatnonzero((stop > ply) & ~states.terminal)
        if not moving.size:
            break
        sub = states.take(moving)
        engine.step(sub, engine.random_actions(sub, rng))
        states.put(moving, sub)
    planes, globals_ = observe(engine, states)
    return (torch.from_numpy(np.asarray(planes, np.float32)).contiguous(
        memory_format=torch.channels_last), torch.from_numpy(np.asarray(globals_, np.float32)))


def deviations(output: tuple[torch.Tensor, ...], reference: tuple[torch.Tensor, ...]
               ) -> tuple[float, float]:
    """(largest total-variation distance between the policies, largest difference of the
    expected value win - loss in [-1, 1]) of an option's output against float32's."""
    policy, value = (torch.softmax(logits, dim=-1) for logits in output)
    policy_ref, value_ref = (torch.softmax(logits, dim=-1) for logits in reference)
    total_variation = 0.5 * (policy - policy_ref).abs().sum(-1).max()
    expected = (value[:, 0] - value[:, 2]) - (value_ref[:, 0] - value_ref[:, 2])
    return float(total_variation), float(expected.abs().max())


def rate(forward: Forward, planes: torch.Tensor, globals_: torch.Tensor,
         seconds: float) -> float:
    """Positions per CPU-second of `forward` over about `seconds` of wall time."""
    calls, start, start_cpu = 0, time.perf_counter(), time.process_time()
    while calls < 3 or time.perf_counter() - start < seconds:
        forward(planes, globals_)
        calls += 1
    return planes.shape[0] * calls / max(time.process_time() - start_cpu, 1e-9)


def compare_options(net: nn.Module, side: int, options: list[str], batches: list[int],
                    repeats: int, seconds: float, log=print) -> list[dict]:
    """One row per (batch, option): median pos/cpu-s, ratio to the default option, largest
    deviation from float32 (`deviations`), build and first-call (compile) seconds."""
    reduced = inference_dtype(torch.device("cpu")) is not None  # bf16 on AMX or AVX512-BF16
    defaults = {batch_size: "bfloat16" if reduced and batch_size >= REDUCED_PRECISION_MIN_BATCH
                else "float32" for batch_size in batches}
    built = {option: build_option(net, option)
             for option in dict.fromkeys([*options, *defaults.values(), "float32"])}
    rows = []
    for batch_size in batches:
        default = defaults[batch_size]
        planes, globals_ = batch_tensors(side, batch_size)
        with torch.inference_mode():
            reference = built["float32"][0](planes, globals_)
            deviation, first_call = {}, {}
            for option, (forward, _, _) in built.items():
                started = time.perf_counter()
                output = forward(planes, globals_)  # compiles on the first call
                first_call[option] = time.perf_counter() - started
                deviation[option] = deviations(output, reference)
            rates = {option: [] for option in built}
            for _ in range(repeats):
                for option, (forward, _, _) in built.items():
                    rates[option].append(rate(forward, planes, globals_, seconds))
        medians = {option: float(np.median(values)) for option, values in rates.items()}
        for option in built:
            row = {"batch": batch_size, "option": option, "pos_per_cpu_s": medians[option],
                   "ratio": medians[option] / medians[default], "default": option == default,
                   "policy_deviation": deviation[option][0],
                   "value_deviation": deviation[option][1],
                   "setup_seconds": built[option][2] + first_call[option]}
            rows.append(row)
            log(f"{batch_size:>6} {option:<18}{row['pos_per_cpu_s']:>11.0f}{row['ratio']:>8.2f}"
                f"{row['policy_deviation']:>10.3f}{row['value_deviation']:>9.3f}"
                f"{row['setup_seconds']:>9.1f}{'  (default)' if row['default'] else ''}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="model file (default: the "
                        "bundled general.pt)")
    parser.add_argument("--side", type=int, default=6, help="board side of the batch")
    parser.add_argument("--batches", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--options", nargs="+", default=list(OPTIONS), choices=OPTIONS)
    parser.add_argument("--repeats", type=int, default=5, help="rounds of the comparison")
    parser.add_argument("--seconds", type=float, default=1.0, help="timed seconds per point")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args(argv)
    if not 2 <= args.side <= 10 or min(args.batches) < 1 or args.repeats < 1:
        parser.error("--side must be 2..10, --batches and --repeats >= 1")
    torch.set_num_threads(args.threads)
    path = args.model or bundled_general_path()
    net = load_model_file(path).network.eval()
    print(f"model={path} side={args.side} threads={args.threads} repeats={args.repeats}")
    print(f"{'batch':>6} {'option':<18}{'pos/cpu-s':>11}{'ratio':>8}{'policy TV':>10}"
          f"{'|dvalue|':>9}{'setup s':>9}")
    compare_options(net, args.side, args.options, args.batches, args.repeats, args.seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
