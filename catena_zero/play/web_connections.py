"""The web server's connections: every request is read whole before a worker thread sees it.

One thread, the loop of `serve_forever`, accepts connections and reads the requests of all
of them as their bytes arrive (a selector, no thread per connection). Only a request whose
line, headers and body (its Content-Length) have all arrived goes to a worker thread, and
at most `max_workers` run at once; a request that arrives whole while every worker is busy
gets 503. A client trickling its request one byte at a time therefore holds no worker, only
one open connection, and that only until its deadline: `request_timeout` seconds for the
whole request from when the connection was accepted, however slowly the bytes come. An
idle connection is closed at its deadline; one that sent part of a request gets 408 and is
closed. A connection carries one request (the answers are HTTP/1.0 and close it).

Room. At most `max_connections` connections are open. When a new one comes and all are
open, the slowest connection still waiting for its request (see `_room_order`) is closed
to make room; a request already read is never cut. When every open connection is being
answered, the newcomer gets 503. When the server listens beyond loopback, one client
address holds at most `connections_per_address` connections, and its own slowest makes
room for its next; on loopback every client is this machine (one address: a reverse
proxy's clients all look alike), so only the total bound applies.

This loop never waits on a client: its own answers (408, 414 and 431 for a head over
MAX_HEAD_BYTES, 503) are written without blocking, and cut if the client's socket buffer
is full.
"""

from __future__ import annotations

import io
import json
import re
import selectors
import socket
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import HTTPServer

MAX_HEAD_BYTES = 65536  # a request line and headers longer than this are refused unread
RECEIVE_BYTES = 65536  # read at most this much from one connection per turn of the loop
HEAD_END = re.compile(rb"\r?\n\r?\n")  # http.server also takes bare LF line ends
CONTENT_LENGTH_PATTERN = re.compile(r"[0-9]{1,12}")
RETRY_AFTER_BUSY_SECONDS = 1
ROOM_GRACE_SECONDS = 0.25  # a silent connection this new may have its request on the way


@dataclass(frozen=True)
class ConnectionLimits:
    request_timeout: float  # seconds for each whole request (line, headers, body)
    max_connections: int  # connections open at once
    max_workers: int  # requests answered at once, a thread each
    connections_per_address: int | None  # None: no bound per client address (loopback)
    max_body_bytes: int  # the largest body any route takes; bigger ones are not waited for


@dataclass
class Request:
    """What a worker's request handler gets: the socket to answer on and the whole
    request's bytes."""

    socket: socket.socket
    data: bytes


@dataclass
class _Waiting:
    """A connection the loop is reading a request from."""

    connection: socket.socket
    address: tuple
    deadline: float  # time.monotonic() by which the whole request must have arrived
    since: float  # when it was accepted
    buffer: bytearray = field(default_factory=bytearray)
    scanned: int = 0  # the buffer has been searched for the head's end up to here
    head_length: int = 0  # 0 until the head has arrived whole
    body_length: int = 0


def _room_order(waiting: _Waiting, now: float) -> tuple:
    """Which waiting connection makes room first: the slowest sender, by bytes per second
    since it opened (over at least ROOM_GRACE_SECONDS, so a new connection's first bytes
    count for little), an idle one first. A connection opened less than ROOM_GRACE_SECONDS
    ago that has sent nothing goes last, the oldest first: its request may be on the way
    (a request sent at once comes in one piece or a few; a few bytes of an unfinished
    request are a trickle). By age alone, clients that reconnect whenever they are closed
    would close, in turn, every connection, a newcomer's too before its request came."""
    age = now - waiting.since
    if not waiting.buffer and age < ROOM_GRACE_SECONDS:
        return (1, waiting.since)
    return (0, len(waiting.buffer) / max(age, ROOM_GRACE_SECONDS), waiting.since)


