"""One game between a person and the model, shared by the terminal and the web interface.

The person and the model each control a colour. The session plays the model's turns
(two stones per turn in the double game type), the nokomi swap (after the opening stone
the second player may take over Black), the komi and colour choices the model makes
when asked to, and undo back to the person's previous turn.

Example::

    session = PlaySession(player, Rules(side=4), komi=0, human_colour="black")
    session.human_move("d4")        # the person plays, the model answers
    session.model_moves             # ["C3"]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from catena_zero.data.game_record import GameRecord, carry_annotations, record_from_game, replay
from catena_zero.komi.fair import komi_for_play
from catena_zero.play.time_control import think_level
from catena_zero.rules import BLACK, WHITE, GameState, GameType, Rules
from catena_zero.rules import Game as _Game
from catena_zero.rules.explain import Claim, claims_of_actions, illegal_reason

COLOUR_NAMES = {BLACK: "black", WHITE: "white"}
COLOUR_CODES = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
HUMAN_NAME = "human"  # the person's name in a saved record (PB or PW)
MODEL_NAME = "catena_zero"  # the model's


class SessionError(ValueError):
    """A request the session refuses (illegal move, out of turn, nothing to undo).
    `reason` is the rule an illegal move breaks (rules/explain.py), else None."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class TurnClaims:
    """The ribbons one action claimed, and who played it."""

    actor: str  # "you" or "the model"
    move: str  # the action's name, e.g. "C8"
    claims: list[Claim]


def parse_colour(text: str) -> int:
    """'b' / 'black' / 'w' / 'white' (any case) -> BLACK / WHITE; SessionError otherwise."""
    colour = COLOUR_CODES.get(str(text).strip().lower())
    if colour is None:
        raise SessionError(f"unknown colour {text!r}; use black or white")
    return colour


@dataclass
class Event:
    """One thing that happened in the session, for undo."""

    actor: str  # "human" or "model"
    kind: str  # "move" or "swap"
    action: int = -1  # the action, for moves


