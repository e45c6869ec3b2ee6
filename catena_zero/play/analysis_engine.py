"""A JSON-lines analysis engine: many positions searched together (`catena-zero analysis`).

    engine = AnalysisEngine(ModelLibrary(), AnalysisConfig(visits=64))
    engine.run(sys.stdin, sys.stdout)          # one JSON query per line in, answers out
    answers = engine.handle_lines([line, ...]) # one batch, answers as dicts

The protocol (docs/reference/analysis.md) follows KataGo's analysis engine: a query names
the rules, the komi, the moves from the empty board and the turns to analyse; each analysed
turn gets one answer line with `moveInfos`, `rootInfo` and optionally `ownership` and
`policy`. Win rates, score leads and ownership are from the side to move's view unless the
query asks `perspective: "black"` or `"white"`; the answer says which (`perspective`).

Batching: the lines that are waiting on the input (up to `batch_size`) are read together,
and all their positions of one rules track (side, game type, scoring) are searched in one
batched search (`catena_zero.mcts.search`), komi and visit budget per position. One search
runs one engine, so positions of different tracks go to one search per track. The network
is called on batches of one fixed shape (`chunk` of `catena_zero.selfplay.evaluator`), so an
answer does not depend on the lines batched with it.

Input is hostile until proven otherwise: lines are read as bytes in bounded pieces and
checked before they are parsed (`catena_zero.play.analysis_input`: length, UTF-8, nesting,
digits); a refused line gets one error line and the engine goes on. The reader stays at most
MAX_QUEUED_LINES lines ahead of the searches, and one line's work is bounded: `max_visits`
per position and `max_time` seconds per search (docs/reference/analysis.md, "Limits").

At the end of input the engine answers every line it has read (`end_of_input: finish`, as
KataGo does), or with `end_of_input: stop` stops the searches at once: each position in
progress or still queued is answered from its search so far (at least one visit), with a
`warning` saying so, and `run` returns within about STOP_CHECK_SECONDS plus one network call.
"""

from __future__ import annotations

import json
import queue
import time
from dataclasses import dataclass

import numpy as np

import catena_zero
from catena_zero.export.evaluator import model_file_evaluator
from catena_zero.export.model_file import ModelFileError
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.search import SearchOutput, search
from catena_zero.mcts.tree import ROOT_INDEX, UNVISITED
from catena_zero.network import INFERENCE_PRECISIONS
from catena_zero.play.analysis_input import END, LineQueue, OverlongLine
from catena_zero.play.analysis_protocol import (
    Action,
    Query,
    QueryError,
    QueryLimits,
    finite,
    parse_line,
    positions,
)
from catena_zero.play.bundled import ModelLibrary
from catena_zero.rules import BLACK, EMPTY, WHITE, Engine, GameState, Rules
from catena_zero.selfplay.evaluator import STEADY, NetworkEvaluator

PROTOCOL_VERSION = 1
END_OF_INPUT = ("finish", "stop")
STOP_CHECK_SECONDS = 0.25  # how often a search looks for the end of input (end_of_input: stop)
COLOUR_NAMES = {BLACK: "black", WHITE: "white"}


