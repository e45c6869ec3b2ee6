"""The web server refuses cleanly: bad bodies and methods get a 4xx JSON answer, games
belong to their token, new games cannot push out games in play, one slow search does not
hold up other games, idle or trickling connections are closed and hold no thread."""

from __future__ import annotations

import json
import re
import socket
import threading
import time

import pytest

from catena_zero.play import web_games
from catena_zero.play.web import MAX_BODY_BYTES, ServeConfig, parse_body
from catena_zero.play.web_games import ApiError
from tests.play.web_helpers import (
    LOOPBACK,
    FakePlayer,
    call,
    new_game,
    raw_request,
    request_bytes,
    running_server,
    snapshot,
    wait_for_free_workers,
)


@pytest.fixture(scope="module")
def port():
    with running_server(FakePlayer(), request_timeout=2.0) as server:
        yield server.server_address[1]


def played_game(port: int) -> dict:
    """A game with one move each; its state with its token."""
    state = new_game(port)
    status, after = call(port, "POST", "/api/move", {"game": state["game"], "move": "C3"},
                         token=state["token"])
    assert status == 200
    return {**after, "token": state["token"]}


def current(port: int, state: dict) -> tuple:
    status, now = call(port, "GET", f"/api/state?game={state['game']}", token=state["token"])
    assert status == 200, now
    return snapshot(now)


