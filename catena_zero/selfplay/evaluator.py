"""The network -> EvaluateFn bridge used by the search in self-play, arena, evaluation and play.

One net evaluates every board side: `NetworkEvaluator(net, engine)` works for any engine's
rules, and `evaluate_many` evaluates the states of several engines (sides and variants) in one
padded network call, for self-play that mixes boards. The net runs in an `InferenceModel`,
whose `precision` (auto | float32 | bfloat16) picks bfloat16 convolutions on CPUs with AMX or
AVX512-BF16 and float32 elsewhere. Model files become evaluators through
`catena_zero.export.evaluator.model_file_evaluator`, which wraps their network here.

Example::

    evaluator = NetworkEvaluator(net, Engine(Rules(6)))
    evaluation = evaluator(states)                       # [B, A_6] policy, [B] value, ...
    side4, side8 = evaluator.evaluate_many([(engine4, states4), (engine8, states8)])
    steady = NetworkEvaluator(net, engine, "cpu", chunk="steady")   # one call shape, see below

Fixed-shape calls (`chunk`). CPU convolution and matrix kernels pick their blocking by the
batch size, and some by a row's slot in the batch: one position evaluated in a batch of 1, 5
or 16, or in slot 0 or slot 13, comes out different in the last bits (1e-7 to 1e-6 apart in
float32). Where an answer must not depend on the positions evaluated beside it (the analysis
engine batches whatever queries arrive together), `chunk=N` runs the net only on batches of
exactly N positions, the last one filled up with copies of its last position (whose outputs
are dropped); the kernels then compute each row from that row alone. Which N does so is a
property of the machine, checked for a board by `steady_chunk` (`chunk="steady"`): the first
of CHUNK_CANDIDATES at which a batch of copies of one position comes out identical in every
slot, else 1 (every position evaluated alone, always exact but slower). Every candidate is at
least `REDUCED_PRECISION_MIN_BATCH`, so under bfloat16 each call runs the bfloat16 net and
the probe checks the arithmetic that answers. A row's numbers then depend only on the
position, the model, the precision and the machine (CPU kind and thread count).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from catena_zero.mcts.evaluation import Evaluation
from catena_zero.network import InferenceModel, NetOutput, pad_planes
from catena_zero.rules import Engine, GameState, observe

# Chunk sizes tried, smallest first. Below 16 the kernels of a typical x86 CPU still treat
# slots differently (measured in float32: 4 and 8 do, 16 does not); a larger chunk wastes
# more filler on a lone position.
CHUNK_CANDIDATES = (16, 32, 64)
PROBE_MOVES = 4  # the probe position: this many seeded random moves from the empty board
STEADY = "steady"  # chunk: steady_chunk's choice for this machine and board
HEADS = ("policy_logits", "value_logits", "score", "ownership")  # NetOutput's numpy heads


class NetworkEvaluator:
    """`EvaluateFn` over a PolicyValueNet: observe the states, one batched network call.

    `evaluator(states) -> Evaluation` with policy_logits [B, A], value [B] = p(win) - p(loss)
    in [-1, 1], score [B] and ownership [B, C], all from the side to move's view.
    `calls` and `positions` count network calls and evaluated positions (for benchmarks).
    `net` is a PolicyValueNet, or a model that answers like an `InferenceModel` (one already,
    shared between evaluators of several boards, or a stand-in that sends the planes to a
    remote one); `device` and `precision` are `InferenceModel`'s, for a net.
    `chunk`: None runs calls of whatever size comes; an int N >= 1 runs every network call on
    exactly N positions; "steady" the N `steady_chunk` finds for this machine and board (see
    the module docstring). `positions` counts the filler rows too.
    """

    def __init__(self, net, engine: Engine, device="auto", precision: str = "auto",
                 chunk: int | str | None = None):
        self.engine = engine
        self.model = (InferenceModel(net, device, precision=precision)
                      if isinstance(net, torch.nn.Module) else net)
        self.calls = 0
        self.positions = 0
        if chunk == STEADY:
            chunk = steady_chunk(self.model, engine)
        elif chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int)
                                    or chunk < 1):
            raise ValueError(f"chunk must be None, 'steady' or an int >= 1, got {chunk!r}")
        self.chunk: int | None = chunk

    @property
    def net(self):
        return self.model.net

    def refresh(self) -> None:
        """Call after the net's weights changed elsewhere (e.g. trained on another device)."""
        self.model.refresh()

    def __call__(self, states: GameState) -> Evaluation:
        planes, globals_ = observe(self.engine, states)  # [B, P, H, W], [B, G]
        return _evaluation(self._run(planes, globals_))

    def _run(self, planes: np.ndarray, globals_: np.ndarray, sides=None) -> NetOutput:
        """The model on planes [B, P, H, W], globals [B, G] (and sides [B] of a padded
        batch), in calls of `chunk` rows when set; counts the calls and positions."""
        count = len(planes)
        if self.chunk is None or count == 0:
            self.calls += 1
            self.positions += count
            return (self.model(planes, globals_) if sides is None
                    else self.model(planes, globals_, sides=sides))
        pieces = []
        for start in range(0, count, self.chunk):
            stop = min(start + self.chunk, count)
            part = (_filled(planes[start:stop], self.chunk),
                    _filled(globals_[start:stop], self.chunk))
            output = (self.model(*part) if sides is None
                      else self.model(*part, sides=_filled(np.asarray(sides)[start:stop],
                                                           self.chunk)))
            self.calls += 1
            self.positions += self.chunk
            pieces.append(_first_rows(output, stop - start))
        if len(pieces) == 1:
            return pieces[0]
        return NetOutput(*(np.concatenate([getattr(piece, name) for piece in pieces])
                           for name in HEADS),
                         sides=None if sides is None else np.concatenate(
                             [piece.sides for piece in pieces]))

    def evaluate_many(self, requests: Sequence[tuple[Engine, GameState]],
                      padded: bool = True) -> list[Evaluation]:
        """One Evaluation per (engine, states) request, in order, each in its own board's
        layout (as from `NetworkEvaluator(net, engine)`).

        `padded`: one network call, the observations of all requests padded to the largest
        board's grid (one call is what a GPU wants); otherwise one call per board side, which
        on a CPU costs less than the padding cells (benchmarks/bench_padding.py: a 4/6/8 mix at
        batch 256 padded into 15 x 15 took 2.1x the time of three one-side calls).
        """
        if not requests:
            return []
        observations = [observe(engine, states) for engine, states in requests]
        sides = [engine.board.side for engine, _ in requests]
        counts = [len(planes) for planes, _ in observations]
        groups = [sorted(set(sides))] if padded else [[side] for side in sorted(set(sides))]
        evaluations: list[Evaluation | None] = [None] * len(requests)
        for group in groups:
            members = [index for index, side in enumerate(sides) if side in group]
            grid = 2 * max(group) - 1
            planes = np.concatenate([pad_planes(observations[i][0], grid) for i in members])
            globals_ = np.concatenate([observations[i][1] for i in members])
            one_side = len(group) == 1
            row_sides = np.repeat([sides[i] for i in members], [counts[i] for i in members])
            output = self._run(planes, globals_, None if one_side else row_sides)
            start = 0
            for index in members:
                rows = np.arange(start, start + counts[index])
                start += counts[index]
                heads = (output.policy_logits, output.value_logits, output.score,
                         output.ownership)
                part = (NetOutput(*(head[rows] for head in heads)) if one_side
                        else output.rows_on_side(rows, sides[index]))
                evaluations[index] = _evaluation(part)
        return evaluations


