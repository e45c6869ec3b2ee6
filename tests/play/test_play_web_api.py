"""The web server's JSON API: games, refusals with 4xx and a message, no crash.

Every request about a game carries the token /api/new answered (X-Catena-Token)."""

from __future__ import annotations

import http.client
import json
import threading

import pytest
import torch

from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.play.web import ServeConfig, make_server
from tests.export.tiny_model import tiny_model_file


@pytest.fixture(scope="module")
def port():
    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(tiny_model_file(3)), PlayerConfig(simulations=4))
    # idle_seconds=keep_seconds=0: any game not being played makes room, those the tests
    # came back to as well (the tests start many games).
    server = make_server(player, ServeConfig(port=0, max_games=4, idle_seconds=0,
                                             keep_seconds=0))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def call(port: int, method: str, path: str, body=None, raw: bytes | None = None,
         token: str | None = None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if token is not None:
        headers["X-Catena-Token"] = token
    connection.request(method, path, body=data, headers=headers)
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    kind = response.getheader("Content-Type", "")
    return response.status, (json.loads(payload) if "json" in kind else payload.decode())


def new_game(port: int, **settings):
    status, state = call(port, "POST", "/api/new", {"side": 3, **settings})
    assert status == 200, state
    return state


def test_page_and_static_files(port: int) -> None:
    status, page = call(port, "GET", "/")
    assert status == 200 and "<svg id=\"board\"" in page and "/static/app.js" in page
    assert call(port, "GET", "/static/app.js")[0] == 200
    assert call(port, "GET", "/static/style.css")[0] == 200
    status, error = call(port, "GET", "/static/../web.py")
    assert status == 404 and "no such file" in error["error"]
    assert call(port, "GET", "/nowhere")[0] == 404


def test_info_lists_every_side_the_model_plays(port: int) -> None:
    status, info = call(port, "GET", "/api/info")
    assert status == 200 and info["sides"] == list(range(2, 11))  # a model plays every side
    assert info["default_side"] == 3 and info["tracks"] == ["3/komi/standard"]
    assert "komi" in info["game_types"] and info["komi_ranges"]["komi/standard"] == [0, 15]


def test_a_move_gets_the_model_reply(port: int) -> None:
    state = new_game(port)
    assert state["stones"] == [0] * 19 and state["human"] == "black"
    assert len(state["eval"]["ownership_black"]) == 19 and 0 <= state["eval"]["winrate_black"] <= 1
    status, after = call(port, "POST", "/api/move", {"game": state["game"], "move": "c3"},
                         token=state["token"])
    assert status == 200
    assert after["history"][0] == "C3" and len(after["history"]) == 2
    assert after["model_moves"] == after["history"][1:]
    assert after["stones"].count(1) == 1 and after["stones"].count(2) == 1
    assert after["can_undo"] and not after["legal"][after["cells"].index("C3")]


def test_a_board_outside_the_training_plays_with_a_note(port: int) -> None:
    assert new_game(port)["track_note"] is None
    state = new_game(port, side=5, game_type="double")
    assert len(state["cells"]) == 61 and state["side"] == 5
    assert "5/double/standard is outside the training" in state["track_note"]
    status, after = call(port, "POST", "/api/move", {"game": state["game"], "move": "e5"},
                         token=state["token"])
    assert status == 200 and len(after["history"]) == 3  # Black's one stone, White's two
    assert after["track_note"] == state["track_note"]


@pytest.mark.parametrize(("body", "message"), [
    ({"side": 11}, "side"),
    ({"side": "3"}, "side must be a whole number"),
    ({"side": 3, "komi": 99}, "99"),
    ({"side": 3, "komi": 2.5}, "komi must be a whole number"),
    ({"side": 3, "colour": "red"}, "colour must be black, white or auto"),
    ({"side": 3, "game_type": "chess"}, "chess"),
    ({"side": 3, "game_type": "double", "komi": 3}, "3"),
])
def test_bad_new_game_requests_are_refused(port: int, body, message: str) -> None:
    status, error = call(port, "POST", "/api/new", body)
    assert status == 400 and message in error["error"]


def test_refused_moves_change_nothing(port: int) -> None:
    state = new_game(port)
    game, token = state["game"], state["token"]
    call(port, "POST", "/api/move", {"game": game, "move": "C3"}, token=token)
    _, before = call(port, "GET", f"/api/state?game={game}", token=token)
    for body, expected_status, message in [
        ({"game": game, "move": "C3"}, 409, "illegal move C3"),
        ({"game": game, "move": "Z9"}, 400, "Z9"),
        ({"game": game, "move": "A7"}, 400, "A7"),
        ({"game": game, "move": ""}, 400, "move must be"),
        ({"game": game, "move": 5}, 400, "move must be"),
        ({"game": game}, 400, "move must be"),
        ({"game": "nope", "move": "A1"}, 404, "unknown game"),
    ]:
        status, error = call(port, "POST", "/api/move", body, token=token)
        assert (status, message in error["error"]) == (expected_status, True), (body, error)
    _, after = call(port, "GET", f"/api/state?game={game}", token=token)
    assert after["history"] == before["history"] and after["stones"] == before["stones"]


def test_malformed_requests_get_4xx(port: int) -> None:
    assert call(port, "POST", "/api/move", raw=b"{not json")[0] == 400
    assert call(port, "POST", "/api/move", raw=b"[1, 2]")[0] == 400
    assert call(port, "POST", "/api/move", raw=b"\xff\xfe")[0] == 400
    assert call(port, "POST", "/api/new", raw=b"x" * 20000)[0] == 413
    assert call(port, "GET", "/api/move")[0] == 405
    assert call(port, "POST", "/api/info", {})[0] == 405
    assert call(port, "GET", "/api/state?game=missing")[0] == 404
    for route in ("/api/undo", "/api/swap"):
        state = new_game(port)
        assert call(port, "POST", route, {"game": state["game"]}, token=state["token"])[0] == 409
    assert call(port, "GET", "/api/info")[0] == 200  # still serving


def test_a_whole_game_then_moves_are_refused(port: int) -> None:
    state = new_game(port, colour="white", komi=5)
    token = state["token"]
    assert state["human"] == "white" and len(state["history"]) == 1  # the model opened
    assert state["komi"] == 5
    while not state["over"]:
        move = next(name for name, legal in zip(state["cells"], state["legal"], strict=True)
                    if legal) if any(state["legal"]) else "button"
        status, state = call(port, "POST", "/api/move", {"game": state["game"], "move": move},
                             token=token)
        assert status == 200, state
    assert state["result"][0] in "BW0"
    status, error = call(port, "POST", "/api/move", {"game": state["game"], "move": "button"},
                         token=token)
    assert status == 409 and "over" in error["error"]


def test_nokomi_swap_and_undo(port: int) -> None:
    state = new_game(port, game_type="nokomi", colour="white")
    assert len(state["history"]) == 1 and state["can_swap"]
    token = state["token"]
    status, swapped = call(port, "POST", "/api/swap", {"game": state["game"]}, token=token)
    assert status == 200 and swapped["human"] == "black"
    assert len(swapped["history"]) == 2  # the model, now White, answered
    status, undone = call(port, "POST", "/api/undo", {"game": state["game"]}, token=token)
    assert status == 200 and undone["human"] == "white" and undone["can_swap"]
    assert undone["history"] == state["history"]


def test_old_games_are_dropped_beyond_max_games(port: int) -> None:
    first = new_game(port)
    for _ in range(4):
        new_game(port)
    assert call(port, "GET", f"/api/state?game={first['game']}", token=first["token"])[0] == 404


def test_concurrent_requests(port: int) -> None:
    state = new_game(port)
    game, token = state["game"], state["token"]
    statuses: list[int] = []

    def worker(index: int) -> None:
        move = ["A1", "C3", "E5", "not-a-cell"][index % 4]
        statuses.append(call(port, "POST", "/api/move", {"game": game, "move": move},
                             token=token)[0])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    # One page has at most 4 requests to the model at once: the others get 429 at once.
    assert len(statuses) == 8 and set(statuses) <= {200, 400, 409, 429} and 200 in statuses
    assert call(port, "GET", f"/api/state?game={game}", token=token)[0] == 200


def test_serve_cli_settings(tmp_path) -> None:
    from catena_zero.cli.common import ConfigError
    from catena_zero.cli.serve import build
    from catena_zero.cli.serve import main as serve_main

    model, serve_config, player_config = build(["port=0", "player.simulations=7"])
    assert model is None and serve_config.port == 0 and player_config.simulations == 7
    with pytest.raises(ConfigError, match="port"):
        build(["port=70000"])
    with pytest.raises(ConfigError, match="does not exist"):
        serve_main([f"model={tmp_path / 'missing.pt'}"])
