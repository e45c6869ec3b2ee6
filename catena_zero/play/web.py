"""`catena-zero serve`: play the model in a browser (stdlib HTTP server, JSON API, one page).

Routes (every API answer is JSON; errors are `{"error": message}` with a 4xx status):

    GET  /                      the page (static/index.html)
    GET  /static/<file>         app.js, style.css
    GET  /api/info              sides with a model, variants, komi ranges
    POST /api/new               {side, game_type, scoring, komi: int | "auto",
                                 colour: "black" | "white" | "auto"} -> game state
    GET  /api/state?game=ID     game state
    POST /api/move              {game, move: "F6" | "button"} -> state after the model's reply
    POST /api/swap              {game}   (nokomi: the second player takes the opening stone)
    POST /api/undo              {game}

A malformed body, an unknown game, an illegal move or a move out of turn gets 400/404/409
with a message and changes nothing; an unexpected failure gets 500 and the server goes on.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np

from catena_zero.export.model_file import ModelFileError
from catena_zero.play.session import COLOUR_NAMES, PlaySession, SessionError
from catena_zero.rules import GameType, Rules, Scoring

STATIC_DIRECTORY = Path(__file__).resolve().parent / "static"
STATIC_FILES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
MAX_BODY_BYTES = 16384


@dataclass
class ServeConfig:
    host: str = "127.0.0.1"  # interface to listen on (127.0.0.1 = this machine only)
    port: int = 8765  # TCP port (0 = any free port)
    max_games: int = 64  # games kept in memory; the least recently used is dropped beyond it

    def __post_init__(self) -> None:
        if not isinstance(self.port, int) or not 0 <= self.port <= 65535:
            raise ValueError(f"port must be in 0..65535, got {self.port!r}")
        if not isinstance(self.max_games, int) or self.max_games < 1:
            raise ValueError(f"max_games must be >= 1, got {self.max_games!r}")


class ApiError(Exception):
    """An HTTP error answer: status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class PlayService:
    """The games of one server, behind one lock (the model runs one search at a time)."""

    def __init__(self, player, max_games: int = 64) -> None:
        self.player = player
        self.max_games = max_games
        self.games: OrderedDict[str, PlaySession] = OrderedDict()
        self.lock = threading.Lock()

    def info(self) -> dict[str, Any]:
        sides = self.player.library.sides()
        return {
            "sides": sides,
            "models": {str(side): self.player.library.describe(side) for side in sides},
            "game_types": [g.value for g in GameType],
            "scorings": [s.value for s in Scoring],
            "komi_ranges": {
                f"{g.value}/{s.value}": list(Rules(side=sides[0] if sides else 6, game_type=g,
                                                   scoring=s).komi_range)
                for g in GameType for s in Scoring
            },
        }

    def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
        side = _field(body, "side", int, 6)
        game_type = _field(body, "game_type", str, "komi")
        scoring = _field(body, "scoring", str, "standard")
        colour = _field(body, "colour", str, "black").lower()
        komi_value = body.get("komi", 0)
        if colour not in ("black", "white", "auto"):
            raise ApiError(400, f"colour must be black, white or auto, got {colour!r}")
        try:
            rules = Rules(side=side, game_type=game_type, scoring=scoring)
            if komi_value == "auto":
                komi = None
            elif isinstance(komi_value, int) and not isinstance(komi_value, bool):
                rules.validate_komi(komi_value)
                komi = komi_value
            else:
                raise ApiError(400, f"komi must be a whole number or \"auto\", got {komi_value!r}")
            self.player.library.get(side)  # refuse a side without a model before playing
        except (ModelFileError, ValueError) as error:
            raise ApiError(400, str(error)) from error
        with self.lock:
            try:
                session = PlaySession(self.player, rules, komi=komi, human_colour=colour)
            except (SessionError, ValueError) as error:
                raise ApiError(400, str(error)) from error
            game_id = uuid.uuid4().hex[:12]
            self.games[game_id] = session
            while len(self.games) > self.max_games:
                self.games.popitem(last=False)
            return self._state(game_id, session)

    def _session(self, game_id: Any) -> PlaySession:
        if not isinstance(game_id, str) or game_id not in self.games:
            raise ApiError(404, f"unknown game {game_id!r}; start a new game")
        self.games.move_to_end(game_id)
        return self.games[game_id]

    def state(self, game_id: Any) -> dict[str, Any]:
        with self.lock:
            return self._state(game_id, self._session(game_id))

    def move(self, body: dict[str, Any]) -> dict[str, Any]:
        move = body.get("move")
        if not isinstance(move, str) or not move.strip() or len(move) > 16:
            raise ApiError(400, f"move must be a cell name like \"F6\" or \"button\", got {move!r}")
        with self.lock:
            session = self._session(body.get("game"))
            self._apply(session.human_move, move.strip())
            return self._state(body["game"], session)

    def swap(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            session = self._session(body.get("game"))
            self._apply(session.human_swap)
            return self._state(body["game"], session)

    def undo(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            session = self._session(body.get("game"))
            self._apply(session.undo)
            return self._state(body["game"], session)

    @staticmethod
    def _apply(function, *arguments) -> None:
        try:
            function(*arguments)
        except SessionError as error:
            raise ApiError(409, str(error)) from error
        except ValueError as error:
            raise ApiError(400, str(error)) from error

    def _state(self, game_id: str, session: PlaySession) -> dict[str, Any]:
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
            "game": game_id,
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
            "can_swap": session.swap_available() and session.human_to_move(),
            "can_undo": session.can_undo(),
            "eval": {
                "winrate_black": round(float(evaluation.winrate_black), 4),
                "score_lead_black": round(float(evaluation.score_lead_black), 2),
                "ownership_black": np.round(evaluation.ownership_black, 3).tolist(),
            },
        }


def _field(body: dict[str, Any], name: str, kind: type, default: Any) -> Any:
    value = body.get(name, default)
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        expected = "a whole number" if kind is int else "a string"
        raise ApiError(400, f"{name} must be {expected}, got {value!r}")
    return value


class _Handler(BaseHTTPRequestHandler):
    service: PlayService  # set on the subclass made by make_server
    server_version = "catena-zero"

    def log_message(self, format: str, *args: Any) -> None:  # keep the terminal quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        try:
            url = urlparse(self.path)
            route = url.path
            if method == "GET" and route in ("/", "/index.html"):
                return self._static("index.html")
            if method == "GET" and route.startswith("/static/"):
                return self._static(route[len("/static/"):])
            routes_get = {"/api/info": lambda: self.service.info(),
                          "/api/state": lambda: self.service.state(
                              parse_qs(url.query).get("game", [None])[0])}
            routes_post = {"/api/new": self.service.new_game, "/api/move": self.service.move,
                           "/api/swap": self.service.swap, "/api/undo": self.service.undo}
            if route in routes_get:
                if method != "GET":
                    raise ApiError(405, f"{route} takes GET")
                return self._json(200, routes_get[route]())
            if route in routes_post:
                if method != "POST":
                    raise ApiError(405, f"{route} takes POST")
                return self._json(200, routes_post[route](self._body()))
            raise ApiError(404, f"no such page {route!r}")
        except ApiError as error:
            self._json(error.status, {"error": error.message})
        except Exception as error:  # a bug must not take the server down
            self._json(500, {"error": f"internal error: {type(error).__name__}: {error}"})

    def _body(self) -> dict[str, Any]:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError as error:
            raise ApiError(400, "bad Content-Length") from error
        if length < 0 or length > MAX_BODY_BYTES:
            raise ApiError(413, f"request body must be at most {MAX_BODY_BYTES} bytes")
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw.decode("utf-8") or "{}")
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ApiError(400, f"request body is not valid JSON: {error}") from error
        if not isinstance(body, dict):
            raise ApiError(400, "request body must be a JSON object")
        return body

    def _static(self, name: str) -> None:
        if name not in STATIC_FILES:
            raise ApiError(404, f"no such file {name!r}")
        data = (STATIC_DIRECTORY / name).read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", STATIC_FILES[name])
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status, HTTPStatus(status).phrase)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)


def make_server(player, config: ServeConfig) -> ThreadingHTTPServer:
    """An HTTP server (not yet serving) for `player`; `server.server_address` has the port."""
    service = PlayService(player, max_games=config.max_games)
    handler = type("CatenaHandler", (_Handler,), {"service": service})
    server = ThreadingHTTPServer((config.host, config.port), handler)
    server.daemon_threads = True
    return server


def serve(player, config: ServeConfig, announce=print) -> None:
    """Serve until interrupted."""
    server = make_server(player, config)
    host, port = server.server_address[:2]
    announce(f"catena-zero: open http://{host}:{port}/ in a browser (Ctrl-C stops)")
    try:
        server.serve_forever()
    finally:
        server.server_close()
