"""The API explains the board: illegal-move reasons, claims, the live score with its parts
and units, unplayable cells, the last turn, who made each move, the swap decision and the
one model playing the game."""

from __future__ import annotations

from tests.play.web_helpers import FakePlayer, call, new_game, running_server


def move(port: int, state: dict, cell: str) -> tuple[int, dict]:
    return call(port, "POST", "/api/move", {"game": state["game"], "move": cell},
                token=state["token"])


def test_a_new_game_carries_the_explanations() -> None:
    with running_server(FakePlayer()) as server:
        port = server.server_address[1]
        state = new_game(port)
        assert state["model"] == "side 3 test player"
        assert state["score"]["line"] == ("score now (stones): Black 0 = 0 stones | "
                                          "White 0 = 0 stones | 0")
        assert state["score"]["black"]["total"] == 0 and state["score"]["final"] is False
        assert state["score_units"] == "stones" and state["claims"] == []
        assert state["unplayable"] == [False] * 19 and state["last_turn"] == []
        assert state["swap_decision"] is None
        status, after = move(port, state, "C3")
        assert status == 200
        assert after["history_colours"] == ["black", "white"]
        assert after["last_turn"] == after["history"][1:]
        assert after["score"]["line"] == ("score now (stones): Black 1 = 1 stone | "
                                          "White 1 = 1 stone | 0")


def test_an_illegal_move_answers_its_reason() -> None:
    with running_server(FakePlayer()) as server:
        port = server.server_address[1]
        state = new_game(port)
        state = {**move(port, state, "C3")[1], "token": state["token"]}
        status, error = move(port, state, "C3")
        assert status == 409 and error["reason"] == "C3 is occupied (a black stone)"
        assert error["error"] == "illegal move C3: C3 is occupied (a black stone)"
        while True:  # play on until some empty cell can never be played
            unplayable = [cell for cell, flag in zip(state["cells"], state["unplayable"],
                                                     strict=True) if flag]
            if unplayable or state["over"]:
                break
            first = state["cells"][state["legal"].index(True)]
            state = {**move(port, state, first)[1], "token": state["token"]}
        assert unplayable
        status, error = move(port, state, unplayable[0])
        assert status == 409 and "would" in error["reason"]


def test_claims_are_announced_and_the_final_score_is_broken_down() -> None:
    with running_server(FakePlayer(seed=1)) as server:
        port = server.server_address[1]
        state = new_game(port, komi=2)
        token = state["token"]
        claims = []
        while not state["over"]:
            first = state["cells"][state["legal"].index(True)] if any(state["legal"]) \
                else "button"
            status, state = move(port, {**state, "token": token}, first)
            assert status == 200, state
            claims += state["claims"]
        assert claims and all(" claims it" in claim["text"] for claim in claims)
        assert {claim["owner"] for claim in claims} <= {"black", "white"}
        assert all(claim["actor"] in ("you", "the model") for claim in claims)
        score = state["score"]
        assert score["final"] and score["lead"] == state["result"]
        assert score["breakdown"][0].startswith("final score (stones): ")
        assert score["white"]["komi"] == 2


def test_swap_decisions_and_units() -> None:
    with running_server(FakePlayer()) as server:
        port = server.server_address[1]
        state = new_game(port, game_type="nokomi")
        status, after = move(port, state, "C3")
        assert after["swap_decision"] == "the model did not swap: it plays on as White"
        state = new_game(port, game_type="nokomi", colour="white")
        first = state["cells"][state["legal"].index(True)]
        status, after = move(port, state, first)
        assert after["swap_decision"] == "you did not swap: you play on as White"
        state = new_game(port, scoring="quadratic", komi=10)
        assert state["score_units"] == "quadratic points (squared ribbon lengths)"
        assert state["score"]["white"]["total"] == 10
