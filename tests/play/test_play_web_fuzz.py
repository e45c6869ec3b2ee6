"""An HTTP fuzz against a real server on a loopback port: random methods, paths, headers
and bodies (nested JSON, huge numbers, bad UTF-8, wrong types, missing and foreign tokens,
false Content-Lengths), half of them from 8 threads at once. No answer may be a 5xx, none
may hang, every refusal is JSON with a message, a game owned by a token the fuzz never
uses stays as it was, and the server answers a good request afterwards."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter

import pytest
import torch

from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.play.web import MAX_BODY_BYTES
from tests.export.tiny_model import tiny_model_file
from tests.play.web_helpers import (
    FakePlayer,
    call,
    new_game,
    raw_request,
    request_bytes,
    running_server,
    snapshot,
)

METHODS = ["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "BREW", "get", "TRACE",
           "CONNECT", "M-SEARCH", "GET\x01", "P\xd6ST"]
PATHS = ["/", "/index.html", "/static/app.js", "/static/style.css", "/static/../web.py",
         "/static/", "/api/info", "/api/state", "/api/new", "/api/move", "/api/swap",
         "/api/undo", "/api/", "/api/new/", "/API/NEW", "//api/new", "/api/new?x=1",
         "/api/state?game=", "/api/state?game=%00%ff", "/api/state?game=a&game=b", "/%",
         "/" + "a" * 3000, "/api/state?" + "x=1&" * 12, "http://[::1/api/info", "*",
         "/api/info#frag", "/\u00e9\u00e8", "/api/state?game=" + "9" * 500]
HEADER_NAMES = ["X-Catena-Token", "Content-Type", "Accept", "Cookie", "Origin", "Expect",
                "Connection", "Transfer-Encoding", "X-Forwarded-For", "Range", "X-\u00ff"]


def hostile_body(rng: random.Random, games: list[str], victim: str) -> bytes:
    game = rng.choice(games + [victim, victim, "", "0" * 12, "nope"])
    values = [None, True, 0, -1, 3, 6, 11, 2.5, 10**17, -(10**17), "", "auto", "black", "red",
              "x" * 300, [], {}, [1, [2, [3]]], {"a": {"b": {}}}, "F6", "C3", "button", "A0",
              "\u00b2", "\ud800", game]
    kind = rng.randrange(10)
    if kind == 0:
        depth = rng.choice([20, 100, 5000])
        return (b"[" * depth + b"]" * depth)[: MAX_BODY_BYTES]
    if kind == 1:
        return b'{"side": ' + b"9" * rng.choice([19, 500, 5000]) + b"}"
    if kind == 2:
        return rng.randbytes(rng.randrange(1, 200))
    if kind == 3:
        return rng.choice([b"NaN", b'{"komi": NaN}', b'{"komi": -Infinity}', b"null", b"[]",
                           b'"x"', b"1e999", b'{"a": 1e999}', b"\xef\xbb\xbf{}", b"{,}",
                           b'{"game": "\\ud800"}'])
    body = {}
    for name in rng.sample(["side", "game_type", "scoring", "komi", "colour", "game", "move",
                            "token", "extra"], k=rng.randrange(0, 6)):
        body[name] = rng.choice(values)
    if kind < 7:
        body["game"] = game
    if kind < 6:
        body["move"] = rng.choice(["A1", "B2", "C3", "D4", "E5", "button", "pass", "F6"])
    return json.dumps(body, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")


def hostile_request(rng: random.Random, games: list[str], tokens: list[str],
                    victim: str) -> bytes:
    path = rng.choice(PATHS + [f"/api/state?game={rng.choice(games + [victim])}"] * 6
                      + ["/api/move", "/api/undo", "/api/swap", "/api/new"] * 4)
    right = "POST" if path.startswith(("/api/new", "/api/move", "/api/swap", "/api/undo")) \
        else "GET"
    method = right if rng.random() < 0.7 else rng.choice(METHODS)
    headers = {}
    token = rng.random()
    if token < 0.45 and tokens:
        headers["X-Catena-Token"] = rng.choice(tokens)  # a token of the fuzz's own games
    elif token < 0.65:
        headers["X-Catena-Token"] = rng.choice(["", "x", "\u00e9" * 30, "A" * 32, "a" * 5000])
    for _ in range(rng.randrange(0, 3)):
        headers[rng.choice(HEADER_NAMES)] = rng.choice(
            ["application/json", "text/plain", "100-continue", "keep-alive", "chunked",
             "\u00ff\u00fe", "", "x" * 2000, "bytes=0-1"])
    body = hostile_body(rng, games, victim) if rng.random() < 0.8 else b""
    length = None
    choice = rng.random()
    if choice < 0.06:
        length = rng.choice([10**9, 10**15, MAX_BODY_BYTES + 1, -1])
    elif choice < 0.1:
        length = len(body) + rng.randrange(1, 50)  # the body ends early
    elif choice < 0.13:
        headers["Content-Length"] = rng.choice(["abc", "1_0", " 5", "+3", "0x10", "\u0665"])
    version = rng.choice(["HTTP/1.1"] * 8 + ["HTTP/1.0", "HTTP/2.0", "HTTP/9", "HTTX/1.1"])
    return request_bytes(method, path, body, headers, version, length)


def fuzz(count: int, seed: int, threads: int = 8, player=None) -> Counter:
    """`count` hostile requests, the first half one by one, the second from `threads`;
    the answers' statuses counted. `player` defaults to the fast FakePlayer."""
    player = player if player is not None else FakePlayer(seed=seed)
    with running_server(player, max_games=4096, request_timeout=2.0,
                        max_connections=64) as server:
        port = server.server_address[1]
        victim = new_game(port)
        status, victim_state = call(port, "POST", "/api/move",
                                    {"game": victim["game"], "move": "C3"},
                                    token=victim["token"])
        assert status == 200
        games, tokens = [], []
        for _ in range(4):
            state = new_game(port)
            games.append(state["game"])
            tokens.append(state["token"])
        statuses: Counter = Counter()
        failures: list[str] = []
        lock = threading.Lock()

        def one(rng: random.Random) -> None:
            data = hostile_request(rng, games, tokens, victim["game"])
            try:
                status, headers, body = raw_request(port, data, timeout=10)
            except TimeoutError:
                failures.append(f"hang: {data[:120]!r}")
                return
            except ConnectionResetError:  # a refusal before the whole request was read
                status, headers, body = "reset", {}, b""
            with lock:
                statuses[status] += 1
            if status == "reset":
                return
            if status is None or status >= 500:
                failures.append(f"{status}: {data[:120]!r} -> {body[:200]!r}")
                return
            answer = json.loads(body) if body and "json" in headers.get("content-type", "") \
                else None
            if status >= 400 and not data.startswith(b"HEAD") and not (
                    answer and isinstance(answer.get("error"), str) and answer["error"]):
                failures.append(f"{status} without a JSON message: {data[:120]!r} {body[:200]!r}")
            if status == 405 and "allow" not in headers:
                failures.append(f"405 without Allow: {data[:120]!r}")
            if status == 200 and isinstance(answer, dict) and "token" in answer:
                with lock:  # a game the fuzz made: its token is another foreign token
                    games.append(answer["game"])
                    tokens.append(answer["token"])

        rng = random.Random(seed)
        for _ in range(count // 2):
            one(rng)

        rest = count - count // 2

        def worker(index: int) -> None:
            local = random.Random(seed * 1000 + index)
            for _ in range(rest // threads + (index < rest % threads)):
                one(local)

        pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join(timeout=300)
        assert not any(thread.is_alive() for thread in pool)
        assert not failures, failures[:5]
        status, after = call(port, "GET", f"/api/state?game={victim['game']}",
                             token=victim["token"], timeout=5)
        assert status == 200 and snapshot(after) == snapshot(victim_state)
        assert call(port, "GET", "/api/info", timeout=5)[0] == 200
        status, moved = call(port, "POST", "/api/undo", {"game": victim["game"]},
                             token=victim["token"], timeout=5)
        assert status == 200 and moved["history"] == []
        return statuses


def test_http_fuzz_of_1000_requests() -> None:
    start = time.monotonic()
    statuses = fuzz(1000, seed=1)
    # A refusal before the body was read (413) closes with bytes unread, which the kernel
    # may turn into a reset; none happened in practice, a few are tolerated.
    assert sum(statuses.values()) == 1000 and statuses["reset"] <= 10, statuses
    # The mix reaches games (200), refusals of every kind and foreign tokens (403).
    assert statuses[200] > 20 and statuses[400] > 200 and statuses[403] > 20, statuses
    assert statuses[405] > 20 and statuses[411] + statuses[413] > 5, statuses
    assert time.monotonic() - start < 60  # about 3 s on a quiet 2-core machine


@pytest.mark.slow
def test_http_fuzz_against_the_model_player_and_more_seeds() -> None:
    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(tiny_model_file(3)), PlayerConfig(simulations=4))
    fuzz(1000, seed=7, player=player)
    for seed in range(2, 6):
        fuzz(1000, seed=seed)