@dataclass
class AnalysisConfig:
    """Settings of the analysis engine (`configs/analysis.yaml`)."""

    visits: int = 64  # search visits of a query that gives no maxVisits
    max_visits: int = 5_000  # the largest maxVisits a query may ask (larger: an error line)
    max_time: float = 60.0  # the largest maxTime a query may ask, seconds (larger: an error line)
    batch_size: int = 16  # most query lines read together and searched in one batch
    max_positions: int = 256  # most positions in one search call (bounds the trees' memory)
    batch_wait_ms: float = 5.0  # after a line arrives, wait this long for more to batch
    threads: int = 0  # CPU threads of the network (torch); 0 = torch's default
    algorithm: str = "puct"  # search algorithm: "puct" (visits follow preference) or "gumbel"
    seed: int = 0  # seed of the search's random generator (the search has no noise)
    pv_length: int = 15  # most moves in a principal variation
    exact_endgame_cells: int = 0  # positions with <= this many legal cells solved exactly; 0 off
    leaves_per_call: int = 32  # most leaves each position's search sends to the network together
    end_of_input: str = "finish"  # finish: answer every line read; stop: cut searches short
    precision: str = "auto"  # auto (bfloat16 if the CPU has AMX/AVX512-BF16) | float32 | bfloat16

    def __post_init__(self) -> None:
        for name in ("visits", "max_visits", "batch_size", "max_positions", "pv_length"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if self.visits > self.max_visits:
            raise ValueError(f"visits={self.visits} exceeds max_visits="
                             f"{self.max_visits}")
        if not isinstance(self.threads, int) or self.threads < 0:
            raise ValueError(f"threads must be an int >= 0, got {self.threads!r}")
        if not 0 < self.max_time < float("inf"):
            raise ValueError(f"max_time must be a number of seconds > 0, got "
                             f"{self.max_time!r}")
        if self.end_of_input not in END_OF_INPUT:
            raise ValueError(f"end_of_input must be finish or stop, got "
                             f"{str(self.end_of_input)[:20]!r}")
        if not self.batch_wait_ms >= 0:
            raise ValueError(f"batch_wait_ms must be >= 0, got {self.batch_wait_ms!r}")
        if self.algorithm not in ("puct", "gumbel"):
            raise ValueError(f"algorithm must be puct or gumbel, got "
                             f"{self.algorithm!r}")
        if self.precision not in INFERENCE_PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(INFERENCE_PRECISIONS)}, "
                             f"got {str(self.precision)[:20]!r}")
        self.search_config(1)  # SearchConfig checks exact_endgame_cells, naming the field

    def search_config(self, simulations: int) -> SearchConfig:
        return SearchConfig(algorithm=self.algorithm, num_simulations=int(simulations),
                            gumbel_scale=0.0, dirichlet_fraction=0.0,
                            exact_endgame_cells=self.exact_endgame_cells,
                            leaves_per_call=self.leaves_per_call)

    @property
    def limits(self) -> QueryLimits:
        return QueryLimits(default_visits=self.visits, max_visits=self.max_visits,
                           max_time=float(self.max_time))


class _SearchStopped(Exception):
    """Raised out of a search's progress report at the end of input (end_of_input: stop),
    once the answers of the search so far are made."""


@dataclass
class _Job:
    """One position to analyse: turn `turn` of `query`; `answer` once it is known."""

    query: Query
    turn: int
    state: GameState  # batch of one
    answer: dict | None = None