class SocketWriter(io.BufferedIOBase):
    """A handler's output: every write sent whole (http.server writes headers and body
    separately and expects each to go out entirely)."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.connection.sendall(data)
        return memoryview(data).nbytes


def declared_body_length(head: bytes, limit: int) -> int:
    """The body length the loop waits for: the one valid Content-Length up to `limit`,
    else 0 (none, several, malformed, too large, or a transfer encoding: the handler then
    refuses the request without reading a body, so none is waited for)."""
    lengths = []
    for line in head.decode("latin-1").split("\n")[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            continue
        name = name.strip().lower()
        if name == "transfer-encoding":
            return 0
        if name == "content-length":
            lengths.append(value.strip(" \t\r"))
    if len(lengths) != 1 or not CONTENT_LENGTH_PATTERN.fullmatch(lengths[0]):
        return 0
    length = int(lengths[0])
    return length if length <= limit else 0


def refusal_bytes(status: int, message: str, headers: dict[str, str] | None = None) -> bytes:
    """A whole JSON error answer that closes the connection."""
    data = json.dumps({"error": message}).encode("utf-8")
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Content-Type: application/json",
             f"Content-Length: {len(data)}", "Cache-Control: no-store", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + data


class ConnectionServer(HTTPServer):
    """An HTTP server whose `serve_forever` reads requests for all connections on one
    thread and answers each whole request on a worker thread (see the module docstring).
    The handler class gets a `Request` as its request and answers exactly one request."""

    request_queue_size = 128  # a burst of connections waits in the kernel, not refused

    def __init__(self, address, handler, limits: ConnectionLimits) -> None:
        super().__init__(address, handler)
        self.limits = limits
        self.selector = selectors.DefaultSelector()
        self.waiting: dict[socket.socket, _Waiting] = {}  # the loop thread's own
        self.soonest = float("inf")  # the nearest deadline of `waiting`
        self.lock = threading.Lock()  # guards the counts, briefly (workers change them too)
        self.open_count = 0
        self.open_by_address: Counter[str] = Counter()
        self.workers = 0
        self.wake_reader, self.wake_writer = socket.socketpair()  # shutdown wakes the loop
        self.wake_reader.setblocking(False)
        self.wake_writer.setblocking(False)
        self.stop = threading.Event()
        self.stopped = threading.Event()
        self.stopped.set()

    # -- the loop ----------------------------------------------------------------------

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self.stopped.clear()
        self.socket.setblocking(False)
        self.selector.register(self.socket, selectors.EVENT_READ, "listen")
        self.selector.register(self.wake_reader, selectors.EVENT_READ, "wake")
        try:
            while not self.stop.is_set():
                timeout = min(max(self.soonest - time.monotonic(), 0.0), poll_interval)
                events = [key.data for key, _ in self.selector.select(timeout)]
                # Bytes that came are read before a newcomer may close a connection to make
                # room: a request that has arrived whole is handed over, never cut.
                for waiting in events:
                    if isinstance(waiting, _Waiting) and \
                            self.waiting.get(waiting.connection) is waiting:
                        self._receive_safely(waiting)
                if "listen" in events:  # one at a time: each may close the slowest waiting
                    self._accept()
                if time.monotonic() >= self.soonest:
                    self._expire()
        finally:
            for waiting in list(self.waiting.values()):
                self._close(waiting)
            self.selector.unregister(self.socket)
            self.selector.unregister(self.wake_reader)
            self.stopped.set()

    def shutdown(self) -> None:
        """Stop `serve_forever` (from another thread) and wait until it has."""
        self.stop.set()
        self._wake()
        self.stopped.wait()

    def server_close(self) -> None:
        super().server_close()
        self.selector.close()
        self.wake_reader.close()
        self.wake_writer.close()

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], OSError):  # reset, broken pipe, timeout: not a bug
            return
        super().handle_error(request, client_address)

    # -- connections coming and going ----------------------------------------------------

    def _accept(self) -> None:
        try:
            connection, address = self.socket.accept()
        except OSError:  # gone before accepted, or out of descriptors: try again later
            return
        connection.setblocking(False)
        refusal = self._make_room(address[0])
        if refusal is not None:
            self._send_now(connection, refusal)
            connection.close()
            return
        with self.lock:
            self.open_count += 1
            self.open_by_address[address[0]] += 1
        now = time.monotonic()
        self._watch(_Waiting(connection, address, now + self.limits.request_timeout, now))

    def _make_room(self, host: str) -> bytes | None:
        """Close the slowest waiting connection when `host` or the server is at its bound;
        the refusal to send instead when every connection there is being answered."""
        per_address = self.limits.connections_per_address
        with self.lock:
            address_full = per_address is not None and self.open_by_address[host] >= per_address
            server_full = self.open_count >= self.limits.max_connections
        if not (address_full or server_full):
            return None
        candidates = [waiting for waiting in self.waiting.values()
                      if not address_full or waiting.address[0] == host]
        if not candidates:
            message = (f"this address has {per_address} connections being answered"
                       if address_full else
                       f"the server is answering {self.limits.max_connections} connections")
            return refusal_bytes(503, message + "; try again",
                                 {"Retry-After": str(RETRY_AFTER_BUSY_SECONDS)})
        now = time.monotonic()
        slowest = min(candidates, key=lambda waiting: _room_order(waiting, now))
        if slowest.buffer:  # tell a slow client why; an idle one just reconnects
            self._send_now(slowest.connection, refusal_bytes(
                503, "the connection was closed to make room: the request was not whole "
                     "yet; send it again", {"Retry-After": str(RETRY_AFTER_BUSY_SECONDS)}))
        self._close(slowest)
        return None

    def _watch(self, waiting: _Waiting) -> None:
        self.waiting[waiting.connection] = waiting
        self.selector.register(waiting.connection, selectors.EVENT_READ, waiting)
        self.soonest = min(self.soonest, waiting.deadline)

    def _unwatch(self, waiting: _Waiting) -> None:
        del self.waiting[waiting.connection]
        self.selector.unregister(waiting.connection)

    def _close(self, waiting: _Waiting) -> None:
        self._unwatch(waiting)
        self._forget(waiting.connection, waiting.address)

    def _forget(self, connection: socket.socket, address: tuple) -> None:
        """Close a connection and take it off the counts (from any thread)."""
        connection.close()
        with self.lock:
            self.open_count -= 1
            self.open_by_address[address[0]] -= 1
            if not self.open_by_address[address[0]]:
                del self.open_by_address[address[0]]

    @staticmethod
    def _send_now(connection: socket.socket, data: bytes) -> None:
        try:
            connection.send(data)  # non-blocking: what does not fit is cut
        except OSError:
            pass

    # -- reading requests ----------------------------------------------------------------

    def _receive_safely(self, waiting: _Waiting) -> None:
        """Read what came; a bug here closes that one connection, never the server."""
        try:
            self._receive(waiting)
        except Exception:
            self.handle_error(waiting.connection, waiting.address)
            if self.waiting.get(waiting.connection) is waiting:
                self._close(waiting)

    def _receive(self, waiting: _Waiting) -> None:
        try:
            data = waiting.connection.recv(RECEIVE_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(waiting)
            return
        if data:
            waiting.buffer += data
            self._advance(waiting)
        elif waiting.buffer:  # the client stopped sending: what came is the request, and
            self._hand_over(waiting)  # the handler says what is wrong with it
        else:
            self._close(waiting)

    def _advance(self, waiting: _Waiting) -> None:
        """Hand the request over once its head and body have arrived."""
        buffer = waiting.buffer
        if not waiting.head_length:
            end = HEAD_END.search(buffer, max(0, waiting.scanned - 3))
            if end is None:
                waiting.scanned = len(buffer)
                if len(buffer) > MAX_HEAD_BYTES:
                    self._refuse_long_head(waiting)
                return
            waiting.head_length = end.end()
            waiting.body_length = declared_body_length(bytes(buffer[:end.end()]),
                                                       self.limits.max_body_bytes)
        if len(buffer) >= waiting.head_length + waiting.body_length:
            self._hand_over(waiting)

    def _refuse_long_head(self, waiting: _Waiting) -> None:
        if b"\n" not in waiting.buffer:
            answer = refusal_bytes(414, f"the request line is longer than {MAX_HEAD_BYTES} "
                                        f"bytes")
        else:
            answer = refusal_bytes(431, f"the request's headers are longer than "
                                        f"{MAX_HEAD_BYTES} bytes")
        self._send_now(waiting.connection, answer)
        self._close(waiting)

    def _expire(self) -> None:
        """Close the connections past their deadline; 408 to those that sent a part."""
        now = time.monotonic()
        self.soonest = float("inf")
        for waiting in list(self.waiting.values()):
            if waiting.deadline > now:
                self.soonest = min(self.soonest, waiting.deadline)
                continue
            if waiting.buffer:
                part = "request body" if waiting.head_length else "request"
                self._send_now(waiting.connection, refusal_bytes(
                    408, f"the {part} did not arrive within "
                         f"{self.limits.request_timeout:g} s"))
            self._close(waiting)

    # -- answering -----------------------------------------------------------------------

    def _hand_over(self, waiting: _Waiting) -> None:
        """Give a whole request to a worker thread, or 503 when every worker is busy.
        Bytes after the request are dropped: the answer closes the connection."""
        self._unwatch(waiting)
        with self.lock:
            free = self.workers < self.limits.max_workers
            if free:
                self.workers += 1
        if free:
            worker = threading.Thread(target=self._answer, daemon=True, args=(
                waiting.connection, waiting.address, bytes(waiting.buffer)))
            try:
                worker.start()
                return
            except RuntimeError:  # no thread to be had: as busy
                with self.lock:
                    self.workers -= 1
        self._send_now(waiting.connection, refusal_bytes(
            503, f"the server is answering {self.limits.max_workers} requests; try again",
            {"Retry-After": str(RETRY_AFTER_BUSY_SECONDS)}))
        self._forget(waiting.connection, waiting.address)

    def _answer(self, connection: socket.socket, address: tuple, data: bytes) -> None:
        """A worker: answer one request, then close the connection."""
        try:
            # Blocking with a timeout: a client that stops reading the answer is let go.
            connection.settimeout(self.limits.request_timeout)
            self.RequestHandlerClass(Request(connection, data), address, self)
        except Exception:
            self.handle_error(connection, address)
        finally:
            with self.lock:
                self.workers -= 1
            self._forget(connection, address)

    def _wake(self) -> None:
        try:
            self.wake_writer.send(b"w")
        except OSError:  # full: a wake is already pending; closed: the server is gone
            pass