@dataclass
class PlaySession:
    """A game of `rules` at `komi` between a person (`human_colour`) and `player`.

    `human_colour` is "black", "white" or "auto"; "auto" lets the model, as the second
    player, choose its colour for this komi (komi game type only; otherwise black).
    `komi` None lets the model, as the first player, choose the most balanced komi.
    """

    player: object  # ModelPlayer (genmove, choose_komi, choose_colour, evaluate)
    rules: Rules
    komi: int | None = 0
    human_colour: str = "black"
    events: list[Event] = field(default_factory=list)
    model_moves: list[str] = field(default_factory=list)  # the model's last reply
    notes: list[str] = field(default_factory=list)  # what the model decided (komi, colour, swap)
    # the record the game was loaded from: its comments and analyses are kept when saving
    loaded_record: GameRecord | None = None
    think: str | None = None  # think-time level of the model's moves (model_player.THINK_LEVELS)
    # called with the search so far while the model thinks (a SearchOutput; read, do not keep)
    progress: Callable[[Any], None] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.think is not None:
            think_level(self.think)  # ValueError naming the levels
        if self.komi is None:
            choice = komi_for_play(self.player, self.rules)
            self.komi = choice.komi
            self.notes.append(f"the model chose {choice.note}")
        self.game = _Game(self.rules, komi=int(self.komi))
        if str(self.human_colour).lower() == "auto":
            if self.rules.game_type == GameType.KOMI:
                model_colour = int(self.player.choose_colour(self.game))
                self.human = 3 - model_colour
                self.notes.append(f"the model chose {COLOUR_NAMES[model_colour]}")
            else:
                self.human = BLACK
        else:
            self.human = parse_colour(self.human_colour)
        self.model_reply()

    # -- queries -----------------------------------------------------------------------

    @property
    def model_colour(self) -> int:
        return 3 - self.human

    def human_to_move(self) -> bool:
        return not self.game.is_over and self.game.to_move == self.human

    def swap_available(self) -> bool:
        """Whether the person, as the second player of nokomi, may swap now."""
        return self._swap_point() and self.human == WHITE

    def _swap_point(self) -> bool:
        # Right after the opening stone, before anyone swapped or played on.
        return (self.rules.game_type == GameType.NOKOMI and len(self.game.history) == 1
                and bool(self.events) and self.events[-1].kind == "move")

    def can_undo(self) -> bool:
        return any(event.actor == "human" for event in self.events)

    # -- actions -----------------------------------------------------------------------

    def human_move(self, move: str | int,
                   played: Callable[[], None] | None = None) -> list[str]:
        """Play the person's move (cell name, "button"/"pass" or action) and the model's reply.

        Nothing changes and SessionError is raised when the game is over, it is not the
        person's turn or the move is illegal; ValueError when the move is malformed.
        `played`, if given, is called with the person's move on the board, before the model
        searches (the web server shows that position meanwhile). If the reply fails, the
        person's move is taken back too, so the session is as before. Returns the model's
        reply moves.
        """
        if self.game.is_over:
            raise SessionError("the game is over; start a new game")
        if not self.human_to_move():
            raise SessionError("it is not your turn")
        board = self.rules.board
        # A malformed move is a plain ValueError, an illegal one a SessionError.
        action = self.game.parse_action(move)
        if action not in self.game.legal_actions():
            reason = illegal_reason(self.game, action)
            raise SessionError(f"illegal move {board.action_name(action)}: {reason}", reason)
        mark = self._mark()
        if self._swap_point():
            self.notes.append("you did not swap: you play on as White")
        self.game.play(action)
        self.events.append(Event("human", "move", action))
        return self._reply_or_roll_back(mark, played)

    def human_swap(self, played: Callable[[], None] | None = None) -> list[str]:
        """The person, second player of nokomi, takes Black (the opening stone); `played`
        and a failing reply as in human_move."""
        if not self.swap_available() or not self.human_to_move():
            raise SessionError("no swap is possible now (only the second player of nokomi, "
                               "right after the opening stone)")
        mark = self._mark()
        self.human = BLACK
        self.events.append(Event("human", "swap"))
        self.notes.append("you swapped: you take the opening stone and play Black")
        return self._reply_or_roll_back(mark, played)

    def _mark(self) -> tuple[int, int, list[str], list[str]]:
        return len(self.events), self.human, list(self.model_moves), list(self.notes)

    def _reply_or_roll_back(self, mark, played: Callable[[], None] | None) -> list[str]:
        try:
            if played is not None:
                played()
            return self.model_reply()
        except BaseException:
            # A failing model (or an interrupt) must not leave the game half-answered,
            # with the model to move and nobody to play: back to before the person's turn.
            count, human, model_moves, notes = mark
            while len(self.events) > count:
                self._revert(self.events.pop())
            self.human, self.model_moves, self.notes = human, model_moves, notes
            raise

    def model_reply(self) -> list[str]:
        """Let the model play every action it owes (and decide the nokomi swap)."""
        self.model_moves = []
        board = self.rules.board
        if self._swap_point() and self.model_colour == WHITE:
            if int(self.player.choose_colour(self.game)) == BLACK:
                self.human = WHITE
                self.events.append(Event("model", "swap"))
                self.model_moves.append("swap")
                self.notes.append("the model swapped: it takes the opening stone")
            else:
                self.notes.append("the model did not swap: it plays on as White")
        while not self.game.is_over and self.game.to_move == self.model_colour:
            action = self._model_move()
            self.game.play(action)
            self.events.append(Event("model", "move", action))
            self.model_moves.append(board.action_name(action))
        return self.model_moves

    def _model_move(self) -> int:
        """The model's move at the session's think time, reporting progress when asked."""
        if self.think is None and self.progress is None:
            return int(self.player.genmove(self.game))
        options: dict[str, Any] = {}
        if self.think is not None:
            options["seconds"], options["simulations"] = think_level(self.think)
        if self.progress is not None:
            options["on_progress"] = self.progress
        return int(self.player.genmove(self.game, **options))

    def undo(self) -> None:
        """Take back the model's reply and the person's last move or swap."""
        if not self.can_undo():
            raise SessionError("nothing to undo")
        while self.events and self.events[-1].actor == "model":
            self._revert(self.events.pop())
        self._revert(self.events.pop())
        self.model_moves = []

    def _revert(self, event: Event) -> None:
        if event.kind == "move":
            self.game.undo()
        else:
            self.human = 3 - self.human

    # -- game records ------------------------------------------------------------------

    def to_record(self, date: str = "") -> GameRecord:
        """The game so far as a record: the person is PB or PW "human", the model
        "catena_zero"; in nokomi, whether the opening stone was swapped once decided."""
        swapped = None
        if self.rules.game_type == GameType.NOKOMI:
            if any(event.kind == "swap" for event in self.events):
                swapped = True
            elif len(self.game.history) >= 2:
                swapped = False
        names = {self.human: HUMAN_NAME, self.model_colour: MODEL_NAME}
        record = record_from_game(self.game, names[BLACK], names[WHITE], date=date,
                                  swapped=swapped)
        return carry_annotations(record, self.loaded_record)

    def load_record(self, record: GameRecord) -> list[str]:
        """Continue from a record's final position under its rules and komi (RecordError
        if it does not replay; nothing changes then). The person takes the colour the record
        names "human", else keeps theirs; the model then plays what it owes. Returns the
        model's reply moves (a failing reply restores the session as before)."""
        game = replay(record)
        human = self.human
        if (record.black_player == HUMAN_NAME) != (record.white_player == HUMAN_NAME):
            human = BLACK if record.black_player == HUMAN_NAME else WHITE
        saved = (self.rules, self.komi, self.game, self.human, list(self.events),
                 list(self.model_moves), list(self.notes), self.loaded_record)
        self.rules, self.komi, self.game, self.human = record.rules, record.komi, game, human
        self.events = self._events_of(record, human)
        self.loaded_record = record  # its comments and analyses go into a saved record
        try:
            return self.model_reply()
        except BaseException:
            (self.rules, self.komi, self.game, self.human, self.events, self.model_moves,
             self.notes, self.loaded_record) = saved
            raise

    @staticmethod
    def _events_of(record: GameRecord, human: int) -> list[Event]:
        """The session events of a record's moves, so undo works on a loaded game: each
        move is the person's or the model's by its colour (before a swap, by the colours
        the players had then)."""
        swapped = bool(record.swapped)
        events = []
        for index, move in enumerate(record.moves):
            owner = human if not (swapped and index == 0) else 3 - human
            actor = "human" if move.colour == owner else "model"
            events.append(Event(actor, "move", int(move.action)))
            if swapped and index == 0:
                # The second player (White until then, Black after) took the opening stone.
                events.append(Event("human" if human == BLACK else "model", "swap"))
        return events

    # -- explanations --------------------------------------------------------------------

    def turn_start(self) -> tuple[GameState, int]:
        """A mark to pass to `claims_since` after the person's move and the model's reply."""
        return self.game.state.copy(), len(self.game.history)

    def claims_since(self, start: tuple[GameState, int]) -> list[TurnClaims]:
        """The claims of every action played since `start` (a `turn_start`), in order;
        empty after an undo (the game went back, nothing was claimed)."""
        state, count = start
        history = self.game.history
        if len(history) <= count:
            return []
        actions = history[count:]
        actors = [event.actor for event in self.events if event.kind == "move"][count:]
        board = self.rules.board
        out = []
        for action, actor, claims in zip(actions, actors,
                                         claims_of_actions(self.rules, state, actions),
                                         strict=True):
            if claims:
                out.append(TurnClaims("you" if actor == "human" else "the model",
                                      board.action_name(action), claims))
        return out

    def last_turn_cells(self) -> list[int]:
        """The cells placed in the last turn (two stones in double): trailing moves by the
        same actor, without the button."""
        events = [event for event in self.events if event.kind == "move"]
        if not events:
            return []
        actor = events[-1].actor
        cells = []
        for event in reversed(events):
            if event.actor != actor:
                break
            if event.action != self.rules.board.button_action:
                cells.append(event.action)
            if not self.rules.is_double:
                break
        return cells

    def swap_decision(self) -> str | None:
        """What was decided at the nokomi swap (a note), None before it or in other game
        types."""
        if self.rules.game_type != GameType.NOKOMI or not self.game.history or \
                self._swap_point():
            return None  # before the opening stone, or still to be decided
        # The latest: an undo back before the swap leaves the old decision in the notes.
        return next((note for note in reversed(self.notes) if "swap" in note.split(":")[0]),
                    None)