class AnalysisEngine:
    """Answers batches of query lines (see the module docstring)."""

    def __init__(self, library: ModelLibrary, config: AnalysisConfig | None = None) -> None:
        self.library = library
        self.config = config if config is not None else AnalysisConfig()
        self.rng = np.random.default_rng(self.config.seed)
        self._evaluators: dict[Rules, NetworkEvaluator] = {}
        # Where partial answers (reportDuringSearchEvery) go as they are made: `run` writes
        # them at once; without a sink, `handle_lines` returns them before the final answers.
        self.partial_sink = None
        self._partials: list[dict] = []
        # Set by `run` at the end of input when end_of_input is stop: searches then stop.
        self._input_ended = None

    def evaluator(self, rules: Rules) -> NetworkEvaluator:
        """The evaluate_fn of `rules`' track (ModelFileError when no model plays its side);
        its network calls have one fixed shape, so no answer depends on its batch."""
        if rules not in self._evaluators:
            self._evaluators[rules] = model_file_evaluator(
                self.library.get(rules), Engine(rules), self.config.precision, chunk=STEADY)
        return self._evaluators[rules]

    # ---------------------------------------------------------------------------- batches
    def handle_lines(self, lines: list[str | bytes | OverlongLine]) -> list[dict]:
        """Answer one batch of lines (text, or bytes that must be UTF-8), in line order: per
        query one answer per analysed turn, per bad line one error, per action its reply."""
        replies: list[list[dict] | list[_Job]] = []
        jobs: list[_Job] = []
        pending: dict[str, list[_Job]] = {}
        for line in lines:
            item = None
            try:
                item = parse_line(line, self.config.limits)
                if isinstance(item, Action):
                    replies.append([self._action(item, pending)])
                    continue
                self._check_model(item)
                query_jobs = self._jobs(item)
            except QueryError as error:
                replies.append([error.to_json()])
                continue
            except (ValueError, RecursionError) as error:
                # A bad value no check above caught: one error line, and the engine goes on.
                query_id = item.id if isinstance(item, Query) else None
                replies.append([QueryError(f"line refused: {error}", None,
                                           query_id).to_json()])
                continue
            pending.setdefault(item.id, []).extend(query_jobs)
            jobs.extend(query_jobs)
            replies.append(query_jobs)
        self._partials = []
        self._analyse([job for job in jobs if job.answer is None])
        out: list[dict] = self._partials
        for reply in replies:
            out.extend(item.answer if isinstance(item, _Job) else item for item in reply)
        return out

    def _check_model(self, query: Query) -> None:
        try:
            self.evaluator(query.rules)
        except ModelFileError as error:
            raise QueryError(f"no model for track {query.track}: {error}", "side",
                             query.id) from None

    def _jobs(self, query: Query) -> list[_Job]:
        engine = self.evaluator(query.rules).engine
        states = positions(engine, query.komi, query.moves, query.analyze_turns)
        return [_Job(query, turn, states.take([row]))
                for row, turn in enumerate(query.analyze_turns)]

    def _action(self, action: Action, pending: dict[str, list[_Job]]) -> dict:
        """Reply to a control line; terminate drops the named queries of this batch (their
        turns answer `noResults`)."""
        reply = {"id": action.id, "action": action.action}
        if action.action == "query_version":
            reply.update(version=catena_zero.__version__, protocol=PROTOCOL_VERSION)
        elif action.action in ("terminate", "terminate_all"):
            names = [action.terminate_id] if action.action == "terminate" else list(pending)
            if action.terminate_id is not None:
                reply["terminateId"] = action.terminate_id
            for name in names:
                for job in pending.get(name, []):
                    if job.answer is None and (action.turn_numbers is None
                                               or job.turn in action.turn_numbers):
                        job.answer = {"id": job.query.id, "turnNumber": job.turn,
                                      "isDuringSearch": False, "noResults": True}
        return reply

    def _analyse(self, jobs: list[_Job]) -> None:
        """Search every live position, one batched search per track (chunks of at most
        `max_positions`); finished positions are answered from their result."""
        groups: dict[tuple[Rules, float | None], list[_Job]] = {}
        for job in jobs:
            if bool(job.state.terminal[0]):
                job.answer = self._finished_answer(job)
            else:  # one search per track and time bound: a deadline is the whole search's
                groups.setdefault((job.query.rules, job.query.max_time), []).append(job)
        size = self.config.max_positions
        for (rules, max_time), group in groups.items():
            for start in range(0, len(group), size):
                self._search_chunk(rules, group[start: start + size], max_time)

    def _search_chunk(self, rules: Rules, jobs: list[_Job], max_time: float | None) -> None:
        evaluator = self.evaluator(rules)
        states = GameState.concatenate([job.state for job in jobs])  # [B]
        budget = np.array([job.query.max_visits for job in jobs], dtype=np.int64)  # [B]
        started = time.monotonic()
        deadline = None if max_time is None else started + max_time
        ended = self._input_ended
        if ended is not None and ended.is_set():
            deadline = started  # the input is over: one round of simulations, then answers
        every = [job.query.report_every for job in jobs if job.query.report_every is not None]
        if ended is not None:
            every.append(STOP_CHECK_SECONDS)
        due = {id(job): started + job.query.report_every for job in jobs
               if job.query.report_every is not None}

        def report(partial: SearchOutput) -> None:
            """Partial answers of the jobs whose reporting interval has come round; at the
            end of input (end_of_input: stop), every job's answer so far, then a stop."""
            now = time.monotonic()
            if ended is not None and ended.is_set():
                scores = self._child_scores(evaluator, states, partial)
                for row, job in enumerate(jobs):
                    job.answer = self._answer(job, row, partial, scores[row])
                raise _SearchStopped
            rows = [row for row, job in enumerate(jobs)
                    if id(job) in due and now >= due[id(job)]]
            if not rows:
                return
            scores = self._child_scores(evaluator, states, partial)
            for row in rows:
                job = jobs[row]
                due[id(job)] = now + job.query.report_every
                answer = self._answer(job, row, partial, scores[row])
                answer["isDuringSearch"] = True
                if self.partial_sink is not None:
                    self.partial_sink(answer)
                else:
                    self._partials.append(answer)

        try:
            output = search(evaluator.engine, states, evaluator,
                            self.config.search_config(int(budget.max())), self.rng,
                            simulations=budget, deadline=deadline,
                            progress_every=min(every) if every else 1.0,
                            on_progress=report if every else None)
        except _SearchStopped:
            return  # report() answered every job from the search so far
        child_scores = self._child_scores(evaluator, states, output)  # [B, A] mover's view
        for row, job in enumerate(jobs):
            job.answer = self._answer(job, row, output, child_scores[row])

    # ----------------------------------------------------------------------------- answers
    def _child_scores(self, evaluator, states: GameState, output: SearchOutput) -> np.ndarray:
        """The expected margin after each visited root move, the root mover's view; one
        network call for all of them (the tree keeps values, not scores).  # [B, A]"""
        tree = output.tree
        children = tree.children[:, ROOT_INDEX]  # [B, A]
        rows, actions = np.nonzero((output.visit_counts > 0) & (children != UNVISITED))
        scores = np.full(children.shape, np.nan)
        if rows.size == 0:
            return scores
        child_states = tree.states.take(tree.flat_index(rows, children[rows, actions]))
        margin = np.zeros(rows.size)  # the child mover's view
        ended = np.asarray(child_states.terminal, dtype=bool)
        if ended.any():
            result = evaluator.engine.result(child_states.take(np.flatnonzero(ended)))
            margin[ended] = result.margin  # Black's view; made the root mover's below
        live = np.flatnonzero(~ended)
        if live.size:
            margin[live] = evaluator(child_states.take(live)).score
        root_mover = states.to_move[rows]
        same = np.where(ended, root_mover == BLACK, child_states.to_move == root_mover)
        scores[rows, actions] = np.where(same, margin, -margin)
        return scores

    def _answer(self, job: _Job, row: int, output: SearchOutput, scores: np.ndarray) -> dict:
        query, board = job.query, job.query.rules.board
        mover = int(job.state.to_move[0])
        sign = _view_sign(query.perspective, mover)
        tree = output.tree
        visits = output.visit_counts[row].astype(np.int64)  # [A]
        prior = output.prior[row]  # [A]
        value_sums = tree.edge_value_sums[row, ROOT_INDEX]  # [A] mover's view
        visited = np.flatnonzero(visits > 0)
        order = visited[np.lexsort((-prior[visited], -visits[visited]))]
        move_infos = []
        for rank, action in enumerate(order):
            info = {
                "move": board.action_name(int(action)),
                "visits": int(visits[action]),
                "prior": finite(prior[action]),
                "winrate": finite(_winrate(sign * value_sums[action] / visits[action])),
                "scoreLead": finite(sign * scores[action], 4),
                "order": rank,
            }
            if query.include["pv"]:
                info["pv"] = self._pv(tree, row, int(action), board)
            move_infos.append(info)
        root = output.root_evaluation
        weights = visits[visited]
        root_score = (float(np.dot(weights, scores[visited]) / weights.sum()) if visited.size
                      and np.isfinite(scores[visited]).all() else float(root.score[row]))
        answer = {
            "id": query.id,
            "turnNumber": job.turn,
            "isDuringSearch": False,
            "perspective": query.perspective,
            "moveInfos": move_infos,
            "rootInfo": {
                "currentPlayer": COLOUR_NAMES[mover],
                "winrate": finite(_winrate(sign * output.root_value[row])),
                "scoreLead": finite(sign * root_score, 4),
                "visits": int(visits.sum()),
                "rawWinrate": finite(_winrate(sign * root.value[row])),
                "rawScoreLead": finite(sign * root.score[row], 4),
                "stonesLeft": int(job.state.stones_left[0]),
                "gameOver": False,
            },
        }
        if query.include["ownership"]:
            answer["ownership"] = _by_cell(board, sign * root.ownership[row])
        if query.include["policy"]:
            legal = np.flatnonzero(tree.legal[row, ROOT_INDEX])
            answer["policy"] = {board.action_name(int(a)): finite(prior[a]) for a in legal}
        self._note(answer, query)
        searched = answer["rootInfo"]["visits"]
        if (self._input_ended is not None and self._input_ended.is_set()
                and searched < query.max_visits):
            _warn(answer, f"the input ended: the search stopped after {searched} of "
                          f"{query.max_visits} visits (end_of_input: stop)")
        return answer

    def _pv(self, tree, row: int, action: int, board) -> list[str]:
        """The most visited line from the root through `action` (at most pv_length moves)."""
        line = [board.action_name(action)]
        node = int(tree.children[row, ROOT_INDEX, action])
        while node != UNVISITED and len(line) < self.config.pv_length:
            edge_visits = tree.edge_visits[row, node]
            if edge_visits.max(initial=0) == 0:
                break
            best = int(np.argmax(edge_visits))
            line.append(board.action_name(best))
            node = int(tree.children[row, node, best])
        return line

    def _finished_answer(self, job: _Job) -> dict:
        """A finished position: its exact result, no search."""
        query, board = job.query, job.query.rules.board
        engine = self.evaluator(query.rules).engine
        result = engine.result(job.state)
        mover = int(job.state.to_move[0])
        sign = _view_sign(query.perspective, mover)
        mover_sign = 1.0 if mover == BLACK else -1.0
        winner = int(result.winner[0])
        value = 0.0 if winner == EMPTY else (1.0 if winner == mover else -1.0)
        margin = mover_sign * float(result.margin[0])
        answer = {
            "id": query.id, "turnNumber": job.turn, "isDuringSearch": False,
            "perspective": query.perspective, "moveInfos": [],
            "rootInfo": {"currentPlayer": COLOUR_NAMES[mover],
                         "winrate": finite(_winrate(sign * value)),
                         "scoreLead": finite(sign * margin, 4), "visits": 0,
                         "rawWinrate": finite(_winrate(sign * value)),
                         "rawScoreLead": finite(sign * margin, 4),
                         "stonesLeft": int(job.state.stones_left[0]), "gameOver": True},
        }
        if query.include["ownership"]:
            stones = job.state.stones[0]
            black_view = np.where(stones == BLACK, 1.0, np.where(stones == WHITE, -1.0, 0.0))
            answer["ownership"] = _by_cell(board, sign * mover_sign * black_view)
        if query.include["policy"]:
            answer["policy"] = {}
        self._note(answer, query)
        return answer

    def _note(self, answer: dict, query: Query) -> None:
        # which model answered: the file that plays the query's track
        answer["model"] = self.library.get(query.rules).path.name
        note = self.library.note(query.rules)
        if note:
            _warn(answer, note)

    # ---------------------------------------------------------------------------- streams
    def run(self, input_stream, output_stream) -> None:
        """Answer lines from `input_stream` until end of input; the lines waiting together
        (at most `batch_size`) form one batch. Each answer is one line, flushed per batch.

        A text stream with a `buffer` (sys.stdin) is read as bytes, so a line that is not
        UTF-8 is refused as such rather than misread. The reader runs at most
        MAX_QUEUED_LINES lines ahead (analysis_input.LineQueue)."""
        lines = LineQueue(getattr(input_stream, "buffer", input_stream))
        wait = self.config.batch_wait_ms / 1000.0

        def write_partial(answer: dict) -> None:
            output_stream.write(json_line(answer) + "\n")
            output_stream.flush()

        self.partial_sink = write_partial
        self._input_ended = lines.ended if self.config.end_of_input == "stop" else None
        try:
            self._serve(lines, output_stream, wait)
        finally:
            self._input_ended = None

    def _serve(self, lines: LineQueue, output_stream, wait: float) -> None:
        ended = False
        while not ended:
            first = lines.get()
            if first is END:
                break
            batch = [first]
            while len(batch) < self.config.batch_size:
                try:
                    line = lines.get(timeout=wait)
                except queue.Empty:
                    break
                if line is END:
                    ended = True
                    break
                batch.append(line)
            for answer in self.handle_lines(batch):
                output_stream.write(json_line(answer) + "\n")
            output_stream.flush()


def json_line(answer: dict) -> str:
    """One answer as a line of ASCII JSON. The protocol checks keep text that is not valid
    Unicode (lone surrogates) out of answers; should one get through, an error line is
    written instead, since its JSON escape would not decode to text in a strict reader."""
    try:
        json.dumps(answer, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        answer = {"id": None, "error": "an answer held text that is not valid Unicode",
                  "field": None}
    return json.dumps(answer, separators=(",", ":"))


def _warn(answer: dict, text: str) -> None:
    """Add `text` to the answer's `warning` (one string; several are joined by '; ')."""
    answer["warning"] = f"{answer['warning']}; {text}" if answer.get("warning") else text


def _view_sign(perspective: str, mover: int) -> float:
    """+1 when the answer's perspective is the side to move's, -1 when it is the other's."""
    if perspective == "side to move":
        return 1.0
    return 1.0 if (BLACK if perspective == "black" else WHITE) == mover else -1.0


def _winrate(value) -> float:
    return (float(value) + 1.0) / 2.0


def _by_cell(board, values: np.ndarray) -> dict[str, float]:
    return {board.cell_name(cell): finite(values[cell], 4) for cell in range(board.num_cells)}

