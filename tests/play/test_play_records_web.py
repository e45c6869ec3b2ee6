"""The web server's game-record routes: download, replay positions, a game from a record."""

from __future__ import annotations

import http.client
import json

import pytest

from catena_zero.data.game_record import parse_record, replay
from catena_zero.play.web import MAX_RECORD_BODY_BYTES
from tests.play.web_helpers import LOOPBACK, FakePlayer, call, new_game, running_server

FINISHED = ("(;GM[Catena]FF[4]SZ[2]KM[1]PB[human]PW[catena_zero]RE[B+3.5]"
            ";B[A1];W[button];B[A2];W[B1];B[B3];W[C3])")


@pytest.fixture(scope="module")
def server():
    with running_server(FakePlayer(side=3), max_games=4, idle_seconds=0) as running:
        yield running


@pytest.fixture(scope="module")
def port(server) -> int:
    return server.server_address[1]


def download(port: int, game: str, token: str | None) -> tuple[int, str, dict]:
    connection = http.client.HTTPConnection(LOOPBACK, port, timeout=30)
    headers = {"X-Catena-Token": token} if token else {}
    try:
        connection.request("GET", f"/api/record?game={game}", headers=headers)
        response = connection.getresponse()
        payload = response.read().decode()
    finally:
        connection.close()
    return response.status, payload, dict(response.getheaders())


def side3_record(moves: str, result: str = "") -> str:
    result_property = f"RE[{result}]" if result else ""
    return f"(;GM[Catena]FF[4]SZ[3]KM[0]PB[human]{result_property}{moves})"


def test_a_played_game_downloads_as_a_record(port: int) -> None:
    started = new_game(port)
    token = started["token"]
    status, state = call(port, "POST", "/api/move", {"game": started["game"], "move": "C3"},
                         token=token)
    assert status == 200
    status, text, headers = download(port, state["game"], token)
    assert status == 200 and headers["Content-Type"].startswith("application/x-go-sgf")
    assert "attachment" in headers["Content-Disposition"]
    record = parse_record(text)
    board = record.rules.board
    assert [board.action_name(a) for a in record.actions] == state["history"]
    assert record.black_player == "human"
    assert replay(record).state.stones[0].tolist() == state["stones"]


def test_the_record_routes_respect_the_token(port: int) -> None:
    state = new_game(port)
    assert download(port, state["game"], None)[0] == 403
    assert download(port, state["game"], "not-the-token")[0] == 403
    assert download(port, "nosuchgame", state["token"])[0] == 404
    status, answer = call(port, "GET", f"/api/replay?game={state['game']}")
    assert status == 403 and "token" in answer["error"]
    status, answer = call(port, "POST", "/api/record", {"game": state["game"]})
    assert status == 405


def test_a_posted_record_becomes_a_game_at_its_final_position(port: int) -> None:
    status, state = call(port, "POST", "/api/load",
                         {"record": side3_record(";B[C3];W[A1]")})
    assert status == 200, state
    assert state["history"] == ["C3", "A1"] and state["human"] == "black"
    assert state["to_move"] == "black" and state["token"]
    status, positions = call(port, "GET", f"/api/replay?game={state['game']}",
                             token=state["token"])
    assert status == 200 and positions["moves"] == ["C3", "A1"]
    assert len(positions["stones"]) == 3 and positions["stones"][-1] == state["stones"]
    assert sum(positions["stones"][0]) == 0 and positions["result"] is None
    # As White, the model (Black) is to move and answers at once.
    status, white = call(port, "POST", "/api/load",
                         {"record": side3_record(";B[C3];W[A1]"), "colour": "white"},
                         token=state["token"])
    assert status == 200 and white["human"] == "white" and len(white["history"]) == 3


def test_a_finished_record_loads_over_with_its_result() -> None:
    with running_server(FakePlayer(side=2)) as running:
        port = running.server_address[1]
        status, state = call(port, "POST", "/api/load", {"record": FINISHED})
        assert status == 200, state
        assert state["over"] and state["result"] == "B+3.5"
        status, positions = call(port, "GET", f"/api/replay?game={state['game']}",
                                 token=state["token"])
        assert positions["result"] == "B+3.5" and len(positions["stones"]) == 7


@pytest.mark.parametrize(("body", "message"), [
    ({}, "record must be the text of a game record"),
    ({"record": 5}, "record must be the text"),
    ({"record": "(;GM[Go])"}, "record refused: GM must be Catena"),
    ({"record": side3_record(";B[C3];W[C3]")}, "move 2 (W[C3]) is illegal: the cell is occupied"),
    ({"record": side3_record(";B[C3]", "B+1")}, "RE[B+1]: the game is not over"),
    ({"record": FINISHED}, "record refused: the test player plays side 3"),
    ({"record": side3_record(";B[C3]"), "colour": "auto"}, "colour must be black or white"),
])
def test_a_bad_record_is_refused_and_makes_no_game(server, port: int, body, message) -> None:
    before = len(server.RequestHandlerClass.service.games)
    status, answer = call(port, "POST", "/api/load", body)
    assert status == 400 and message in answer["error"]
    assert "\n" not in answer["error"]
    assert len(server.RequestHandlerClass.service.games) == before


def test_a_record_body_has_its_own_size_limit(port: int) -> None:
    comment = "x" * 20000  # over the other routes' limit, under the record route's
    status, state = call(port, "POST", "/api/load",
                         {"record": side3_record(f";B[C3]C[{comment[:19000]}]")})
    assert status == 200, state
    big = json.dumps({"record": "x" * (MAX_RECORD_BODY_BYTES + 1)})
    connection = http.client.HTTPConnection(LOOPBACK, port, timeout=30)
    try:
        connection.request("POST", "/api/load", body=big.encode(),
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
    finally:
        connection.close()
    assert response.status == 413 and "at most" in answer["error"]
