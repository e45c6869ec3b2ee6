"""No client can fill the web server: a flood of new games without a token, connections
that trickle their requests, and trickling clients that reconnect when dropped all leave
room for a new client, whose requests are answered at once."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from catena_zero.play.web import ServeConfig, listens_on_loopback, make_server
from catena_zero.play.web_games import ApiError, PlayService
from tests.play.web_helpers import (
    LOOPBACK,
    FakePlayer,
    call,
    new_game,
    running_server,
    wait_for_free_workers,
)

STRANGER = "127.0.0.2"  # clients from other loopback addresses: Linux routes all of 127/8
FLOODER = "127.0.0.3"
NEWCOMER = "127.0.0.4"
QUICK_SECONDS = 1.0  # a request answered within this is answered "at once"


def timed_call(port: int, method: str, path: str, body=None, token: str | None = None,
               source: str | None = None) -> tuple[int, dict, float]:
    start = time.monotonic()
    status, answer = call(port, method, path, body, token=token, timeout=10, source=source)
    return status, answer, time.monotonic() - start


def play_one_game(port: int) -> list[float]:
    """A whole exchange of a new client (start, move, read); each answer must be 200.
    The seconds each took."""
    status, state, start_seconds = timed_call(port, "POST", "/api/new", {"side": 3})
    assert status == 200, state
    status, after, move_seconds = timed_call(port, "POST", "/api/move",
                                             {"game": state["game"], "move": "C3"},
                                             state["token"])
    assert status == 200 and len(after["history"]) == 2, after
    status, now, read_seconds = timed_call(port, "GET", f"/api/state?game={state['game']}",
                                           token=state["token"])
    assert status == 200 and now["history"] == after["history"]
    return [start_seconds, move_seconds, read_seconds]


# -- the tokenless flood -------------------------------------------------------------------


def test_a_tokenless_flood_leaves_room_for_a_new_client_and_keeps_games_in_a_request() -> None:
    gate = threading.Event()
    player = FakePlayer(before_move=lambda game: game.komi == 7 and gate.wait(10))
    with running_server(player, max_games=8) as server:
        port = server.server_address[1]
        earlier = new_game(port)  # between moves: the flood may replace it
        searching = new_game(port, komi=7)
        answers: list = []
        mover = threading.Thread(target=lambda: answers.append(call(
            port, "POST", "/api/move", {"game": searching["game"], "move": "C3"},
            token=searching["token"])))
        mover.start()
        try:
            service = server.RequestHandlerClass.service
            deadline = time.monotonic() + 5
            while not service.games[searching["game"]].in_use:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            statuses = [call(port, "POST", "/api/new", {"side": 3})[0] for _ in range(64)]
            assert statuses == [200] * 64  # each replaced the least recently used game
            assert len(service.games) == 8
            assert call(port, "GET", f"/api/state?game={earlier['game']}",
                        token=earlier["token"])[0] == 404
            times = play_one_game(port)  # a new client plays at once
            assert max(times) < QUICK_SECONDS, times
        finally:
            gate.set()
            mover.join(timeout=10)
        status, state = answers[0]  # the game in a search was never dropped
        assert status == 200 and len(state["history"]) == 2
        assert call(port, "GET", f"/api/state?game={searching['game']}",
                    token=searching["token"])[0] == 200


def test_on_loopback_a_flood_of_new_games_never_replaces_a_game_its_page_came_back_to(
        ) -> None:
    with running_server(FakePlayer(), max_games=8) as server:
        port = server.server_address[1]
        service = server.RequestHandlerClass.service
        mine = new_game(port)
        status, played = call(port, "POST", "/api/move", {"game": mine["game"], "move": "C3"},
                              token=mine["token"])
        assert status == 200
        for _ in range(64):  # each replaces the least recently used game nobody came back to
            assert call(port, "POST", "/api/new", {"side": 3})[0] == 200
        assert len(service.games) == 8
        status, state = call(port, "GET", f"/api/state?game={mine['game']}",
                             token=mine["token"])
        assert status == 200 and state["history"] == played["history"]
        # An hour later it is free to make room (keep_seconds), as games nobody came back
        # to always were.
        later = time.monotonic() + 3601
        service.clock = lambda: later
        for _ in range(8):
            assert call(port, "POST", "/api/new", {"side": 3})[0] == 200
        assert mine["game"] not in service.games


def test_beyond_loopback_one_address_cannot_take_other_addresses_games() -> None:
    with running_server(FakePlayer(), limit_addresses=True, max_games=8,
                        games_per_address=3) as server:
        port = server.server_address[1]
        service = server.RequestHandlerClass.service
        stranger = new_game(port, source=STRANGER)
        status, _ = call(port, "POST", "/api/move", {"game": stranger["game"], "move": "C3"},
                         token=stranger["token"], source=STRANGER)
        assert status == 200
        for _ in range(40):  # the flooder's new games replace its own, never the stranger's
            assert call(port, "POST", "/api/new", {"side": 3}, source=FLOODER)[0] == 200
        holders = [entry.address for entry in service.games.values()]
        assert holders.count(FLOODER) == 3 and holders.count(STRANGER) == 1
        status, state = call(port, "GET", f"/api/state?game={stranger['game']}",
                             token=stranger["token"], source=STRANGER)
        assert status == 200 and len(state["history"]) == 2
        newcomer = new_game(port, source=NEWCOMER)  # four free slots are left to others
        assert call(port, "POST", "/api/undo", {"game": newcomer["game"]},
                    token=newcomer["token"], source=NEWCOMER)[0] in (200, 409)


def test_the_bound_per_address_never_drops_a_game_in_a_request() -> None:
    gate = threading.Event()
    service = PlayService(FakePlayer(before_move=lambda game: gate.wait(10)), max_games=8,
                          games_per_address=2)
    games = [service.new_game({"side": 3}, None, FLOODER) for _ in range(2)]
    movers = [threading.Thread(target=service.move, args=(
        {"game": game["game"], "move": "C3"}, game["token"])) for game in games]
    for mover in movers:
        mover.start()
    try:
        deadline = time.monotonic() + 5
        while not all(service.games[game["game"]].in_use for game in games):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        with pytest.raises(ApiError, match="games of your address are all in play") as refused:
            service.new_game({"side": 3}, None, FLOODER)
        assert refused.value.status == 503 and "Retry-After" in refused.value.headers
        assert service.new_game({"side": 3}, None, STRANGER)["token"]  # others still may
    finally:
        gate.set()
        for mover in movers:
            mover.join(timeout=10)
    # The searches ended: the less recently used of the two makes room.
    unused = min(games, key=lambda game: service.games[game["game"]].last_used)
    newest = service.new_game({"side": 3}, None, FLOODER)
    assert [game["game"] in service.games for game in games].count(True) == 1
    assert unused["game"] not in service.games and newest["game"] in service.games


def test_the_bounds_per_address_apply_only_beyond_loopback() -> None:
    server = make_server(FakePlayer(), ServeConfig(host=LOOPBACK, port=0, games_per_address=2,
                                                   connections_per_address=3))
    try:
        assert listens_on_loopback(server)
        assert server.RequestHandlerClass.service.games_per_address is None
        assert server.limits.connections_per_address is None
    finally:
        server.server_close()
    server = make_server(FakePlayer(), ServeConfig(host=LOOPBACK, port=0, games_per_address=2,
                                                   connections_per_address=3),
                         limit_addresses=True)
    try:
        assert server.RequestHandlerClass.service.games_per_address == 2
        assert server.limits.connections_per_address == 3
    finally:
        server.server_close()


# -- trickling connections -----------------------------------------------------------------


TRICKLER = Path(__file__).with_name("web_trickler.py")


class Tricklers:
    """`count` connections trickling a request (web_trickler.py, a process of its own)
    for at most `seconds`; `counts` once they have stopped."""

    def __init__(self, port: int, count: int, seconds: float, reconnect: bool,
                 source: str | None = None) -> None:
        command = [sys.executable, str(TRICKLER), str(port), str(count), str(seconds)]
        command += ["--reconnect"] if reconnect else []
        command += ["--source", source] if source is not None else []
        self.seconds = seconds
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)

    def counts(self) -> dict[str, int]:
        """{"connected": n, "dropped": n}, waiting for the tricklers to stop."""
        output, _ = self.process.communicate(timeout=self.seconds + 10)
        assert self.process.returncode == 0
        return json.loads(output)

    def __enter__(self) -> Tricklers:
        return self

    def __exit__(self, *error) -> None:
        if self.process.poll() is None:  # a failed test: stop them now
            self.process.kill()
            self.process.wait(timeout=10)


def requests_while_trickling(port: int, seconds: float) -> list[float]:
    """New clients' exchanges, one after another for `seconds`; each answer's time."""
    times: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        times += play_one_game(port)
        status, _, took = timed_call(port, "GET", "/api/info")
        assert status == 200
        times.append(took)
    return times


def test_trickling_connections_hold_no_worker_and_are_dropped_at_their_deadline() -> None:
    # More tricklers than workers: each used to hold a thread until its deadline.
    with running_server(FakePlayer(), max_workers=4, max_connections=64,
                        request_timeout=2.5) as server:
        port = server.server_address[1]
        with Tricklers(port, 24, seconds=8, reconnect=False) as tricklers:
            deadline = time.monotonic() + 3
            while len(server.waiting) < 24:
                assert time.monotonic() < deadline, len(server.waiting)
                time.sleep(0.01)
            times = requests_while_trickling(port, 1.0)  # before any deadline
            assert max(times) < QUICK_SECONDS, times
            wait_for_free_workers(server, 1)  # the last answer's worker; tricklers hold none
            assert len(server.waiting) == 24  # all still trickling
            counts = tricklers.counts()  # each stops once dropped
        assert counts == {"connected": 24, "dropped": 24}  # by the whole-request deadline
        assert call(port, "GET", "/api/info")[0] == 200


@pytest.mark.parametrize("request_timeout", [0.5, 30.0], ids=["deadline", "room"])
@pytest.mark.parametrize("limit_addresses", [False, True], ids=["loopback", "beyond"])
def test_trickling_clients_that_reconnect_do_not_lock_anyone_out(limit_addresses,
                                                                 request_timeout) -> None:
    # More tricklers than connections: they keep closing each other's connections (the
    # slowest waiting one makes room), the short deadline drops them too; they reconnect.
    with running_server(FakePlayer(), limit_addresses=limit_addresses, max_workers=4,
                        max_connections=12, connections_per_address=8,
                        request_timeout=request_timeout) as server:
        port = server.server_address[1]
        source = FLOODER if limit_addresses else None
        with Tricklers(port, 24, seconds=2.5, reconnect=True, source=source) as tricklers:
            deadline = time.monotonic() + 3
            while len(server.waiting) < 8:
                assert time.monotonic() < deadline, len(server.waiting)
                time.sleep(0.01)
            times = requests_while_trickling(port, 1.5)
            assert max(times) < QUICK_SECONDS, times
            if limit_addresses:  # the flooder holds at most its own bound of connections
                assert server.open_by_address[FLOODER] <= 8
            counts = tricklers.counts()
        assert counts["dropped"] > 24 and counts["connected"] > 48, counts
        assert call(port, "GET", "/api/info")[0] == 200
