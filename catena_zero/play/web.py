"""`catena-zero serve`: play the model in a browser (stdlib HTTP server, JSON API, one page).

Routes (every API answer is JSON; errors are `{"error": message}` with a 4xx status):

    GET  /                      the page (static/index.html)
    GET  /static/<file>         app.js, style.css
    GET  /api/info              sides with a model (every side 2..10 when one model
                                plays them all), default_side, the models' trained
                                tracks, variants, komi ranges
    POST /api/new               {side, game_type, scoring, komi: int | "auto",
                                 colour: "black" | "white" | "auto"} -> game state + token
                                (every state has track_note: one line when the board and
                                variant are outside the model's training, else null, and
                                the explanations of explanation_json: unplayable cells,
                                last turn, movers, score parts, claims, swap decision,
                                model)
    GET  /api/state?game=ID     game state (answers at once; "thinking" while the model
                                searches in that game)
    POST /api/move              {game, move: "F6" | "button"} -> state after the model's reply
    POST /api/swap              {game}   (nokomi: the second player takes the opening stone)
    POST /api/undo              {game}
    GET  /api/record?game=ID    the game's record (SGF text, docs/reference/records.md) as
                                a download
    GET  /api/replay?game=ID    every position of the game, for stepping through its moves
    POST /api/load              {record: SGF text, colour?} -> a new game continued from the
                                record's final position (+ token, room as /api/new); the
                                body may be up to MAX_RECORD_BODY_BYTES

Every request about a game sends the token `/api/new` gave in the `X-Catena-Token` header;
web_games.py says who owns a game, which games make room for new ones and how games run
side by side without waiting for each other. web_guards.py says which Host, Origin and
Content-Type values the server takes (so another site's page, or a name rebound to this
machine, changes nothing) and how many requests to the model one client has at once.

Bad requests get a 4xx JSON answer with a message and change nothing: malformed or deeply
nested JSON, numbers over 18 digits, NaN/Infinity, text that is not UTF-8, wrong types
(400); a missing or foreign token, or an Origin not the server's own (403); an unknown
game or page (404); another method (405 with `Allow`); a request not whole within
`request_timeout` (408, or the connection is closed); a game busy or a move refused (409;
an illegal move adds `reason`, the rule it breaks); no Content-Length but a body (411); a
body over MAX_BODY_BYTES (413); a POST body not sent as application/json (415); a Host not
the server's own (421); a client's `thinking_per_client` requests to the model already
running (429 with `Retry-After`); a request head over MAX_HEAD_BYTES (414, 431).
http.server's own refusals (bad request line, too many headers, HTTP/2) are answered in
JSON too. The server says 503 only when it has no room: every game that could make room
is in a request or kept, every worker is answering, the model requests of all clients
fill three quarters of the workers, every connection is being answered, or a slow
request's connection was closed for a newcomer (web_games.py, web_guards.py,
web_connections.py); a server bug answers 500 and the server goes on.

Connections (web_connections.py): one thread reads every connection's request as it
arrives and hands only whole requests to `max_workers` worker threads, so slow clients hold
no worker; each request must arrive whole within `request_timeout`; at most
`max_connections` are open (the slowest waiting one makes room for a newcomer). Beyond
loopback, one client address holds at most `connections_per_address` connections and its
clients at most `games_per_address` games.
"""

from __future__ import annotations

import dataclasses
import io
import ipaddress
import json
import re
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from catena_zero.play.web_connections import (
    CONTENT_LENGTH_PATTERN,
    ConnectionLimits,
    ConnectionServer,
    Request,
    SocketWriter,
)
from catena_zero.play.web_games import ApiError, PlayService, shown
from catena_zero.play.web_guards import ModelRequests, OwnOrigins, json_content_type, split_host

