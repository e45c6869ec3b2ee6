"""A player that searches with an exported model: genmove, analysis, komi and colour choice.

    library = ModelLibrary("side6.pt")            # or ModelLibrary() for the bundled models
    player = ModelPlayer(library, PlayerConfig(simulations=64))
    action = player.genmove(game)                 # game: catena_zero.rules.Game
    analysis = player.analyze(game)               # win rate, score lead, top moves, ownership
    komi = player.choose_komi(game.rules)         # the most balanced komi (first player)
    colour = player.choose_colour(game)           # BLACK/WHITE (second player's choice)

Values from the network are p(win) - p(loss) of the side to move; a win rate is
(value + 1) / 2, so a draw counts as half a win.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field

import numpy as np

from catena_zero.export.evaluator import model_file_evaluator
from catena_zero.export.metadata import ModelFileError
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.search import search
from catena_zero.network import INFERENCE_PRECISIONS, inference_dtype
from catena_zero.play.bundled import ModelLibrary
from catena_zero.rules import BLACK, WHITE, Engine, GameState, GameType, Rules, Track
from catena_zero.selfplay.evaluator import NetworkEvaluator


@dataclass
class PlayerConfig:
    simulations: int = 128  # search simulations per move (and per analysis)
    algorithm: str = "gumbel"  # search algorithm: "gumbel" or "puct"
    noise: bool = False  # root noise (Gumbel sampling / Dirichlet); False = strongest, repeatable
    seed: int = 0  # seed of the search's random generator
    top_moves: int = 5  # moves listed by catena-analyze
    komi_refine: int = 3  # komis around the network's pick re-checked by search (0 = network only)
    exact_endgame_cells: int = 0  # positions with <= this many legal cells solved exactly; 0 off
    leaves_per_call: int = 32  # most leaves a search sends to the network together (1 = one by one)
    seconds_per_move: float = 0.0  # bound on a move's search time, with `simulations`; 0 = none
    threads: int = 0  # CPU threads of the network (torch intra-op); 0 = every core this may use
    precision: str = "auto"  # auto (bfloat16 if the CPU has AMX/AVX512-BF16) | float32 | bfloat16
    rollout_mix: float = 0.5  # w: a leaf's value is (1-w) network + w random playouts; 0 off
    rollout_mix_playouts: int = 4  # random playouts per leaf averaged when rollout_mix > 0 (4:
    #   +10 points against uct:1000 on side 6 for 8-12% fewer simulations a second,
    #   docs/results/2026-12-07-play-rollout-playouts-side6.md)

    def __post_init__(self) -> None:
        if not isinstance(self.simulations, int) or self.simulations < 1:
            raise ValueError(f"simulations must be an int >= 1, got {self.simulations!r}")
        if self.algorithm not in ("gumbel", "puct"):
            raise ValueError(f"algorithm must be gumbel or puct, got {self.algorithm!r}")
        if not isinstance(self.top_moves, int) or self.top_moves < 1:
            raise ValueError(f"top_moves must be an int >= 1, got {self.top_moves!r}")
        if not isinstance(self.komi_refine, int) or self.komi_refine < 0:
            raise ValueError(f"komi_refine must be an int >= 0, got {self.komi_refine!r}")
        if not isinstance(self.threads, int) or isinstance(self.threads, bool) \
                or self.threads < 0:
            raise ValueError(f"threads must be an int >= 0, got {self.threads!r}")
        if not isinstance(self.seconds_per_move, (int, float)) \
                or not 0 <= self.seconds_per_move < float("inf"):
            raise ValueError(f"seconds_per_move must be a number >= 0, got "
                             f"{self.seconds_per_move!r}")
        if self.precision not in INFERENCE_PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(INFERENCE_PRECISIONS)}, "
                             f"got {str(self.precision)[:20]!r}")
        self.search_config()  # SearchConfig checks the search fields, naming them

    def search_config(self, simulations: int | None = None) -> SearchConfig:
        return SearchConfig(
            algorithm=self.algorithm,
            num_simulations=int(simulations or self.simulations),
            gumbel_scale=1.0 if self.noise else 0.0,
            dirichlet_fraction=0.25 if self.noise else 0.0,
            exact_endgame_cells=self.exact_endgame_cells,
            leaves_per_call=self.leaves_per_call,
            rollout_mix=self.rollout_mix,
            rollout_mix_playouts=self.rollout_mix_playouts,
        )

    def thread_count(self) -> int:
        """The torch threads this setting asks for: `threads`, or every core of this process's
        affinity mask."""
        if self.threads > 0:
            return self.threads
        try:
            return max(len(os.sched_getaffinity(0)), 1)
        except AttributeError:  # not Linux
            return max(os.cpu_count() or 1, 1)


@dataclass
class PositionEvaluation:
    """The network's view of one position, from Black's side."""

    winrate_black: float  # (value + 1) / 2 for Black
    score_lead_black: float  # expected final margin, positive = Black ahead
    ownership_black: np.ndarray  # [C] in [-1, 1], +1 = Black owns the cell at the end


@dataclass
class MoveInfo:
    action: int  # action index
    name: str  # "F6" or "button"
    visits: int  # search visits of the move
    prior: float  # network prior of the move
    winrate: float  # mean search value of the move as a win rate for the mover (nan unvisited)


@dataclass
class Analysis:
    """A search of one position; win rate and score lead for the side to move."""

    to_move: int  # BLACK or WHITE
    winrate: float  # search's root value as a win rate for the side to move
    score_lead: float  # network's expected margin for the side to move
    best: int  # the move the search chooses
    moves: list[MoveInfo] = field(default_factory=list)  # top moves by visits
    ownership_black: np.ndarray | None = None  # [C] Black's view


def _winrate(value) -> float | np.ndarray:
    return (np.asarray(value, dtype=np.float64) + 1.0) / 2.0


class ModelPlayer:
    """Searches with the model of the game's board side (see module docstring); one
    size-general model (or a fixed file) plays every side."""

    def __init__(self, library: ModelLibrary, config: PlayerConfig | None = None) -> None:
        self.library = library
        self.config = config if config is not None else PlayerConfig()
        self.rng = np.random.default_rng(self.config.seed)
        self._evaluators: dict[Rules, NetworkEvaluator] = {}
        self.rates: dict[Rules, float] = {}  # measured simulations per second of one search
        self.threads = self.config.thread_count()
        import torch  # the network's threads belong to the player that runs it

        torch.set_num_threads(self.threads)

    def search_line(self) -> str:
        """How this player searches, for start-up lines on stderr."""
        config = self.config
        bound = (f", at most {config.seconds_per_move:g} s a move"
                 if config.seconds_per_move > 0 else "")
        return (f"{config.simulations} simulations{bound}, {config.leaves_per_call} leaves "
                f"per network call, {self.threads} thread{'s' if self.threads != 1 else ''}, "
                f"{self.precision_name()} network")

    def precision_name(self) -> str:
        """The arithmetic `precision` resolves to on this machine: float32 or bfloat16."""
        import torch

        dtype = inference_dtype(torch.device("cpu"), self.config.precision)
        return "float32" if dtype is None else str(dtype).removeprefix("torch.")

    def warm_up(self, rules: Rules) -> float:
        """Load the model of `rules` and search its empty board once, so that the first move
        does not pay for it; returns the seconds taken. The search also measures the
        simulations per second that time-bounded moves plan with."""
        start = time.monotonic()
        evaluator = self.evaluator(rules)
        states = evaluator.engine.new_games(1)
        self._search(rules, states, min(self.config.simulations, 64))
        return time.monotonic() - start

    def track_note(self, rules: Rules) -> str | None:
        """One line when `rules` are outside the model's training (see ModelLibrary.note)."""
        return self.library.note(rules)

    def model_line(self, rules: Rules) -> str | None:
        """Which bundled model plays `rules` and its rating there, when the library chooses
        among bundled models (None for a fixed model file: the person named it)."""
        if self.library.fixed is not None:
            return None
        try:
            return f"{Track.parse(rules)} is played by the {self.library.describe(rules)}"
        except ModelFileError:
            return None

    def evaluator(self, rules: Rules) -> NetworkEvaluator:
        """The evaluate_fn for `rules` (the model that plays its track, run at `precision`;
        ModelFileError if none)."""
        if rules not in self._evaluators:
            self._evaluators[rules] = model_file_evaluator(self.library.get(rules),
                                                           Engine(rules), self.config.precision)
        return self._evaluators[rules]

    def seconds_bound(self, seconds: float | None = None) -> float | None:
        """The tighter of `seconds` (a time manager's) and `seconds_per_move`; None if none."""
        bounds = [value for value in (seconds, self.config.seconds_per_move or None)
                  if value is not None]
        return min(bounds) if bounds else None

    def _search(self, rules: Rules, states: GameState, simulations: int | None = None,
                seconds: float | None = None, on_progress=None, progress_every: float = 0.5):
        """Search `states` (batch B) with the player's settings. A time bound plans the
        simulations from the measured rate of earlier searches of the track and stops at
        the bound whatever the plan (so a slow first move still ends in time)."""
        evaluator = self.evaluator(rules)
        config = self.config.search_config(simulations)
        bound = self.seconds_bound(seconds)
        start = time.monotonic()
        deadline = None
        if bound is not None:
            deadline = start + bound
            rate = self.rates.get(rules)
            if rate is not None:
                planned = max(1, min(config.num_simulations, int(rate * bound)))
                config = dataclasses.replace(config, num_simulations=planned)
        # Without noise a search is repeatable: the random playouts of `rollout_mix` start
        # from the seed each time, so the same position gets the same answer whatever was
        # asked before.
        rng = self.rng if self.config.noise else np.random.default_rng(self.config.seed)
        output = search(evaluator.engine, states, evaluator, config, rng,
                        deadline=deadline, on_progress=on_progress,
                        progress_every=progress_every)
        elapsed = time.monotonic() - start
        done = int(output.visit_counts.sum())
        if int(states.to_move.shape[0]) == 1 and elapsed > 0.005 and done >= 8:
            measured = done / elapsed
            previous = self.rates.get(rules)
            self.rates[rules] = measured if previous is None else 0.5 * (previous + measured)
        return output

    def genmove(self, game, seconds: float | None = None, on_progress=None,
                simulations: int | None = None) -> int:
        """The searched move for the side to move of `game` (a rules.Game), in at most
        `seconds` (and `seconds_per_move`) when given and `simulations` (default: the
        config's); `on_progress(output)` sees the search about twice a second."""
        if game.is_over:
            raise ValueError("the game is over; there is no move to generate")
        output = self._search(game.rules, game.state, simulations, seconds=seconds,
                              on_progress=on_progress)
        return int(output.action[0])

    def evaluate(self, game) -> PositionEvaluation:
        """The network's evaluation of the current position (no search), Black's view."""
        evaluation = self.evaluator(game.rules)(game.state)
        sign = 1.0 if int(game.state.to_move[0]) == BLACK else -1.0
        if game.is_over:
            winner, margin = game.result()
            value = 0.0 if int(winner) not in (BLACK, WHITE) else (
                1.0 if int(winner) == BLACK else -1.0)
            ownership = np.where(game.state.stones[0] == BLACK, 1.0,
                                 np.where(game.state.stones[0] == WHITE, -1.0, 0.0))
            return PositionEvaluation(_winrate(value), float(margin), ownership.astype(np.float32))
        return PositionEvaluation(
            winrate_black=float(_winrate(sign * evaluation.value[0])),
            score_lead_black=float(sign * evaluation.score[0]),
            ownership_black=(sign * evaluation.ownership[0]).astype(np.float32),
        )

    def analyze(self, game, simulations: int | None = None, top: int | None = None,
                seconds: float | None = None) -> Analysis:
        """Search the position; the top moves by visits with priors and win rates."""
        if game.is_over:
            raise ValueError("the game is over; there is nothing to analyse")
        rules = game.rules
        board = rules.board
        output = self._search(rules, game.state, simulations, seconds=seconds)
        root = output.root_evaluation
        visits = np.asarray(output.visit_counts[0])  # [A]
        prior = np.asarray(output.prior[0])  # [A]
        q_values = np.asarray(output.q_values[0], dtype=np.float64)  # [A] mover's view
        legal = np.asarray(game.legal_actions(), dtype=np.int64)
        order = legal[np.lexsort((-prior[legal], -visits[legal]))]
        moves = []
        for action in order[: top or self.config.top_moves]:
            winrate = float(_winrate(q_values[action])) if visits[action] > 0 else float("nan")
            moves.append(MoveInfo(int(action), board.action_name(int(action)),
                                  int(visits[action]), float(prior[action]), winrate))
        to_move = int(game.state.to_move[0])
        sign = 1.0 if to_move == BLACK else -1.0
        return Analysis(
            to_move=to_move,
            winrate=float(_winrate(output.root_value[0])),
            score_lead=float(root.score[0]),
            best=int(output.action[0]),
            moves=moves,
            ownership_black=(sign * root.ownership[0]).astype(np.float32),
        )

    def komi_values(self, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
        """Every komi of the rules' range and the network's value for Black at move 0.

        Returns komis int [K] and values float32 [K] (Black to move, Black's view).
        """
        lo, hi = rules.komi_range
        komis = np.arange(lo, hi + 1, dtype=np.int64)  # [K]
        evaluator = self.evaluator(rules)
        states = evaluator.engine.new_games(len(komis), komi=komis)
        return komis, evaluator(states).value

    def choose_komi(self, rules: Rules) -> int:
        """The first player's komi: the one whose position the model finds most balanced.

        The network values every komi at move 0; the `komi_refine` komis nearest to balance
        are then searched and the one with the root value closest to 0 wins.
        """
        komis, values = self.komi_values(rules)
        if len(komis) == 1:
            return int(komis[0])
        candidates = komis[np.argsort(np.abs(values), kind="stable")[: self.config.komi_refine]]
        if len(candidates) <= 1:
            return int(komis[np.argmin(np.abs(values))])
        evaluator = self.evaluator(rules)
        states = evaluator.engine.new_games(len(candidates), komi=candidates)
        root_values = np.asarray(self._search(rules, states).root_value, dtype=np.float64)
        return int(candidates[np.argmin(np.abs(root_values))])

    def choose_colour(self, game) -> int:
        """The second player's colour (BLACK or WHITE) for the game's komi or opening stone.

        Komi game type: before the first move, Black to move. Nokomi: right after the opening
        stone, White to move (choosing Black is the swap). ValueError elsewhere.
        """
        rules = game.rules
        history = len(game.history)
        if rules.game_type == GameType.DOUBLE:
            raise ValueError("colours are not chosen in the double game type (first player "
                             "plays Black)")
        if rules.game_type == GameType.KOMI and history != 0:
            raise ValueError(f"the colour is chosen before the first move; {history} moves "
                             f"have been played")
        if rules.game_type == GameType.NOKOMI and history != 1:
            raise ValueError(f"in nokomi the colour is chosen right after the opening stone; "
                             f"{history} moves have been played")
        output = self._search(rules, game.state)
        to_move = int(game.state.to_move[0])
        mover_value = float(output.root_value[0])
        return to_move if mover_value >= 0 else 3 - to_move
