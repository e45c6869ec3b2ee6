"""catena_zero.rules: exact batched numpy Catena engine (every side 2..10, all 9 variants).

Status: READY since 14:18 UTC (full API of docs/ARCHITECTURE.md, exact, cross-checked against
the reference engine in tests/rules); optimised since behind the same, unchanged API.
"""

from catena_zero.rules.board import BLACK, EMPTY, NO_ACTION, WHITE, Board, get_board, opponent
from catena_zero.rules.engine import Engine, IllegalActionError
from catena_zero.rules.game import Game
from catena_zero.rules.observe import NUM_GLOBALS, NUM_PLANES, observe
from catena_zero.rules.result import GameResult, result_string
from catena_zero.rules.state import GameState
from catena_zero.rules.variants import GameType, Rules, Scoring

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