STATIC_DIRECTORY = Path(__file__).resolve().parent / "static"
STATIC_FILES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
MAX_BODY_BYTES = 16384
MAX_RECORD_BODY_BYTES = 262144  # /api/load carries a whole game record
MAX_NESTING = 16  # the API's bodies are flat objects; deeper JSON is refused unparsed
MAX_NUMBER_DIGITS = 18
TOKEN_HEADER = "X-Catena-Token"
GET_ROUTES = ("/api/info", "/api/state", "/api/record", "/api/replay")
POST_ROUTES = ("/api/new", "/api/move", "/api/swap", "/api/undo", "/api/load")


@dataclass
class ServeConfig:
    host: str = "127.0.0.1"  # interface to listen on (127.0.0.1 = this machine only)
    port: int = 8765  # TCP port (0 = any free port)
    max_games: int = 64  # games kept in memory; when full one not in a request makes room
    games_per_token: int = 4  # games one page (token) holds; its oldest makes room for more
    games_per_address: int = 16  # games one address holds beyond loopback; its least recent goes
    idle_seconds: float = 0.0  # games unused this long may make room (0: any not in a request)
    keep_seconds: float = 3600.0  # a game its page came back to is kept this long from others
    request_timeout: float = 30.0  # seconds for each whole request, however it trickles in
    max_connections: int = 256  # open at once; when full the slowest waiting one makes room
    connections_per_address: int = 16  # connections open from one address beyond loopback
    max_workers: int = 32  # requests answered at once (a thread each); more get 503
    thinking_per_client: int = 4  # model requests one client has at once; more get 429
    allowed_hosts: list[str] = field(default_factory=list)  # more names it answers as (a proxy's)

    def __post_init__(self) -> None:
        if not isinstance(self.port, int) or not 0 <= self.port <= 65535:
            raise ValueError(f"port must be in 0..65535, got {self.port!r}")
        for name in ("max_games", "games_per_token", "games_per_address", "max_connections",
                     "connections_per_address", "max_workers", "thinking_per_client"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be >= 1, got {value!r}")
        for name in ("idle_seconds", "keep_seconds", "request_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise ValueError(f"{name} must be a number of seconds >= 0, got {value!r}")
        if not self.request_timeout > 0:
            raise ValueError(f"request_timeout must be > 0, got {self.request_timeout!r}")
        for name in self.allowed_hosts:
            split = split_host(name) if isinstance(name, str) else None
            if split is None or split[1] is not None:
                raise ValueError(f"allowed_hosts takes host names without a port, got "
                                 f"{shown(name)}")


def parse_body(raw: bytes) -> dict[str, Any]:
    """A request body -> its JSON object; ApiError 400 naming what is wrong otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiError(400, f"request body is not UTF-8: {error.reason} at byte "
                            f"{error.start}") from error
    if _nesting(text) > MAX_NESTING:
        raise ApiError(400, f"request body nests deeper than {MAX_NESTING} levels")
    try:
        body = json.loads(text or "{}", parse_int=_bounded_int, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise ApiError(400, f"request body is not valid JSON: {error}") from error
    except RecursionError as error:  # _nesting already refuses this; json must not 500
        raise ApiError(400, "request body nests too deeply") from error
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return body


def _nesting(text: str) -> int:
    """The deepest [ / { nesting of JSON text (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for character in text:
        if in_string:
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == '"':
                in_string = False
        elif character == '"':
            in_string = True
        elif character in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif character in "]}":
            depth -= 1
    return deepest


def _bounded_int(text: str) -> int:
    # int() refuses over 4300 digits with a ValueError, and no field needs more than a few.
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise ApiError(400, f"numbers in the request body may have at most "
                            f"{MAX_NUMBER_DIGITS} digits")
    return int(text)


def _no_constant(name: str) -> None:
    raise ApiError(400, f"{name} is not a JSON number")


class _Handler(BaseHTTPRequestHandler):
    """Answers one whole request, already read by the connection loop (`Request`)."""

    service: PlayService  # set on the subclass made by make_server, as are the next three
    origins: OwnOrigins
    model_requests: ModelRequests
    limit_addresses: bool
    timeout: float  # the answer's socket timeout, = request_timeout
    request: Request
    server_version = "catena-zero"

    def log_message(self, format: str, *args: Any) -> None:  # keep the terminal quiet
        pass

    def setup(self) -> None:
        # The request is in memory: reading it never waits on the client.
        self.connection = self.request.socket
        self.rfile = io.BytesIO(self.request.data)
        self.wfile = SocketWriter(self.connection)

    def handle(self) -> None:
        # One request per connection: the answers are HTTP/1.0 and close it.
        self.close_connection = True
        self.handle_one_request()

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._dispatch()

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch()

    def __getattr__(self, name: str):
        # Any other method (HEAD, PUT, DELETE, OPTIONS, PATCH, anything): http.server would
        # answer 501 "unsupported method"; the routes answer 405 with Allow instead.
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    def _dispatch(self) -> None:
        try:
            try:
                url = urlparse(self.path)
                query = parse_qs(url.query, max_num_fields=8)
            except ValueError as error:
                raise ApiError(400, f"malformed path: {error}") from error
            self.origins.check(self.headers)  # another site's page, DNS rebinding: refused
            route = url.path
            allowed = self._allowed(route)
            if allowed is None:
                raise ApiError(404, f"no such page {shown(route)}")
            if self.command != allowed:
                raise ApiError(405, f"{shown(route)} takes {allowed}", {"Allow": allowed})
            if route in ("/", "/index.html"):
                return self._static("index.html")
            if route.startswith("/static/"):
                return self._static(route[len("/static/"):])
            token = self.headers.get(TOKEN_HEADER)
            if route == "/api/info":
                return self._json(200, self.service.info())
            if route == "/api/state":
                return self._json(200, self.service.state(query.get("game", [None])[0], token))
            # Every refusal that needs no model comes first: the body is read and checked
            # before a model request takes its client's slot.
            body = self._body(MAX_RECORD_BODY_BYTES if route == "/api/load" else
                              MAX_BODY_BYTES) if self.command == "POST" else {}
            # The slot is given back before the answer goes out: a client that sends its
            # next request as soon as it has the answer finds it free.
            with self.model_requests.slot(self._client(token)):
                data, kind, headers = self._model_route(route, query, body, token)
            return self._send(200, data, kind, headers)
        except ApiError as error:
            self._json(error.status, {"error": error.message, **error.fields}, error.headers)
        except (ConnectionError, TimeoutError):
            raise  # the client went away or stopped reading: nobody to answer
        except Exception as error:  # a bug must not take the server down
            self._json(500, {"error": f"internal error: {type(error).__name__}: {error}"})

    def _client(self, token: str | None) -> tuple[str, str]:
        """Who counts against one bound of model requests: the address beyond loopback; on
        loopback the page's token when it has games here, else the address."""
        address = self.client_address[0]
        if self.limit_addresses or token is None or not self.service.owns(token):
            return ("address", address)
        return ("token", token)

    def _model_route(self, route: str, query: dict[str, list[str]], body: dict[str, Any],
                     token: str | None) -> tuple[bytes, str, dict[str, str] | None]:
        """The routes that run the model or wait for a game's model: the answer's body,
        content type and headers."""
        address = self.client_address[0]
        game_id = query.get("game", [None])[0]
        if route == "/api/record":
            text = self.service.record_text(game_id, token)
            name = re.sub(r"[^A-Za-z0-9]", "", str(game_id))[:40]
            return (text.encode("utf-8"), "application/x-go-sgf; charset=utf-8",
                    {"Content-Disposition": f'attachment; filename="catena-{name}.sgf"'})
        if route == "/api/new":
            payload = self.service.new_game(body, token, address)
        elif route == "/api/load":
            payload = self.service.load_game(body, token, address)
        elif route == "/api/replay":
            payload = self.service.replay(game_id, token)
        else:
            change = {"/api/move": self.service.move, "/api/swap": self.service.swap,
                      "/api/undo": self.service.undo}[route]
            payload = change(body, token)
        return json.dumps(payload).encode("utf-8"), "application/json", None

    @staticmethod
    def _allowed(route: str) -> str | None:
        """The method a route takes, None for no such route."""
        if route in ("/", "/index.html") or route.startswith("/static/") or route in GET_ROUTES:
            return "GET"
        return "POST" if route in POST_ROUTES else None

    def _body(self, limit: int = MAX_BODY_BYTES) -> dict[str, Any]:
        if self.headers.get("Transfer-Encoding") is not None:
            raise ApiError(411, "send the body with a Content-Length (no transfer encoding)")
        lengths = [text.strip(" \t") for text in self.headers.get_all("Content-Length", [])]
        if len(lengths) > 1 or lengths and not CONTENT_LENGTH_PATTERN.fullmatch(lengths[0]):
            raise ApiError(400, "bad Content-Length: one whole number of bytes is needed")
        length = int(lengths[0]) if lengths else 0
        if length > limit:
            raise ApiError(413, f"request body must be at most {limit} bytes")
        json_content_type(self.headers)  # a page of another site cannot send this unasked
        raw = self.rfile.read(length) if length else b""  # all there, or the client stopped
        if len(raw) < length:
            raise ApiError(400, f"the request body ended after {len(raw)} of {length} bytes")
        return parse_body(raw)

    def _static(self, name: str) -> None:
        if name not in STATIC_FILES:
            raise ApiError(404, f"no such file {shown(name)}")
        self._send(200, (STATIC_DIRECTORY / name).read_bytes(), STATIC_FILES[name])

    def _json(self, status: int, payload: dict[str, Any],
              headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

    def _send(self, status: int, data: bytes, kind: str,
              headers: dict[str, str] | None = None) -> None:
        self.connection.settimeout(self.timeout)  # a client that stops reading is let go
        if status >= 400:
            self.close_connection = True  # what is left of the request is not read
        self.send_response(status, HTTPStatus(status).phrase)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """http.server's own refusals (malformed request line or headers), in JSON."""
        if code >= 500:  # 505 for HTTP/2.0: the client's request is at fault, not the server
            code = 400
        if self.request_version == "HTTP/0.9":  # the request line was unreadable: answer
            self.request_version = "HTTP/1.0"  # with a status line, not a bare body
        self._json(code, {"error": message or HTTPStatus(code).phrase})


def listens_on_loopback(server: ConnectionServer) -> bool:
    """Whether only this machine can reach `server` (then every client has one address)."""
    try:
        return ipaddress.ip_address(server.server_address[0]).is_loopback
    except ValueError:
        return False


def make_server(player, config: ServeConfig,
                limit_addresses: bool | None = None) -> ConnectionServer:
    """An HTTP server (not yet serving) for `player`; `server.server_address` has the port.
    The bounds per client address apply when `limit_addresses`, by default when the
    server listens beyond loopback."""
    handler = type("CatenaHandler", (_Handler,), {"timeout": config.request_timeout})
    limits = ConnectionLimits(config.request_timeout, config.max_connections,
                              config.max_workers, config.connections_per_address,
                              max(MAX_BODY_BYTES, MAX_RECORD_BODY_BYTES))
    server = ConnectionServer((config.host, config.port), handler, limits)
    if limit_addresses is None:
        limit_addresses = not listens_on_loopback(server)
    if not limit_addresses:
        server.limits = dataclasses.replace(limits, connections_per_address=None)
    handler.limit_addresses = limit_addresses
    handler.service = PlayService(
        player, max_games=config.max_games, games_per_token=config.games_per_token,
        games_per_address=config.games_per_address if limit_addresses else None,
        idle_seconds=config.idle_seconds, keep_seconds=config.keep_seconds)
    handler.origins = OwnOrigins(config.host, server.server_address[1], config.allowed_hosts)
    handler.model_requests = ModelRequests(config.thinking_per_client,
                                           ModelRequests.bound_of(config.max_workers))
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