EVERY_ROUTE = ("/api/new", "/api/move", "/api/undo", "/api/swap")
BAD_BODIES = [
    (b"[" * 5000, "nests deeper", EVERY_ROUTE),
    (b'{"game": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nests deeper", EVERY_ROUTE),
    (b'{"side": ' + b"9" * 5000 + b"}", "at most 18 digits", EVERY_ROUTE),
    (b'{"komi": -' + b"1" * 19 + b"}", "at most 18 digits", EVERY_ROUTE),
    (b'{"komi": NaN}', "NaN is not a JSON number", EVERY_ROUTE),
    (b'{"komi": Infinity}', "Infinity is not a JSON number", EVERY_ROUTE),
    (b'{"side": "\xff"}', "not UTF-8", EVERY_ROUTE),
    (b'"just a string"', "must be a JSON object", EVERY_ROUTE),
    (b'{"side": 3, "komi": 1e999}', "komi must be a whole number", ("/api/new",)),
    (b'{"side": 3, "game_type": "' + b"k" * 10000 + b'"}', "at most 40 characters",
     ("/api/new",)),
    (b'{"game": "' + b"g" * 10000 + b'", "move": "A1"}', "unknown game", ("/api/move",)),
    (b'{"game": 5, "move": "' + b"m" * 10000 + b'"}', "move must be", ("/api/move",)),
    (b'{"game": {"a": [1, 2]}}', "unknown game", ("/api/undo", "/api/swap")),
]


@pytest.mark.parametrize(("raw", "message", "routes"), BAD_BODIES, ids=lambda v: ascii(v)[:24])
def test_bad_bodies_get_400_with_a_message_and_change_nothing(port, raw, message,
                                                              routes) -> None:
    victim = played_game(port)
    before = current(port, victim)
    for route in routes:
        status, headers, body = raw_request(port, request_bytes("POST", route, raw, {
            "Content-Type": "application/json", "X-Catena-Token": victim["token"]}))
        answer = json.loads(body)
        assert status in (400, 404) and message in answer["error"], (route, answer)
        assert headers["content-type"] == "application/json" and len(body) < 400
    assert current(port, victim) == before


def test_parse_body_refuses_without_recursion_or_int_limit_errors() -> None:
    for raw, message, _ in BAD_BODIES[:6]:
        with pytest.raises(ApiError, match=message):
            parse_body(raw)
    assert parse_body(b'{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[["}') == {"a": "[" * 26}
    assert parse_body(b"") == {} and parse_body(b'{"komi": -15}') == {"komi": -15}


@pytest.mark.parametrize("method", ["HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "BREW", "get"])
def test_other_methods_get_405_with_allow(port, method: str) -> None:
    for path, allowed in [("/api/state?game=x", "GET"), ("/api/new", "POST"), ("/", "GET"),
                          ("/static/app.js", "GET"), ("/api/move", "POST")]:
        status, headers, body = raw_request(port, request_bytes(method, path))
        assert (status, headers.get("allow")) == (405, allowed), (method, path, status)
        if method == "HEAD":
            assert body == b"" and int(headers["content-length"]) > 0
        else:
            assert "takes " + allowed in json.loads(body)["error"]
    status, _, body = raw_request(port, request_bytes(method, "/nowhere"))
    assert status == 404 and (method == "HEAD" or "no such page" in json.loads(body)["error"])


@pytest.mark.parametrize(("data", "status"), [
    (b"GET / HTTP/2.0\r\n\r\n", 400),
    (b"GET /\x00 HTTP/1.1 extra\r\n\r\n", 400),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),  # TLS hello
    (b"GET /api/info HTTP/1.1\r\n" + b"X-A: b\r\n" * 120 + b"\r\n", 431),
    (b"GET /api/info HTTP/1.1\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n", 431),
    (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414),
    (b"GET http://[oops/api/info HTTP/1.1\r\n\r\n", 400),
    (b"GET /api/state?" + b"a=1&" * 20 + b" HTTP/1.1\r\n\r\n", 400),
    (request_bytes("POST", "/api/new", b"{}", {"Transfer-Encoding": "chunked"}), 411),
    (request_bytes("POST", "/api/new", b"{}", length=10**9), 413),
    (request_bytes("POST", "/api/new", b"{}", {"Content-Length": "2"}), 400),  # two headers
    (request_bytes("POST", "/api/new", b"{}", length=-2), 400),
    (request_bytes("POST", "/api/new", b"{}").replace(b"Length: 2", b"Length: 1_0"), 400),
    (request_bytes("POST", "/api/new", b"{}", length=50), 400),  # the body ends early
])
def test_malformed_requests_get_a_4xx_json_answer(port, data: bytes, status: int) -> None:
    answer_status, headers, body = raw_request(port, data)
    assert answer_status == status, (data[:60], answer_status, body[:200])
    assert headers["content-type"] == "application/json" and json.loads(body)["error"]


def test_a_body_that_never_comes_gets_408_after_the_timeout(port) -> None:
    start = time.monotonic()
    status, _, body = raw_request(port, request_bytes("POST", "/api/new", b"{", length=40),
                                  half_close=False)
    assert status == 408 and "did not arrive within 2 s" in json.loads(body)["error"]
    assert 1.5 < time.monotonic() - start < 10


@pytest.mark.parametrize(("data", "status"), [
    (b"GET /" + b"a" * 70000, 414),
    (b"GET /api/info HTTP/1.1\r\nX-Long: " + b"a" * 70000, 431),
])
def test_a_head_over_the_limit_is_refused_before_it_ends(port, data: bytes,
                                                          status: int) -> None:
    start = time.monotonic()
    answer_status, _, body = raw_request(port, data, half_close=False)
    assert answer_status == status and "longer than 65536 bytes" in json.loads(body)["error"]
    assert time.monotonic() - start < 1.5  # not left to the 2 s deadline


def test_a_request_trickled_past_the_deadline_gets_408() -> None:
    with running_server(FakePlayer(), request_timeout=0.5) as server:
        port = server.server_address[1]
        with socket.create_connection((LOOPBACK, server.server_address[1])) as loris:
            start = time.monotonic()
            answer = b""
            loris.settimeout(0.1)
            while time.monotonic() - start < 3 and not answer.endswith(b"}"):
                try:
                    loris.send(b"a")
                    answer += loris.recv(4096)
                except TimeoutError:
                    continue
                except OSError:
                    break
            assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 0.5 s" in answer
            assert time.monotonic() - start < 1.5
        assert call(port, "GET", "/api/info")[0] == 200


def test_games_belong_to_their_token(port) -> None:
    victim = played_game(port)
    stranger = new_game(port)
    assert stranger["token"] != victim["token"] and len(victim["token"]) >= 32
    before = current(port, victim)
    game = victim["game"]
    for token in (None, "", stranger["token"], victim["token"][:-1], victim["token"] + "x",
                  "\u00e9" * 10):
        for method, path, body in [
            ("GET", f"/api/state?game={game}", None),
            ("POST", "/api/move", {"game": game, "move": "A1"}),
            ("POST", "/api/undo", {"game": game}),
            ("POST", "/api/swap", {"game": game}),
        ]:
            status, answer = call(port, method, path, body,
                                  token=token.encode().decode("latin-1") if token else token)
            assert status == 403 and "another page" in answer["error"], (token, path, answer)
    assert current(port, victim) == before
    status, _ = call(port, "POST", "/api/undo", {"game": game}, token=victim["token"])
    assert status == 200  # the owner still may


def test_a_page_keeps_its_token_and_replaces_its_own_oldest_game() -> None:
    with running_server(FakePlayer(), max_games=4, games_per_token=2,
                        idle_seconds=3600) as server:
        port = server.server_address[1]
        first = new_game(port)
        token = first["token"]
        second = new_game(port, token=token)
        assert second["token"] == token
        third = new_game(port, token=token)  # its own limit is 2: the first goes
        assert third["token"] == token
        assert call(port, "GET", f"/api/state?game={first['game']}", token=token)[0] == 404
        assert call(port, "GET", f"/api/state?game={second['game']}", token=token)[0] == 200
        # Strangers fill the two free slots, then are refused: games in play stay.
        strangers = [new_game(port) for _ in range(2)]
        for _ in range(64):
            status, answer = call(port, "POST", "/api/new", {"side": 3})
            assert status == 503 and "in play" in answer["error"]
        status, headers, _ = raw_request(port, request_bytes("POST", "/api/new",
                                                             b'{"side": 3}'))
        assert status == 503 and int(headers["retry-after"]) > 0
        for game in (second, third):
            assert call(port, "GET", f"/api/state?game={game['game']}", token=token)[0] == 200
        # An hour later every game is idle but the one just used: the least recently used
        # idle games make room, one per new game, until only games in use are left.
        service = server.RequestHandlerClass.service
        later = time.monotonic() + 3601
        service.clock = lambda: later
        call(port, "GET", f"/api/state?game={third['game']}", token=token)  # in use again
        for gone in (strangers[0], strangers[1], second):
            new_game(port)
            assert call(port, "GET", f"/api/state?game={gone['game']}",
                        token=gone["token"])[0] == 404
        assert call(port, "GET", f"/api/state?game={third['game']}", token=token)[0] == 200
        assert call(port, "POST", "/api/new", {"side": 3})[0] == 503


def test_a_slow_search_does_not_hold_up_other_games(monkeypatch) -> None:
    monkeypatch.setattr(web_games, "GAME_WAIT_SECONDS", 0.3)
    gate = threading.Event()

    def slow_in_komi_7_games(game) -> None:
        if game.komi == 7:
            gate.wait(30)

    with running_server(FakePlayer(before_move=slow_in_komi_7_games)) as server:
        port = server.server_address[1]
        slow, fast = new_game(port, komi=7), new_game(port)
        answers: list = []
        mover = threading.Thread(target=lambda: answers.append(call(
            port, "POST", "/api/move", {"game": slow["game"], "move": "C3"},
            token=slow["token"])))
        mover.start()
        try:
            deadline = time.monotonic() + 10
            while True:  # the slow game answers at once, with the person's move, thinking
                status, state = call(port, "GET", f"/api/state?game={slow['game']}",
                                     token=slow["token"], timeout=2)
                if state["thinking"] or time.monotonic() > deadline:
                    break
            assert status == 200 and state["thinking"] and state["history"] == ["C3"]
            # the search so far: the fake search is seven visits in when it stalls
            assert state["search"]["visits"] == 7 and state["search"]["best"]
            start = time.monotonic()
            status, state = call(port, "GET", f"/api/state?game={fast['game']}",
                                 token=fast["token"], timeout=2)
            assert status == 200 and not state["thinking"]
            status, state = call(port, "POST", "/api/move", {"game": fast["game"], "move": "A1"},
                                 token=fast["token"], timeout=2)
            assert status == 200 and len(state["history"]) == 2
            status, state = call(port, "POST", "/api/new", {"side": 3}, timeout=2)
            assert status == 200
            assert time.monotonic() - start < 2
            # A second change to the busy game waits a little, then is refused.
            status, answer = call(port, "POST", "/api/undo", {"game": slow["game"]},
                                  token=slow["token"], timeout=5)
            assert status == 409 and "still answering" in answer["error"]
        finally:
            gate.set()
            mover.join(timeout=30)
        status, state = answers[0]
        assert status == 200 and len(state["history"]) == 2 and not state["thinking"]


def test_a_failing_model_answers_500_and_the_move_is_taken_back() -> None:
    failing = {"on": False}

    def fail_when_asked(game) -> None:
        if failing["on"]:
            raise RuntimeError("the model broke")

    with running_server(FakePlayer(before_move=fail_when_asked)) as server:
        port = server.server_address[1]
        state = new_game(port)
        failing["on"] = True
        status, answer = call(port, "POST", "/api/move", {"game": state["game"], "move": "C3"},
                              token=state["token"])
        assert status == 500 and "the model broke" in answer["error"]
        status, after = call(port, "GET", f"/api/state?game={state['game']}",
                             token=state["token"])
        assert snapshot(after) == snapshot(state) and not after["thinking"]
        failing["on"] = False
        status, after = call(port, "POST", "/api/move", {"game": state["game"], "move": "C3"},
                             token=state["token"])
        assert status == 200 and len(after["history"]) == 2


def closed_within(connection: socket.socket, seconds: float, trickle: bool = False) -> bool:
    """Whether the server closes `connection` within `seconds` (sending a byte every 0.1 s
    meanwhile when `trickle`)."""
    deadline = time.monotonic() + seconds
    connection.settimeout(0.1)
    while time.monotonic() < deadline:
        try:
            if trickle:
                connection.send(b"a")
            if connection.recv(1024) == b"":
                return True
        except TimeoutError:
            continue
        except OSError:  # reset or broken pipe: closed
            return True
    return False


def test_idle_and_trickling_connections_are_closed() -> None:
    with running_server(FakePlayer(), request_timeout=0.5) as server:
        port = server.server_address[1]
        with socket.create_connection((LOOPBACK, port)) as idle:
            start = time.monotonic()
            assert closed_within(idle, 5)
            assert 0.3 < time.monotonic() - start < 3
        with socket.create_connection((LOOPBACK, port)) as loris:
            loris.sendall(b"GET /api/info HTTP/1.1\r\nX-Slow: ")
            assert closed_within(loris, 5, trickle=True)
        assert call(port, "GET", "/api/info")[0] == 200


def test_idle_connections_hold_no_thread_and_make_room_for_new_ones() -> None:
    with running_server(FakePlayer(), max_connections=4, request_timeout=5) as server:
        port = server.server_address[1]
        # Threads of earlier tests may still be ending: only new ones count.
        before = set(threading.enumerate())
        idle = []
        for _ in range(12):
            idle.append(socket.create_connection((LOOPBACK, port)))
            time.sleep(0.01)  # accepted in this order
        try:
            time.sleep(0.3)
            assert not set(threading.enumerate()) - before  # no thread waits on a client
            start = time.monotonic()
            assert call(port, "GET", "/api/info", timeout=5)[0] == 200
            assert time.monotonic() - start < 1
            # 12 idle and 1 request over 4 open: the 9 oldest (all equally idle) were closed.
            assert [closed_within(connection, 0.2) for connection in idle] == \
                [True] * 9 + [False] * 3
        finally:
            for connection in idle:
                connection.close()


def test_a_whole_request_gets_503_at_once_when_every_worker_is_busy() -> None:
    gate = threading.Event()
    # The held searches wait far longer than any bound below, so the 503 within a second
    # did not wait for a worker.
    with running_server(FakePlayer(before_move=lambda game: gate.wait(60)),
                        max_workers=2) as server:
        port = server.server_address[1]
        games = [new_game(port) for _ in range(2)]
        # Else a mover sent as a set-up answer arrives could find both workers busy.
        wait_for_free_workers(server, 30)
        answers: list = []  # what a mover got back, should one be answered before the gate

        def move(game: dict) -> None:
            try:
                answers.append(call(port, "POST", "/api/move",
                                    {"game": game["game"], "move": "C3"}, game["token"]))
            except Exception as error:  # noqa: BLE001 - reported by the assertion below
                answers.append(repr(error))

        movers = [threading.Thread(target=move, args=(game,)) for game in games]
        for mover in movers:
            mover.start()
        try:
            deadline = time.monotonic() + 30
            while server.workers < 2:  # both searches are running
                assert time.monotonic() < deadline, (
                    f"{server.workers} of 2 searches running; answered early: {answers}")
                time.sleep(0.01)
            start = time.monotonic()
            status, headers, body = raw_request(port, request_bytes("GET", "/api/info"))
            assert status == 503 and "answering 2 requests" in json.loads(body)["error"]
            assert int(headers["retry-after"]) > 0 and time.monotonic() - start < 1
        finally:
            gate.set()
            for mover in movers:
                mover.join(timeout=30)
        assert call(port, "GET", "/api/info")[0] == 200


def test_serve_config_checks_the_new_settings() -> None:
    for settings in [{"games_per_token": 0}, {"max_connections": 0}, {"request_timeout": 0},
                     {"idle_seconds": -1}, {"idle_seconds": float("nan")}, {"max_games": True},
                     {"games_per_address": 0}, {"connections_per_address": -1},
                     {"max_workers": 0}, {"max_workers": 2.5}]:
        with pytest.raises(ValueError, match=next(iter(settings))):
            ServeConfig(**settings)
    assert MAX_BODY_BYTES == 16384


def test_the_think_time_level_bounds_the_model_and_is_checked() -> None:
    player = FakePlayer()
    with running_server(player) as server:
        port = server.server_address[1]
        status, state = call(port, "POST", "/api/new", {"side": 3, "think": "quick"})
        assert status == 200
        call(port, "POST", "/api/move", {"game": state["game"], "move": "C3"},
             token=state["token"])
        assert player.asked[-1] == (0.5, 128)
        status, state = call(port, "POST", "/api/new", {"side": 3})  # the default level
        call(port, "POST", "/api/move", {"game": state["game"], "move": "C3"},
             token=state["token"])
        assert player.asked[-1] == (2.0, 800)
        status, answer = call(port, "POST", "/api/new", {"side": 3, "think": "forever"})
        assert status == 400 and "think must be one of quick, normal, strong" in answer["error"]


def test_the_page_offers_every_think_level_and_watches_the_search() -> None:
    from pathlib import Path

    from catena_zero.play.time_control import THINK_LEVELS

    static = Path(web_games.__file__).parent / "static"
    page = (static / "index.html").read_text()
    offered = re.findall(r'<option value="(\w+)"[^>]*>\w+ \(([\d.]+) s\)', page)
    assert [(name, float(seconds)) for name, seconds in offered] == [
        (name, level[0]) for name, level in THINK_LEVELS.items()]
    assert 'value="normal" selected' in page and web_games.DEFAULT_THINK == "normal"
    script = (static / "app.js").read_text()
    assert 'think: $("think").value' in script and "state.search.visits" in script
