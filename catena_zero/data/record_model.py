"""Game records as values: what a record holds, how it is made from a game, and its replay.

A `GameRecord` is one Catena game (rules, komi, moves with their comments and analyses, the
players and the result); `record_from_game` and `record_from_actions` make one, and `replay`
plays its moves on a fresh Game, checking each colour and legality and the stated result;
`check_fields` checks the fields' types and ranges. Either check raises one `RecordError`
line naming the property or move. The SGF text of a record (writing and parsing) is
catena_zero.data.game_record's, which also exports every name here.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from catena_zero import __version__
from catena_zero.data.sgf_reader import RecordError
from catena_zero.rules import BLACK, EMPTY, WHITE, Game, GameType, Rules

MAX_TEXT_CHARS = 20_000  # a comment or other text value longer than this is refused
MAX_NAME_CHARS = 200  # player names, date, event: one line each
MAX_TOP_MOVES = 64  # entries of an analysis's top-move list
APPLICATION = f"catena_zero:{__version__}"
COLOUR_LETTERS = {BLACK: "B", WHITE: "W"}  # a move's colour as the SGF property B or W


@dataclass(frozen=True)
class MoveAnalysis:
    """What a search said before a move (the `CZ[...]` property); any field may be absent."""

    winrate: float | None = None  # the mover's win probability, 0..1
    score_lead: float | None = None  # expected final margin from the mover's view
    visits: int | None = None  # root visits of the search
    top_moves: tuple[tuple[str, int], ...] = ()  # (move name, visits), best first

    def is_empty(self) -> bool:
        return (self.winrate is None and self.score_lead is None and self.visits is None
                and not self.top_moves)


@dataclass(frozen=True)
class RecordMove:
    """One node after the root: a colour and its action (cell index, or the button)."""

    colour: int  # BLACK or WHITE
    action: int  # cell index 0..C-1, or C for the button
    comment: str = ""
    analysis: MoveAnalysis | None = None


@dataclass
class GameRecord:
    """A whole game: rules (side, game type, scoring), komi, moves and what is known
    about it. `result` is the ruling-6 string ("B+3", "W+0.5", "0") once the game is over,
    None before. `swapped` (nokomi only): whether the second player took the opening
    stone; None while undecided or unknown. The player names are those of the colours at
    the end of the game, after any swap."""

    rules: Rules
    komi: int = 0
    moves: list[RecordMove] = field(default_factory=list)
    result: str | None = None
    black_player: str = ""
    white_player: str = ""
    date: str = ""
    event: str = ""
    game_name: str = ""
    comment: str = ""
    swapped: bool | None = None
    application: str = APPLICATION

    @property
    def actions(self) -> list[int]:
        return [move.action for move in self.moves]

    @property
    def side(self) -> int:
        return self.rules.side


def record_from_game(game: Game, black_player: str = "", white_player: str = "",
                     date: str = "", swapped: bool | None = None,
                     analyses: list[MoveAnalysis | None] | None = None,
                     comments: list[str] | None = None, event: str = "") -> GameRecord:
    """The record of a `Game` as it stands (its result filled in when it is over)."""
    colours = _colours_of(game.rules, game.komi, game.history)
    moves = []
    for index, (colour, action) in enumerate(zip(colours, game.history, strict=True)):
        analysis = analyses[index] if analyses is not None and index < len(analyses) else None
        if analysis is not None and analysis.is_empty():
            analysis = None  # an empty analysis is written as none
        comment = comments[index] if comments is not None and index < len(comments) else ""
        moves.append(RecordMove(colour, int(action), comment or "", analysis))
    return GameRecord(rules=game.rules, komi=int(game.komi), moves=moves,
                      result=game.result_string() if game.is_over else None,
                      black_player=black_player, white_player=white_player, date=date,
                      event=event, swapped=swapped)


def carry_annotations(record: GameRecord, source: GameRecord | None) -> GameRecord:
    """`record` with the annotations of `source` (a record it was loaded from) where the two
    games agree: the root comment, event and game name when the rules and komi are the same,
    and each move's comment and analysis (`CZ`) along the moves both records share from the
    start. Moves played after the load, or after an undo took the game elsewhere, keep their
    own. `record` is changed in place and returned."""
    if source is None or source.rules != record.rules or source.komi != record.komi:
        return record
    for name in ("comment", "event", "game_name"):
        if not getattr(record, name):
            setattr(record, name, getattr(source, name))
    for index, (move, loaded) in enumerate(zip(record.moves, source.moves, strict=False)):
        if (move.colour, move.action) != (loaded.colour, loaded.action):
            break
        record.moves[index] = dataclasses.replace(
            move, comment=move.comment or loaded.comment,
            analysis=move.analysis if move.analysis is not None else loaded.analysis)
    return record


def record_from_actions(rules: Rules, komi: int, actions, **properties) -> GameRecord:
    """The record of a game given by its actions (they are replayed, so must be legal)."""
    game = Game(rules, komi=int(komi))
    for index, action in enumerate(actions):
        try:
            game.play(int(action))
        except ValueError as error:
            raise RecordError(f"move {index + 1}: {error}") from error
    return record_from_game(game, **properties)


def _colours_of(rules: Rules, komi: int, actions) -> list[int]:
    game = Game(rules, komi=komi)
    colours = []
    for action in actions:
        colours.append(game.to_move)
        game.play(int(action))
    return colours


# ----- checking --------------------------------------------------------------------------


def check_fields(record: GameRecord) -> None:
    """Field types and ranges of a record (RecordError naming the field)."""
    if not isinstance(record.rules, Rules):
        raise RecordError(f"rules must be a Rules, got {type(record.rules).__name__}")
    try:
        record.rules.validate_komi(record.komi)
    except ValueError as error:
        raise RecordError(f"KM: {error}") from error
    for name in ("black_player", "white_player", "date", "event", "game_name", "application"):
        _check_simple_text(getattr(record, name), name)
    _check_text(record.comment, "comment")
    if record.swapped is not None and record.rules.game_type != GameType.NOKOMI:
        raise RecordError("SW: a swap exists only in the nokomi game type")
    if record.swapped is not None and not record.moves:
        raise RecordError("SW: the swap is decided after the opening stone, but there is no move")
    for index, move in enumerate(record.moves):
        if move.colour not in (BLACK, WHITE):
            raise RecordError(f"move {index + 1}: colour must be BLACK or WHITE")
        _check_text(move.comment, f"move {index + 1} comment")
        if move.analysis is not None:
            check_analysis(move.analysis, record.rules, f"move {index + 1} CZ")


def _check_simple_text(text, what: str) -> None:
    if not isinstance(text, str):
        raise RecordError(f"{what} must be text")
    if len(text) > MAX_NAME_CHARS:
        raise RecordError(f"{what} is longer than {MAX_NAME_CHARS} characters")
    if any(ch < " " or ch == "\x7f" or "\ud800" <= ch <= "\udfff" for ch in text):
        raise RecordError(f"{what} must be one line without control characters")


def _check_text(text, what: str) -> None:
    if not isinstance(text, str):
        raise RecordError(f"{what} must be text")
    if len(text) > MAX_TEXT_CHARS:
        raise RecordError(f"{what} is longer than {MAX_TEXT_CHARS} characters")
    if any((ch < " " and ch not in "\n\t") or ch == "\x7f" or "\ud800" <= ch <= "\udfff"
           for ch in text):
        raise RecordError(f"{what} holds a control character or a lone surrogate")


def check_analysis(analysis: MoveAnalysis, rules: Rules, what: str) -> None:
    for name in ("winrate", "score_lead"):
        value = getattr(analysis, name)
        if value is not None and (isinstance(value, bool) or not math.isfinite(float(value))):
            raise RecordError(f"{what}: {name} must be a finite number, got {value!r}")
    if analysis.winrate is not None and not 0.0 <= float(analysis.winrate) <= 1.0:
        raise RecordError(f"{what}: win rate must be in 0..1, got {analysis.winrate!r}")
    if analysis.visits is not None and not 0 <= int(analysis.visits) < 10**9:
        raise RecordError(f"{what}: visits must be in 0..999999999, got {analysis.visits!r}")
    if len(analysis.top_moves) > MAX_TOP_MOVES:
        raise RecordError(f"{what}: more than {MAX_TOP_MOVES} top moves")
    for name, visits in analysis.top_moves:
        try:
            rules.board.parse_action(name)
        except ValueError as error:
            raise RecordError(f"{what}: top move {name!r}: {error}") from error
        if name != name.strip().upper() and name != "button":
            raise RecordError(f"{what}: top move {name!r} must be written as "
                              f"{rules.board.action_name(rules.board.parse_action(name))}")
        if not 0 <= int(visits) < 10**9:
            raise RecordError(f"{what}: top move {name} visits must be in 0..999999999")


# ----- replaying -------------------------------------------------------------------------


def replay(record: GameRecord, upto: int | None = None) -> Game:
    """Play the record's moves (the first `upto` of them when given) on a fresh Game,
    checking each colour and legality; with all moves played, a stated result must be the
    game's. Returns the Game; RecordError naming the move and the reason otherwise."""
    try:
        game = Game(record.rules, komi=record.komi)
    except ValueError as error:
        raise RecordError(f"KM: {error}") from error
    count = len(record.moves) if upto is None else upto
    if not 0 <= count <= len(record.moves):
        raise RecordError(f"move number {upto} is outside 0..{len(record.moves)}")
    board = record.rules.board
    for index, move in enumerate(record.moves[:count]):
        number = index + 1
        if (not isinstance(move.action, int | np.integer)
                or not 0 <= move.action < board.num_actions):
            raise RecordError(f"move {number}: action {move.action!r} is not on the board")
        name = board.action_name(int(move.action))
        if game.is_over:
            raise RecordError(f"move {number} ({COLOUR_LETTERS.get(move.colour, '?')}[{name}]):"
                              f" the game is already over")
        if move.colour != game.to_move:
            raise RecordError(f"move {number} ({COLOUR_LETTERS.get(move.colour, '?')}[{name}]):"
                              f" it is {'Black' if game.to_move == BLACK else 'White'}'s turn")
        if int(move.action) not in game.legal_actions():
            raise RecordError(f"move {number} ({COLOUR_LETTERS[move.colour]}[{name}]) is "
                              f"illegal: {_why_illegal(game, int(move.action))}")
        game.play(int(move.action))
    if upto is None and record.result is not None:
        if not game.is_over:
            raise RecordError(f"RE[{record.result}]: the game is not over after "
                              f"{len(record.moves)} moves")
        actual = game.result_string()
        if actual != record.result:
            raise RecordError(f"RE[{record.result}]: the moves give {actual}")
    return game


def _why_illegal(game: Game, action: int) -> str:
    board = game.board
    if action == board.button_action:
        if not game.rules.has_button:
            return "the double game type has no button"
        if int(game.state.button[0]) != EMPTY:
            return "the button is already taken"
        if game.rules.game_type == GameType.NOKOMI and not game.history:
            return "the first move of nokomi must place a stone"
        return "the button cannot be taken now"
    if int(game.state.stones[0, action]) != EMPTY:
        return "the cell is occupied"
    if bool(game.state.legal_cells[0, action]):
        return "no legal second stone of the turn would follow it"
    return "the stone would not leave a ribbon (a branch or a ring)"


def same_position(first: Game, second: Game) -> bool:
    """Whether two games stand at the same position (stones, turn, button, komi, end)."""
    return (first.rules == second.rules and first.komi == second.komi
            and np.array_equal(first.state.stones, second.state.stones)
            and first.to_move == second.to_move and first.is_over == second.is_over
            and int(first.state.button[0]) == int(second.state.button[0])
            and first.stones_left == second.stones_left)
