"""The web server's guards: one client's requests to the model cannot take every worker,
and requests from another site's page, or through a name that is not the server's (DNS
rebinding), change nothing."""

from __future__ import annotations

import threading
import time

import pytest

from catena_zero.play.web import ServeConfig
from catena_zero.play.web_guards import ModelRequests, OwnOrigins, split_host
from tests.play.web_helpers import (
    FakePlayer,
    call,
    new_game,
    raw_request,
    request_bytes,
    running_server,
)

STRANGER = "127.0.0.2"  # clients from other loopback addresses: Linux routes all of 127/8
FLOODER = "127.0.0.3"
QUICK_SECONDS = 1.0
HELD_KOMI = 7  # the model's move in a game of this komi waits for the test's gate


class HeldSearches:
    """A FakePlayer whose searches in komi-7 games wait for `release` (at most 10 s, so a
    failed test still ends), counting how many are waiting."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.waiting = 0
        self.player = FakePlayer(before_move=self._hold)

    def _hold(self, game) -> None:
        if game.komi != HELD_KOMI:
            return
        with self.lock:
            self.waiting += 1
        self.gate.wait(10)

    def wait_for(self, count: int, seconds: float = 5.0) -> None:
        deadline = time.monotonic() + seconds
        while self.waiting < count:
            assert time.monotonic() < deadline, f"{self.waiting} of {count} searches held"
            time.sleep(0.01)


def send_moves(port: int, games: list[dict], source: str | None, answers: list) -> list:
    """A move in each game at once, each from its own thread; the threads."""
    def move(game: dict) -> None:
        answers.append(call(port, "POST", "/api/move", {"game": game["game"], "move": "C3"},
                            token=game["token"], timeout=15, source=source))

    threads = [threading.Thread(target=move, args=(game,)) for game in games]
    for thread in threads:
        thread.start()
    return threads


def wait_for_answers(answers: list, count: int, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while len(answers) < count:
        assert time.monotonic() < deadline, f"{len(answers)} of {count} answered"
        time.sleep(0.01)


def wait_for_workers(server, count: int, seconds: float = 2.0) -> None:
    """Wait until at most `count` workers are busy (one that wrote a refusal counts itself
    free a moment after its client has read it)."""
    deadline = time.monotonic() + seconds
    while server.workers > count:
        assert time.monotonic() < deadline, f"{server.workers} workers busy, not {count}"
        time.sleep(0.01)


# -- requests to the model, per client ----------------------------------------------------


def test_one_address_flooding_the_model_cannot_starve_another_address() -> None:
    held = HeldSearches()
    with running_server(held.player, limit_addresses=True, max_games=128,
                        games_per_address=64) as server:
        port = server.server_address[1]
        flood = [new_game(port, source=FLOODER, komi=HELD_KOMI) for _ in range(40)]
        other = new_game(port, source=STRANGER)
        answers: list = []
        threads = send_moves(port, flood, FLOODER, answers)
        try:
            held.wait_for(4)
            wait_for_answers(answers, 36)  # the rest are refused at once
            wait_for_workers(server, 4)  # the flooder holds its bound of workers, no more
            refused = [answer for status, answer in answers if status == 429]
            assert len(refused) == 36 and "4 requests to the model" in refused[0]["error"]
            start = time.monotonic()
            status, state = call(port, "POST", "/api/move", {"game": other["game"],
                                 "move": "C3"}, token=other["token"], source=STRANGER)
            assert status == 200 and len(state["history"]) == 2, state
            assert time.monotonic() - start < QUICK_SECONDS
        finally:
            held.gate.set()
            for thread in threads:
                thread.join(timeout=15)
        assert sorted(status for status, _ in answers) == [200] * 4 + [429] * 36


def test_the_refusal_says_when_to_try_again_and_changes_nothing() -> None:
    held = HeldSearches()
    with running_server(held.player, thinking_per_client=1) as server:
        port = server.server_address[1]
        game = new_game(port, komi=HELD_KOMI)
        other = new_game(port, token=game["token"])  # the same page's second game
        threads = send_moves(port, [game], None, [])
        try:
            held.wait_for(1)
            body = b'{"game": "%s", "move": "C3"}' % other["game"].encode()
            status, headers, answer = raw_request(port, request_bytes(
                "POST", "/api/move", body, {"X-Catena-Token": game["token"]}))
            assert status == 429 and int(headers["retry-after"]) > 0
            assert b"requests to the model running" in answer
            status, state = call(port, "GET", f"/api/state?game={other['game']}",
                                 token=game["token"])  # reads are not model requests
            assert status == 200 and state["history"] == []
        finally:
            held.gate.set()
            for thread in threads:
                thread.join(timeout=15)


def test_on_loopback_each_page_is_counted_by_its_token() -> None:
    held = HeldSearches()
    with running_server(held.player, thinking_per_client=2) as server:
        port = server.server_address[1]
        first = new_game(port, komi=HELD_KOMI)
        busy = [first] + [new_game(port, token=first["token"], komi=HELD_KOMI)
                          for _ in range(3)]
        other = new_game(port)  # another page, also on 127.0.0.1
        answers: list = []
        threads = send_moves(port, busy, None, answers)
        try:
            held.wait_for(2)
            wait_for_answers(answers, 2)
            assert sorted(status for status, _ in answers) == [429, 429]
            status, state = call(port, "POST", "/api/move", {"game": other["game"],
                                 "move": "C3"}, token=other["token"])
            assert status == 200 and len(state["history"]) == 2
        finally:
            held.gate.set()
            for thread in threads:
                thread.join(timeout=15)


def test_model_requests_together_leave_a_quarter_of_the_workers_for_reads() -> None:
    held = HeldSearches()
    with running_server(held.player, max_workers=4) as server:  # 3 model requests at once
        port = server.server_address[1]
        pages = [new_game(port, komi=HELD_KOMI) for _ in range(4)]
        answers: list = []
        threads = send_moves(port, pages[:3], None, answers)
        try:
            held.wait_for(3)
            status, headers, body = raw_request(port, request_bytes(
                "POST", "/api/move", b'{"game": "%s", "move": "C3"}' % pages[3]["game"].encode(),
                {"X-Catena-Token": pages[3]["token"]}))
            assert status == 503 and int(headers["retry-after"]) > 0, body
            for page in pages:
                wait_for_workers(server, 3)
                assert call(port, "GET", f"/api/state?game={page['game']}",
                            token=page["token"], timeout=QUICK_SECONDS)[0] == 200
        finally:
            held.gate.set()
            for thread in threads:
                thread.join(timeout=15)
        assert sorted(status for status, _ in answers) == [200] * 3


def test_the_bounds_on_model_requests() -> None:
    assert [ModelRequests.bound_of(workers) for workers in (1, 2, 4, 32)] == [1, 2, 3, 24]
    assert ServeConfig().thinking_per_client == 4
    assert ServeConfig().connections_per_address < ServeConfig().max_workers
    with pytest.raises(ValueError, match="thinking_per_client must be >= 1"):
        ServeConfig(thinking_per_client=0)


# -- requests from elsewhere ----------------------------------------------------------------


def test_another_sites_text_plain_posts_change_nothing() -> None:
    with running_server(FakePlayer(), max_games=64) as server:
        port = server.server_address[1]
        service = server.RequestHandlerClass.service
        mine = new_game(port)
        status, played = call(port, "POST", "/api/move", {"game": mine["game"], "move": "C3"},
                              token=mine["token"])
        assert status == 200
        for _ in range(64):  # what a form or fetch(no-cors) of any web page sends
            status, _, body = raw_request(port, request_bytes("POST", "/api/new", b'{"side": 3}', {
                "Content-Type": "text/plain", "Origin": "http://evil.example"}))
            assert status == 403 and b"only this server's own page" in body
            status, _, body = raw_request(port, request_bytes("POST", "/api/new", b'{"side": 3}', {
                "Content-Type": "text/plain;charset=UTF-8"}))
            assert status == 415 and b"application/json" in body
        assert len(service.games) == 1
        status, state = call(port, "GET", f"/api/state?game={mine['game']}", token=mine["token"])
        assert status == 200 and state["history"] == played["history"]


def host_request(port: int, method: str, path: str, host: str | None,
                 origin: str | None = None) -> int | None:
    head = [f"{method} {path} HTTP/1.1"] + ([f"Host: {host}"] if host is not None else [])
    head += [f"Origin: {origin}"] if origin is not None else []
    body = b'{"side": 3}' if method == "POST" else b""
    if method == "POST":
        head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return raw_request(port, ("\r\n".join(head) + "\r\n\r\n").encode() + body)[0]


def test_a_name_that_is_not_the_servers_is_refused() -> None:
    with running_server(FakePlayer(), allowed_hosts=["catena.example"]) as server:
        port = server.server_address[1]
        service = server.RequestHandlerClass.service
        for host in ("rebind.example", f"rebind.example:{port}", f"127.0.0.1:{port + 1}",
                     "127.0.0.2", "localhost.evil", "", "a b", f"[::1]x:{port}"):
            for method, path in (("GET", "/api/info"), ("GET", "/"), ("POST", "/api/new")):
                assert host_request(port, method, path, host) == 421, (host, path)
        assert not service.games
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "127.0.0.1",
                     "LOCALHOST", None, "catena.example", "catena.example:443"):
            assert host_request(port, "GET", "/api/info", host) == 200, host
        assert host_request(port, "POST", "/api/new", f"localhost:{port}") == 200


def test_only_the_servers_own_pages_may_send_from_a_browser() -> None:
    with running_server(FakePlayer()) as server:
        port = server.server_address[1]
        host = f"127.0.0.1:{port}"
        for origin in ("http://evil.example", f"http://evil.example:{port}", "null",
                       "http://127.0.0.1", f"http://127.0.0.1:{port + 1}", f"file://{host}",
                       f"http://{host}/path", f"http://user@{host}", ""):
            assert host_request(port, "POST", "/api/new", host, origin) == 403, origin
            assert host_request(port, "GET", "/api/info", host, origin) == 403, origin
        for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}",
                       f"http://[::1]:{port}", f"HTTP://LOCALHOST:{port}"):
            assert host_request(port, "POST", "/api/new", host, origin) == 200, origin


def test_host_and_origin_values() -> None:
    assert split_host("Example.COM:80") == ("example.com", 80)
    assert split_host("[::1]") == ("[::1]", None) and split_host("[::1]:9") == ("[::1]", 9)
    for bad in ("", ":80", "a:b", "a:123456", "[::1", "[::1]9", "a/b", "a@b"):
        assert split_host(bad) is None, bad
    everywhere = OwnOrigins("0.0.0.0", 8765)
    assert everywhere.own("192.168.1.5", 8765) and everywhere.own("[fe80::1]", None)
    assert not everywhere.own("box.lan", 8765) and not everywhere.own("192.168.1.5", 80)
    one = OwnOrigins("192.168.1.5", 8765)
    assert one.own("192.168.1.5", 8765) and not one.own("192.168.1.6", 8765)
    assert OwnOrigins("::1", 8765).own("[::1]", 8765)
    with pytest.raises(ValueError, match="allowed_hosts takes host names"):
        ServeConfig(allowed_hosts=["proxy.example:443"])
