"""Helpers for the web server tests: a fast fake player, a server on a loopback port, and
clients (http.client for well-formed requests, a raw socket for anything else)."""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace

import numpy as np

from catena_zero.export.model_file import ModelFileError
from catena_zero.play.model_player import PositionEvaluation
from catena_zero.play.web import ServeConfig, make_server
from catena_zero.rules import WHITE

LOOPBACK = "127.0.0.1"


class FakeLibrary:
    """ModelLibrary's face for the service: one side, no model file."""

    def __init__(self, side: int = 3) -> None:
        self.side = side

    def sides(self) -> list[int]:
        return [self.side]

    def describe(self, side_or_rules) -> str:  # a side, or the rules of a track
        return f"side {getattr(side_or_rules, 'side', side_or_rules)} test player"

    def get(self, side_or_rules) -> None:
        side = getattr(side_or_rules, "side", side_or_rules)
        if side != self.side:
            raise ModelFileError(f"the test player plays side {self.side}, not side {side}")


class FakePlayer:
    """Random legal moves and a flat evaluation, in microseconds; `before_move(game)` runs
    before each move (a test makes one game's search slow or failing with it)."""

    def __init__(self, side: int = 3, seed: int = 0,
                 before_move: Callable[[object], None] | None = None) -> None:
        self.library = FakeLibrary(side)
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.before_move = before_move
        self.asked: list[tuple] = []  # (seconds, simulations) of each genmove

    def genmove(self, game, seconds=None, simulations=None, on_progress=None) -> int:
        self.asked.append((seconds, simulations))
        with self.lock:
            action = int(self.random.choice(list(game.legal_actions())))
        if on_progress is not None:  # a search seven visits in, about to play `action`
            on_progress(SimpleNamespace(visit_counts=np.array([[7]]), action=np.array([action])))
        if self.before_move is not None:
            self.before_move(game)
        return action

    def evaluate(self, game) -> PositionEvaluation:
        return PositionEvaluation(0.5, 0.0, np.zeros(game.rules.board.num_cells, np.float32))

    def choose_komi(self, rules) -> int:
        return rules.komi_range[0]

    def choose_colour(self, game) -> int:
        return WHITE


@contextlib.contextmanager
def running_server(player, limit_addresses: bool | None = None, **settings) -> Iterator:
    """A server for `player` on an ephemeral loopback port, serving in a thread;
    `limit_addresses=True` applies the bounds per client address (loopback has none),
    for clients that connect from other loopback addresses (`source`)."""
    server = make_server(player, ServeConfig(host=LOOPBACK, port=0, **settings),
                         limit_addresses=limit_addresses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def wait_for_free_workers(server, seconds: float) -> None:
    """Wait until no worker thread of `server` is answering. A client has its answer (read to
    its Content-Length) a moment before the worker that wrote it counts itself free."""
    deadline = time.monotonic() + seconds
    while server.workers:
        assert time.monotonic() < deadline, f"{server.workers} workers still busy"
        time.sleep(0.01)


def call(port: int, method: str, path: str, body=None, token: str | None = None,
         timeout: float = 30.0, source: str | None = None) -> tuple[int, dict]:
    """One well-formed request, from the loopback address `source` if given (127.0.0.2:
    another client); (status, JSON answer)."""
    connection = http.client.HTTPConnection(
        LOOPBACK, port, timeout=timeout,
        source_address=None if source is None else (source, 0))
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if token is not None:
        headers["X-Catena-Token"] = token
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        payload = response.read()
    finally:
        connection.close()
    return response.status, (json.loads(payload) if payload else {})


def new_game(port: int, token: str | None = None, source: str | None = None,
             **settings) -> dict:
    status, state = call(port, "POST", "/api/new", {"side": 3, **settings}, token=token,
                         source=source)
    assert status == 200, state
    return state


def raw_request(port: int, data: bytes, half_close: bool = True,
                timeout: float = 15.0) -> tuple[int | None, dict[str, str], bytes]:
    """Send `data` as is and read the answer until the server closes; (status or None when
    no status line came, headers, body). `half_close` ends our side after sending."""
    with socket.create_connection((LOOPBACK, port), timeout=timeout) as connection:
        with contextlib.suppress(OSError):  # the server may answer and close early
            connection.sendall(data)
            if half_close:
                connection.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    answer = b"".join(chunks)
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        return None, {}, answer
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers, body


def request_bytes(method: str, path: str, body: bytes = b"",
                  headers: dict[str, str] | None = None, version: str = "HTTP/1.1",
                  length: int | None = None) -> bytes:
    """A request as bytes; `length` overrides the Content-Length sent. A POST says its
    body is JSON unless `headers` name a Content-Type (the server takes no other)."""
    lines = [f"{method} {path} {version}", f"Host: {LOOPBACK}"]
    if body or length is not None:
        lines.append(f"Content-Length: {len(body) if length is None else length}")
    headers = dict(headers or {})
    if method == "POST" and not any(name.lower() == "content-type" for name in headers):
        headers["Content-Type"] = "application/json"
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + body


def snapshot(state: dict) -> tuple:
    """What a request must not change about a game."""
    return (state["history"], state["stones"], state["komi"], state["human"],
            state["to_move"], state["over"])