def steady_chunk(model, engine: Engine) -> int:
    """The first of CHUNK_CANDIDATES at which `model` (an `InferenceModel`, or a callable
    answering like one) computes a batch of copies of one position of `engine`'s board
    identically in every slot on this machine; 1 when none does."""
    rng = np.random.default_rng(0)
    state = engine.new_games(1, 0)
    for _ in range(PROBE_MOVES):
        if bool(state.terminal[0]):
            break
        engine.step(state, engine.random_actions(state, rng))
    planes, globals_ = observe(engine, state)  # [1, P, H, W], [1, G]
    for chunk in CHUNK_CANDIDATES:
        output = model(np.repeat(planes, chunk, axis=0), np.repeat(globals_, chunk, axis=0))
        heads = [getattr(output, name) for name in HEADS]
        if all(np.array_equal(head, np.broadcast_to(head[:1], head.shape)) for head in heads):
            return chunk
    return 1


def _filled(rows: np.ndarray, size: int) -> np.ndarray:
    """`rows` [k, ...] filled up to [size, ...] with copies of its last row."""
    missing = size - int(rows.shape[0])
    if missing == 0:
        return rows
    return np.concatenate([rows, np.repeat(rows[-1:], missing, axis=0)])


def _first_rows(output: NetOutput, count: int) -> NetOutput:
    """The first `count` rows of a numpy NetOutput."""
    return NetOutput(*(getattr(output, name)[:count] for name in HEADS),
                     sides=None if output.sides is None else output.sides[:count])


def _evaluation(output: NetOutput) -> Evaluation:
    return Evaluation(
        policy_logits=np.asarray(output.policy_logits, dtype=np.float32),
        value=np.asarray(output.value, dtype=np.float32),
        score=np.asarray(output.score, dtype=np.float32),
        ownership=np.asarray(output.ownership, dtype=np.float32),
    )
