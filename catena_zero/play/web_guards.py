"""The web server's guards: which requests it takes from where, and how many requests to the
model one client has at once.

Where from. A web page the person visits may send requests to this server from their
browser (the browser lets any page post a form or `text/plain` to any address), and a name
the attacker controls may be made to resolve to this machine (DNS rebinding), which puts
the attacker's page on the server's own origin as far as the browser can tell. So:
- a `Host` that is not the server's own gets 421: the own ones are 127.0.0.1, localhost,
  [::1] and the host it listens on (any IP address when it listens on every interface),
  each with the server's port or none, and the names in `allowed_hosts` (with any port: a
  reverse proxy's). A rebinding page's requests carry the attacker's name, never these;
- an `Origin` that is not `http://` or `https://` and such a host (the port is the
  server's unless the name is in `allowed_hosts`) gets 403, `null` too. Browsers send
  `Origin` with every POST and with every request from another origin; other clients
  send none and are not refused for that;
- a POST whose `Content-Type` is not `application/json` gets 415 (web.py checks it with
  the body): a page of another origin can only send `application/json` after the browser
  has asked the server with an OPTIONS request, which answers 405.
Each check refuses before anything changes.

Model requests. Every POST (it may start a game, in which the model may open, or make the
model answer a move) and the record and replay reads (they wait for a game's model) hold
a worker while the model searches or while they wait for it, up to the 10 s a change waits
for a busy game. One client has at most `per_client` of them at once: the next gets 429
with `Retry-After` at once, holding nothing. A client is its address when the server
listens beyond loopback; on loopback every client is this machine (or a reverse proxy's
one address), so a client is the page, told by its token when the server gave it games,
else the address. All clients together have at most `total` (three quarters of the
workers): the rest always answer the quick requests (pages, `/api/info`, `/api/state`),
so however many tokens a flood gathers, reads are never refused for want of a worker.
"""

from __future__ import annotations

import contextlib
import ipaddress
import threading
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from email.message import Message

from catena_zero.play.web_games import ApiError, shown

OWN_NAMES = ("127.0.0.1", "localhost", "[::1]")
EVERY_INTERFACE = ("", "0.0.0.0", "::")
RETRY_AFTER_THINKING_SECONDS = 2  # a model request lasts about a think time


def split_host(text: str) -> tuple[str, int | None] | None:
    """A Host value `name`, `name:port`, `[v6]` or `[v6]:port` -> (lower-case name, IPv6
    in brackets; port or None); None when malformed."""
    text = text.strip().lower()
    if text.startswith("["):
        name, bracket, rest = text.partition("]")
        name += bracket
        if not bracket or rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, colon, port_text = text.partition(":")
        port_text = port_text if colon else None
    if not name or any(character in name for character in "/@?#\\ \t"):
        return None
    if port_text is None:
        return name, None
    if not port_text.isascii() or not port_text.isdigit() or len(port_text) > 5:
        return None
    return name, int(port_text)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name[1:-1] if name.startswith("[") else name)
    except ValueError:
        return False
    return True


class OwnOrigins:
    """The Host and Origin values of the server at `host`:`port` (see the module
    docstring); `check` refuses the others."""

    def __init__(self, host: str, port: int, allowed_hosts: Sequence[str] = ()) -> None:
        self.port = port
        bound = host.strip().lower()
        if ":" in bound and not bound.startswith("["):  # an IPv6 address: in brackets
            bound = f"[{bound}]"
        self.names = {*OWN_NAMES, bound}
        self.any_address = host in EVERY_INTERFACE
        self.allowed = {name.strip().lower() for name in allowed_hosts}

    def own(self, name: str, port: int | None) -> bool:
        """Whether `name` (as split_host gives it) with `port` is this server."""
        if name in self.allowed:
            return True
        if port is not None and port != self.port:
            return False
        return name in self.names or self.any_address and _is_address(name)

    def check(self, headers: Message) -> None:
        """ApiError 421 for a foreign Host, 403 for a foreign Origin; nothing otherwise."""
        hosts = headers.get_all("Host", [])
        if len(hosts) > 1:
            raise ApiError(400, "send one Host header")
        split = split_host(hosts[0]) if hosts else None
        if hosts and (split is None or not self.own(*split)):
            raise ApiError(421, f"Host {shown(hosts[0])} is not this server's name; open "
                                f"http://127.0.0.1:{self.port}/ or name the host in "
                                f"allowed_hosts")
        origins = headers.get_all("Origin", [])
        if len(origins) > 1 or origins and not self._own_origin(origins[0]):
            raise ApiError(403, f"requests from the page at {shown(origins[0])} are refused: "
                                f"only this server's own page may send them")

    def _own_origin(self, origin: str) -> bool:
        scheme, separator, rest = origin.strip().lower().partition("://")
        if not separator or scheme not in ("http", "https"):
            return False  # "null" (a file, a sandboxed frame) too
        split = split_host(rest)
        if split is None:
            return False
        name, port = split
        default = 80 if scheme == "http" else 443
        return self.own(name, default if port is None else port)


def json_content_type(headers: Message) -> None:
    """ApiError 415 unless the request says its body is JSON (`application/json`, with
    parameters such as `charset` or not)."""
    kinds = headers.get_all("Content-Type", [])
    kind = kinds[0].partition(";")[0].strip().lower() if len(kinds) == 1 else None
    if kind != "application/json":
        told = shown(kinds[0]) if len(kinds) == 1 else f"{len(kinds)} Content-Type headers"
        raise ApiError(415, f"send the body as Content-Type: application/json, not {told}",
                       {"Accept-Post": "application/json"})


class ModelRequests:
    """How many model requests each client, and all together, have running (see the
    module docstring); `slot(client)` holds one or raises ApiError 429 (the client's
    bound) or 503 (the total)."""

    def __init__(self, per_client: int, total: int) -> None:
        self.per_client = per_client
        self.total = total
        self.lock = threading.Lock()
        self.running: Counter[Hashable] = Counter()

    @staticmethod
    def bound_of(max_workers: int) -> int:
        """The total for `max_workers` workers: a quarter of them (none of fewer than 4)
        keep answering quick requests."""
        return max_workers - max_workers // 4

    @contextlib.contextmanager
    def slot(self, client: Hashable) -> Iterator[None]:
        retry = {"Retry-After": str(RETRY_AFTER_THINKING_SECONDS)}
        with self.lock:
            if self.running[client] >= self.per_client:
                raise ApiError(429, f"this client already has {self.per_client} requests "
                                    f"to the model running; send more when one is answered",
                               retry)
            if sum(self.running.values()) >= self.total:
                raise ApiError(503, f"the server is answering {self.total} requests to the "
                                    f"model; try again", retry)
            self.running[client] += 1
        try:
            yield
        finally:
            with self.lock:
                self.running[client] -= 1
                if not self.running[client]:
                    del self.running[client]
