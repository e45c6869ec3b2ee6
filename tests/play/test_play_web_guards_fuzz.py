"""Fuzz of the web server's guards against a real server on a loopback port: random Host,
Origin and Content-Type combinations (only those of the server's own page change
anything, and each refusal names the first rule broken), and random floods of requests
to the model from several addresses (each gets its own bound, the excess 429 at once)."""

from __future__ import annotations

import random
import time

import pytest

from tests.play.test_play_web_guards import HELD_KOMI, HeldSearches, send_moves
from tests.play.web_helpers import FakePlayer, call, new_game, raw_request, running_server

PROXY = "catena.example"  # the name a reverse proxy gives the server (allowed_hosts)


def host_values(port: int) -> list[tuple[str | None, bool]]:
    """(Host header or None for none, whether it is the server's own)."""
    return [(f"127.0.0.1:{port}", True), (f"localhost:{port}", True), (f"[::1]:{port}", True),
            ("127.0.0.1", True), ("LocalHost", True), (PROXY, True), (f"{PROXY}:8080", True),
            (None, True), ("evil.example", False), (f"evil.example:{port}", False),
            (f"127.0.0.1:{port + 1}", False), ("127.0.0.2", False), ("10.0.0.1", False),
            (f"localhost.evil.example:{port}", False), ("", False), (f"{PROXY}.evil", False),
            (f"[::2]:{port}", False), (f"localhost:{port}:{port}", False)]


def origin_values(port: int) -> list[tuple[str | None, bool]]:
    return [(None, True), (f"http://127.0.0.1:{port}", True), (f"http://localhost:{port}", True),
            (f"http://[::1]:{port}", True), (f"https://{PROXY}", True),
            (f"http://{PROXY}:81", True), ("null", False), ("http://evil.example", False),
            (f"http://127.0.0.1:{port + 1}", False), ("http://127.0.0.1", False),
            (f"ftp://localhost:{port}", False), ("", False),
            (f"http://localhost:{port}/page", False), (f"http://evil.example:{port}", False),
            (f"chrome-extension://{port}", False)]


CONTENT_TYPES = [("application/json", True), ("application/json; charset=utf-8", True),
                 ("Application/JSON", True), (None, False), ("text/plain", False),
                 ("text/plain;charset=UTF-8", False), ("application/x-www-form-urlencoded", False),
                 ("multipart/form-data; boundary=x", False), ("application/jsonp", False),
                 ("", False), ("application/json, text/plain", False)]


