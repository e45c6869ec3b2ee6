"""catena_zero.rules: exact batched numpy Catena engine (every side 2..10, all 9 variants).

Status (14:18 UTC): READY. The full API of docs/ARCHITECTURE.md is implemented, exact, and
passes tests/rules (own tests + the reference cross-check); speed work continues behind the
same API, which will not change.
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
