"""The games of the web server: who may touch them, which make room, one lock per game.

Ownership. `/api/new` answers a `token` (`secrets.token_urlsafe`, 192 random bits). Every
later request for that game sends it in the `X-Catena-Token` header; without it, or with
another, the request gets 403 and changes nothing. The page keeps its token and sends it
to `/api/new` as well: one token owns at most `games_per_token` games, so a page starting
game after game replaces its own oldest one instead of taking other people's slots.

Room. At most `max_games` games are kept. A new game makes room, in this order:
- a token at `games_per_token` replaces its own oldest game;
- a client address at `games_per_address` (a bound the server sets only when it listens
  beyond loopback, where addresses tell clients apart) replaces its own least recently used
  game that is not in a request; a client that sends no token gets a new one each time, so
  this is what keeps one address from taking every slot;
- a full table replaces the least recently used game that is not in a request (no change,
  model search or read running in it) and has been unused for `idle_seconds` (0: any) if
  its page never came back to it after starting it, else for `keep_seconds`.
When every game is kept so, the least recently used game its page came back to and unused
for `idle_seconds` goes, so that as many visitors as games cannot lock newcomers out for
`keep_seconds`. Only when no
game may go is the new game refused with 503 and `Retry-After`. A game in a request is
never dropped by another client, and a game its page has come back to (a move, a read)
within `keep_seconds` goes only after every game nobody came back to: a flood of new games
replaces the least recently used games nobody came back to (its own, once it has made
them). With `idle_seconds` above 0 a new game is kept
that long too, at the price that a flood fills the table and is refused for that long.

Concurrency. The table has one short lock, never held while the model searches; each game
has its own lock, held while it changes (the person's move and the model's reply). Reads
(`/api/state`) take no game lock: they answer the game's last published state at once, with
`"thinking": true` while the model is answering in that game (the published position then
has the person's move on the board). A second change to a busy game waits up to
`GAME_WAIT_SECONDS`, then gets 409. Searches of different games run side by side, so one
slow search never delays another game.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from catena_zero.data.game_record import parse_record, write_record
from catena_zero.play.bundled import default_side
from catena_zero.play.session import COLOUR_NAMES, HUMAN_NAME, PlaySession, SessionError
from catena_zero.play.time_control import THINK_LEVELS
from catena_zero.rules import Game, GameType, Rules, Scoring
from catena_zero.rules.explain import mover_of, score_parts, score_units

DEFAULT_THINK = "normal"  # think-time level of a game that names none
GAME_WAIT_SECONDS = 10.0  # a change to a game whose model is answering waits this long
RETRY_AFTER_SECONDS = 30  # told to a client refused because every game is in use
SHOWN_CHARS = 40  # at most this much of a client's value is repeated in a message


class ApiError(Exception):
    """An HTTP error answer: status, message and extra headers (Allow, Retry-After)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None,
                 fields: dict[str, Any] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.fields = fields or {}  # more of the answer, e.g. the reason of an illegal move