def send(port: int, method: str, path: str, body: bytes, headers: dict[str, str | None]
         ) -> tuple[int | None, bytes]:
    lines = [f"{method} {path} HTTP/1.1"]
    lines += [f"{name}: {value}" for name, value in headers.items() if value is not None]
    if method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    status, _, answer = raw_request(port, ("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    return status, answer


@pytest.mark.parametrize("seed", [1, 2])
def test_only_the_servers_own_page_changes_anything(seed: int) -> None:
    rng = random.Random(seed)
    with running_server(FakePlayer(seed=seed), max_games=4096,
                        allowed_hosts=[PROXY]) as server:
        port = server.server_address[1]
        service = server.RequestHandlerClass.service
        hosts, origins = host_values(port), origin_values(port)
        victim = new_game(port)
        changed = refused = 0
        for _ in range(300):
            route = rng.choice(["/api/new", "/api/move", "/api/state"])
            method = "GET" if route == "/api/state" else "POST"
            (host, host_ok), (origin, origin_ok) = rng.choice(hosts), rng.choice(origins)
            kind, kind_ok = rng.choice(CONTENT_TYPES) if method == "POST" else (None, True)
            headers = {"Host": host, "Origin": origin, "Content-Type": kind,
                       "X-Catena-Token": None if route == "/api/new" else victim["token"]}
            before_games = len(service.games)
            before = call(port, "GET", f"/api/state?game={victim['game']}",
                          token=victim["token"])[1]
            legal = [cell for cell, free in zip(before["cells"], before["legal"], strict=True)
                     if free] or ["button"]
            if route == "/api/new":
                body = b'{"side": 3}'
            elif route == "/api/move":
                body = b'{"game": "%s", "move": "%s"}' % (victim["game"].encode(),
                                                         rng.choice(legal).encode())
            else:
                route, body = f"/api/state?game={victim['game']}", b""
            status, answer = send(port, method, route, body, headers)
            after = call(port, "GET", f"/api/state?game={victim['game']}",
                         token=victim["token"])[1]
            expected = (421 if not host_ok else 403 if not origin_ok else
                        415 if not kind_ok else 200)
            assert status == expected, (method, route, headers, answer[:200])
            if expected != 200:
                refused += 1
                assert len(service.games) == before_games
                assert after["history"] == before["history"]
                continue
            changed += method == "POST"
            if route == "/api/new":
                assert len(service.games) == before_games + 1
            elif route == "/api/move":
                assert len(after["history"]) > len(before["history"])
            if after["over"]:  # a side-3 game ends soon: go on in a fresh one
                victim = new_game(port)
        assert changed > 5 and refused > 150, (changed, refused)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_address_gets_its_own_bound_of_model_requests(seed: int) -> None:
    rng = random.Random(seed)
    bound = rng.randint(1, 4)
    held = HeldSearches()
    with running_server(held.player, limit_addresses=True, max_games=256,
                        games_per_address=16, thinking_per_client=bound) as server:
        port = server.server_address[1]
        sent = {f"127.0.0.{10 + index}": rng.randint(0, 8) for index in range(rng.randint(2, 5))}
        games = {address: [new_game(port, source=address, komi=HELD_KOMI)
                           for _ in range(count)] for address, count in sent.items()}
        answers = {address: [] for address in sent}
        threads = []
        try:
            for address in sent:
                threads += send_moves(port, games[address], address, answers[address])
            running = sum(min(count, bound) for count in sent.values())
            held.wait_for(running)
            deadline = time.monotonic() + 5
            while sum(map(len, answers.values())) < sum(sent.values()) - running:
                assert time.monotonic() < deadline, (sent, bound, answers)
                time.sleep(0.01)
            for address, count in sent.items():
                statuses = [status for status, _ in answers[address]]
                assert statuses == [429] * max(0, count - bound), (address, count, bound)
            # Another address is answered at once, a move and a read, whatever the flood.
            other = new_game(port, source="127.0.0.99")
            start = time.monotonic()
            status, state = call(port, "POST", "/api/move", {"game": other["game"],
                                 "move": "C3"}, token=other["token"], source="127.0.0.99")
            assert status == 200 and time.monotonic() - start < 1.0
        finally:
            held.gate.set()
            for thread in threads:
                thread.join(timeout=15)
        for address, count in sent.items():
            statuses = sorted(status for status, _ in answers[address])
            assert statuses == [200] * min(count, bound) + [429] * max(0, count - bound)
        slots = server.RequestHandlerClass.model_requests
        deadline = time.monotonic() + 2
        while slots.running:  # each slot is given back when its answer is written
            assert time.monotonic() < deadline, slots.running
            time.sleep(0.01)


def test_a_page_flooding_one_game_holds_one_slot_and_gets_it_back() -> None:
    held = HeldSearches()
    with running_server(held.player, thinking_per_client=1) as server:
        port = server.server_address[1]
        game = new_game(port, komi=HELD_KOMI)
        answers: list = []
        threads = send_moves(port, [game] * 6, None, answers)  # one runs, five wait or 429
        try:
            held.wait_for(1)
            deadline = time.monotonic() + 5
            while len(answers) < 5:
                assert time.monotonic() < deadline, answers
                time.sleep(0.01)
            assert [status for status, _ in answers] == [429] * 5
        finally:
            held.gate.set()
            for thread in threads:
                thread.join(timeout=15)
        assert sorted(status for status, _ in answers) == [200] + [429] * 5
        deadline = time.monotonic() + 2
        while server.RequestHandlerClass.model_requests.running:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        state = call(port, "GET", f"/api/state?game={game['game']}", token=game["token"])[1]
        cell = next(name for name, free in zip(state["cells"], state["legal"], strict=True) if free)
        status, after = call(port, "POST", "/api/move", {"game": game["game"], "move": cell},
                             token=game["token"], timeout=15)
        assert status == 200 and len(after["history"]) == 4
