"""catena_zero.rules: exact batched numpy Catena engine (every side 2..10, all 9 variants),
the observation planes the network reads, symmetries, notation and a one-game wrapper.

Cross-checked move by move against an independent definitional engine (tests/rules).
"""

from catena_zero.rules.board import BLACK, EMPTY, NO_ACTION, WHITE, Board, get_board, opponent
from catena_zero.rules.engine import Engine, IllegalActionError
from catena_zero.rules.game import Game
from catena_zero.rules.observe import NUM_GLOBALS, NUM_PLANES, observe
from catena_zero.rules.result import GameResult, result_string
from catena_zero.rules.state import GameState
from catena_zero.rules.variants import GameType, Rules, Scoring, Track

__all__ = [
    "EMPTY",
    "BLACK",
    "WHITE",
    "NO_ACTION",
    "opponent",
    "Board",
    "get_board",
    "GameType",
    "Scoring",
    "Rules",
    "Track",
    "Engine",
    "GameState",
    "GameResult",
    "result_string",
    "observe",
    "NUM_PLANES",
    "NUM_GLOBALS",
    "Game",
    "IllegalActionError",
]