def shown(value: Any) -> str:
    """repr(value), cut to SHOWN_CHARS characters: messages never echo a whole body."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."


@dataclass
class GameEntry:
    """One game in the table. `published` is replaced whole, so a reader sees a state and
    its thinking flag together without taking `lock`."""

    game_id: str
    token: str
    session: PlaySession
    lock: threading.Lock = field(default_factory=threading.Lock)
    published: tuple[dict[str, Any], bool] = ({}, False)  # (last state, model thinking)
    last_used: float = 0.0  # time.monotonic() of its owner's last request
    address: str | None = None  # the client address that made it
    in_use: int = 0  # requests working on it now: while above 0 it never makes room
    came_back: bool = False  # its page sent a request for it after starting it
    claims: list[dict[str, Any]] = field(default_factory=list)  # the last change's claims


class PlayService:
    """The games of one server (see the module docstring for ownership, room, locks)."""

    def __init__(self, player, max_games: int = 64, games_per_token: int = 4,
                 idle_seconds: float = 0.0, games_per_address: int | None = None,
                 clock: Callable[[], float] = time.monotonic, keep_seconds: float = 3600.0):
        self.player = player
        self.max_games = max_games
        self.games_per_token = games_per_token
        self.games_per_address = games_per_address  # None: no bound per address
        self.idle_seconds = idle_seconds
        self.keep_seconds = keep_seconds
        self.clock = clock
        self.games: OrderedDict[str, GameEntry] = OrderedDict()  # least recently used first
        self.tokens: dict[str, list[str]] = {}  # token -> its game ids, oldest first
        self.lock = threading.Lock()  # guards `games` and `tokens` only, briefly

    def info(self) -> dict[str, Any]:
        """The sides with a model (every side 2..10 when one model plays them all), the
        model of each, the side to start on, the tracks the models were trained on, the
        variants and their komi ranges."""
        library = self.player.library
        sides = library.sides()
        trained = getattr(library, "trained_tracks", None)
        return {
            "sides": sides,
            "default_side": default_side(library),
            "tracks": trained() if trained is not None else [],
            "models": {str(side): library.describe(side) for side in sides},
            "game_types": [g.value for g in GameType],
            "scorings": [s.value for s in Scoring],
            "komi_ranges": {
                f"{g.value}/{s.value}": list(Rules(side=sides[0] if sides else 6, game_type=g,
                                                   scoring=s).komi_range)
                for g in GameType for s in Scoring
            },
        }

    # -- the table ---------------------------------------------------------------------

    def new_game(self, body: dict[str, Any], token: str | None,
                 address: str | None = None) -> dict[str, Any]:
        side = _field(body, "side", int, 6)
        game_type = _field(body, "game_type", str, "komi")
        scoring = _field(body, "scoring", str, "standard")
        colour = _field(body, "colour", str, "black").lower()
        komi_value = body.get("komi", 0)
        if colour not in ("black", "white", "auto"):
            raise ApiError(400, f"colour must be black, white or auto, got {shown(colour)}")
        think = _field(body, "think", str, DEFAULT_THINK).lower()
        if think not in THINK_LEVELS:
            raise ApiError(400, f"think must be one of {', '.join(THINK_LEVELS)}, got "
                                f"{shown(think)}")
        try:
            rules = Rules(side=side, game_type=game_type, scoring=scoring)
            if komi_value == "auto":
                komi = None
            elif isinstance(komi_value, int) and not isinstance(komi_value, bool):
                rules.validate_komi(komi_value)
                komi = komi_value
            else:
                raise ApiError(400, f"komi must be a whole number or \"auto\", "
                                    f"got {shown(komi_value)}")
            self.player.library.get(side)  # refuse a side without a model before playing
        except ValueError as error:  # ModelFileError is one
            raise ApiError(400, str(error)) from error
        return self._admit(token, address, lambda: PlaySession(
            self.player, rules, komi=komi, human_colour=colour, think=think))

    def _admit(self, token: str | None, address: str | None,
               make_session: Callable[[], PlaySession]) -> dict[str, Any]:
        """Make a session (`make_session`, outside the table's lock: the model may open)
        and add it as a game of `token` (a new token when it has none) and `address`,
        making room."""
        with self.lock:
            self._room(token, address)  # refuse at once when full; nothing is dropped yet
        try:
            session = make_session()
        except ValueError as error:  # SessionError and RecordError are ones
            raise ApiError(400, str(error)) from error
        with self.lock:
            # The model may have opened meanwhile: look for room again, then make it.
            for game_id in self._room(token, address):
                self._drop(game_id)
            owner = token if token in self.tokens else secrets.token_urlsafe(24)
            entry = GameEntry(uuid.uuid4().hex[:12], owner, session, last_used=self.clock(),
                              address=address)
            entry.published = (self._state(entry), False)
            self.games[entry.game_id] = entry
            self.tokens.setdefault(owner, []).append(entry.game_id)
        return {**entry.published[0], "thinking": False, "token": owner}

    def _room(self, token: str | None, address: str | None) -> list[str]:
        """The games to drop for one more game of `token` from `address` (see the module
        docstring); ApiError 503 if none may go."""
        own = self.tokens.get(token, []) if token is not None else []
        if len(own) >= self.games_per_token:
            return own[: len(own) - self.games_per_token + 1]  # its own oldest
        if self.games_per_address is not None and address is not None:
            theirs = [game_id for game_id, entry in self.games.items()  # least recent first
                      if entry.address == address]
            excess = len(theirs) - self.games_per_address + 1
            if excess > 0:
                free = [game_id for game_id in theirs if not self.games[game_id].in_use]
                if len(free) < excess:
                    raise ApiError(503, f"the {len(theirs)} games of your address are all "
                                        f"in play; try again later",
                                   {"Retry-After": str(RETRY_AFTER_SECONDS)})
                return free[:excess]
        if len(self.games) < self.max_games:
            return []
        now = self.clock()
        for game_id, entry in self.games.items():  # least recently used first
            kept = self.keep_seconds if entry.came_back else self.idle_seconds
            if not entry.in_use and now - entry.last_used >= kept:
                return [game_id]
        # Every game is kept: a game its page came back to, unused for `idle_seconds`, goes
        # before a newcomer is locked out, else as many visitors as games would shut the
        # server for `keep_seconds`.
        for game_id, entry in self.games.items():  # least recently used first
            if not entry.in_use and entry.came_back \
                    and now - entry.last_used >= self.idle_seconds:
                return [game_id]
        raise ApiError(503, f"all {self.max_games} games are in play; try again later",
                       {"Retry-After": str(RETRY_AFTER_SECONDS)})

    def owns(self, token: Any) -> bool:
        """Whether `token` holds games here (the web server counts such a page apart)."""
        with self.lock:
            return isinstance(token, str) and token in self.tokens

    def _drop(self, game_id: str) -> None:
        entry = self.games.pop(game_id)
        own = self.tokens[entry.token]
        own.remove(game_id)
        if not own:
            del self.tokens[entry.token]

    @contextlib.contextmanager
    def _using(self, game_id: Any, token: Any) -> Iterator[GameEntry]:
        """The game, if `token` owns it (404 unknown game, 403 wrong or missing token),
        marked in use until the request is done: a game in use never makes room."""
        with self.lock:
            entry = self.games.get(game_id) if isinstance(game_id, str) else None
            if entry is None:
                raise ApiError(404, f"unknown game {shown(game_id)}; start a new game")
            given = token.encode("utf-8", "replace") if isinstance(token, str) else b""
            if not hmac.compare_digest(given, entry.token.encode("ascii")):
                raise ApiError(403, "this game belongs to another page: send its token in "
                                    "the X-Catena-Token header")
            entry.in_use += 1
            entry.came_back = True
            self._touch(entry)
        try:
            yield entry
        finally:
            with self.lock:
                entry.in_use -= 1
                self._touch(entry)  # used until the request ended (a search may be long)

    def _touch(self, entry: GameEntry) -> None:
        """Mark the game the most recently used (the table's lock is held)."""
        entry.last_used = self.clock()
        if self.games.get(entry.game_id) is entry:  # its owner may have replaced it
            self.games.move_to_end(entry.game_id)

    # -- reads and changes ---------------------------------------------------------------

    def state(self, game_id: Any, token: Any) -> dict[str, Any]:
        """The game's last published state at once, even while the model is searching."""
        with self._using(game_id, token) as entry:
            state, thinking = entry.published
        return {**state, "thinking": thinking}

    def move(self, body: dict[str, Any], token: Any) -> dict[str, Any]:
        move = body.get("move")
        if not isinstance(move, str) or not move.strip() or len(move) > 16:
            raise ApiError(400, f"move must be a cell name like \"F6\" or \"button\", "
                                f"got {shown(move)}")
        return self._change(body, token, lambda session, played:
                            session.human_move(move.strip(), played))

    def swap(self, body: dict[str, Any], token: Any) -> dict[str, Any]:
        return self._change(body, token, lambda session, played: session.human_swap(played))

    def undo(self, body: dict[str, Any], token: Any) -> dict[str, Any]:
        return self._change(body, token, lambda session, played: session.undo())

    def _change(self, body: dict[str, Any], token: Any, action) -> dict[str, Any]:
        """Run `action(session, played)` under the game's own lock and publish the result;
        a refused or failed action publishes nothing new (the session is unchanged)."""
        with self._using(body.get("game"), token) as entry:
            return self._change_entry(entry, action)

    def _change_entry(self, entry: GameEntry, action) -> dict[str, Any]:
        if not entry.lock.acquire(timeout=GAME_WAIT_SECONDS):
            raise ApiError(409, "the model is still answering in this game; try again when "
                                "it has replied")
        try:
            before = entry.published
            start = entry.session.turn_start()
            claims_before = entry.claims

            def played() -> None:  # the person's move is on the board; the model searches
                entry.claims = claims_json(entry.session, start)
                entry.published = (self._state(entry), True)
                entry.session.progress = searching

            def searching(partial) -> None:  # the search so far, for /api/state to show
                visits = int(partial.visit_counts[0].sum())
                best = entry.session.rules.board.action_name(int(partial.action[0]))
                state = {**entry.published[0], "search": {"visits": visits, "best": best}}
                entry.published = (state, True)

            try:
                action(entry.session, played)
            except SessionError as error:
                entry.published, entry.claims = before, claims_before
                raise ApiError(409, str(error), fields={"reason": error.reason}) from error
            except ValueError as error:
                entry.published, entry.claims = before, claims_before
                raise ApiError(400, str(error)) from error
            except BaseException:
                entry.published, entry.claims = before, claims_before
                raise
            entry.claims = claims_json(entry.session, start)
            entry.published = (self._state(entry), False)
            return {**entry.published[0], "thinking": False}
        finally:
            entry.session.progress = None
            entry.lock.release()

    def _state(self, entry: GameEntry) -> dict[str, Any]:
        """The JSON state of a game; called only by the thread that holds (or made) it."""
        session = entry.session
        game = session.game
        rules = session.rules
        board = rules.board
        state = game.state
        legal = np.zeros(board.num_actions, dtype=bool)
        if session.human_to_move():
            legal[game.legal_actions()] = True
        evaluation = self.player.evaluate(game)
        button = int(state.button[0])
        return {
            "game": entry.game_id,
            "side": rules.side,
            "game_type": rules.game_type.value,
            "scoring": rules.scoring.value,
            "komi": int(state.komi[0]),
            "human": COLOUR_NAMES[session.human],
            "to_move": COLOUR_NAMES[int(game.to_move)],
            "over": bool(game.is_over),
            "result": game.result_string() if game.is_over else None,
            "cells": [board.cell_name(i) for i in range(board.num_cells)],
            "coords": board.coords.tolist(),
            "stones": state.stones[0].astype(int).tolist(),
            "limited": state.limited[0].astype(bool).tolist(),
            "legal": legal[: board.num_cells].tolist(),
            "button_legal": bool(legal[board.button_action]),
            "button_holder": COLOUR_NAMES.get(button),
            "has_button": bool(rules.has_button),
            "history": [board.action_name(a) for a in game.history],
            "model_moves": list(session.model_moves),
            "notes": list(session.notes),
            "track_note": self._track_note(rules),
            "can_swap": session.swap_available() and session.human_to_move(),
            "can_undo": session.can_undo(),
            "eval": {
                "winrate_black": round(float(evaluation.winrate_black), 4),
                "score_lead_black": round(float(evaluation.score_lead_black), 2),
                "ownership_black": np.round(evaluation.ownership_black, 3).tolist(),
            },
            **explanation_json(session, entry.claims, self._model_name(rules)),
        }

    def _model_name(self, rules: Rules) -> str | None:
        """The model that plays this game's track (the bundled one rated best there)."""
        try:
            return self.player.library.describe(rules)
        except ValueError:  # no model for the side: the game could not have started
            return None


    # -- game records (docs/reference/records.md) ----------------------------------------

    def load_game(self, body: dict[str, Any], token: str | None,
                  address: str | None = None) -> dict[str, Any]:
        """A new game from a posted record `{record: SGF text, colour?: black | white}`,
        continued from its final position: checked like a file (RecordError -> 400), and
        taking room and a token as /api/new does. The person plays `colour`, else the
        colour the record names "human", else Black."""
        text = body.get("record")
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, f"record must be the text of a game record, got {shown(text)}")
        colour = _field(body, "colour", str, "").lower()
        if colour not in ("", "black", "white"):
            raise ApiError(400, f"colour must be black or white, got {shown(colour)}")
        try:
            record = parse_record(text)
            self.player.library.get(record.rules.side)  # a side without a model is refused
        except ValueError as error:  # RecordError, ModelFileError
            raise ApiError(400, f"record refused: {error}") from error
        if colour:
            human = colour
        elif record.white_player == HUMAN_NAME and record.black_player != HUMAN_NAME:
            human = "white"
        else:
            human = "black"
        names = {"black": record.black_player, "white": record.white_player}
        if names[human] != HUMAN_NAME:  # the chosen colour becomes the person's
            record.black_player = HUMAN_NAME if human == "black" else ""
            record.white_player = HUMAN_NAME if human == "white" else ""

        def make_session() -> PlaySession:
            session = PlaySession(self.player, record.rules, komi=record.komi,
                                  human_colour=human, think=DEFAULT_THINK)
            session.load_record(record)
            return session

        return self._admit(token, address, make_session)

    def record_text(self, game_id: Any, token: Any) -> str:
        """The game's record so far (SGF text), read under the game's lock."""
        with self._using(game_id, token) as entry, self._holding(entry):
            return write_record(entry.session.to_record(date=time.strftime("%Y-%m-%d")))

    def replay(self, game_id: Any, token: Any) -> dict[str, Any]:
        """Every position of the game, for stepping through it: moves [n] (names),
        stones [n+1][C] and limited [n+1][C] (position k: after the first k moves)."""
        with self._using(game_id, token) as entry, self._holding(entry):
            record = entry.session.to_record()
        board = record.rules.board
        game = Game(record.rules, komi=record.komi)
        stones = [game.state.stones[0].astype(int).tolist()]
        limited = [game.state.limited[0].astype(bool).tolist()]
        for move in record.moves:
            game.play(move.action)
            stones.append(game.state.stones[0].astype(int).tolist())
            limited.append(game.state.limited[0].astype(bool).tolist())
        return {"game": entry.game_id, "moves": [board.action_name(a) for a in record.actions],
                "stones": stones, "limited": limited, "result": record.result}

    @staticmethod
    @contextlib.contextmanager
    def _holding(entry: GameEntry) -> Iterator[None]:
        """Hold the game's lock, waited for as a change would (409 when the model is busy)."""
        if not entry.lock.acquire(timeout=GAME_WAIT_SECONDS):
            raise ApiError(409, "the model is still answering in this game; try again when "
                                "it has replied")
        try:
            yield
        finally:
            entry.lock.release()

    def _track_note(self, rules: Rules) -> str | None:
        """The library's line about rules outside the model's training, if it has one."""
        note_of = getattr(self.player.library, "note", None)
        return note_of(rules) if note_of is not None else None


def _field(body: dict[str, Any], name: str, kind: type, default: Any) -> Any:
    value = body.get(name, default)
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        expected = "a whole number" if kind is int else "a string"
        raise ApiError(400, f"{name} must be {expected}, got {shown(value)}")
    if kind is str and len(value) > SHOWN_CHARS:
        raise ApiError(400, f"{name} must be at most {SHOWN_CHARS} characters")
    return value


def claims_json(session: PlaySession, start) -> list[dict[str, Any]]:
    """The ribbons claimed since `start` (session.turn_start()), for the page."""
    return [{"actor": turn.actor, "move": turn.move, "cells": claim.cells,
             "owner": COLOUR_NAMES[claim.owner], "taken": claim.taken,
             "text": f"{turn.actor} played {turn.move}: {claim.text()}"}
            for turn in session.claims_since(start) for claim in turn.claims]


def explanation_json(session: PlaySession, claims: list[dict[str, Any]],
                     model: str | None) -> dict[str, Any]:
    """What the page shows to explain the board: the cells no stone can go on, the last
    turn, who made each move, the live score with its parts (the final breakdown once over)
    and its units, the claims of the last change, the swap decision and the model."""
    game = session.game
    rules = session.rules
    board = rules.board
    playable = set(game.legal_actions()) if not game.is_over else set()
    stones = game.state.stones[0]
    parts = score_parts(game)
    score = dataclasses.asdict(parts)
    score["line"] = parts.line()
    score["breakdown"] = parts.breakdown() if parts.final else []
    return {
        "unplayable": [bool(stones[i] == 0 and i not in playable)
                       for i in range(board.num_cells)],
        "last_turn": [board.cell_name(cell) for cell in session.last_turn_cells()],
        "history_colours": [COLOUR_NAMES[mover_of(rules, i)]
                            for i in range(len(game.history))],
        "score": score,
        "score_units": score_units(rules),
        "claims": list(claims),
        "swap_decision": session.swap_decision(),
        "model": model,
    }
