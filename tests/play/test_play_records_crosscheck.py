"""One record, three front ends: a game saved from the terminal loads in the web server
(through its API) and in GTP (`loadsgf`), at the same final position and result."""

from __future__ import annotations

import io
import re

from catena_zero.data.game_record import load_record, replay
from catena_zero.play.gtp import GtpEngine
from catena_zero.play.terminal import TerminalConfig, play_terminal
from catena_zero.rules import BLACK, WHITE, Rules
from tests.play.test_play_gtp import ok
from tests.play.test_play_terminal import player  # noqa: F401  (the tiny model fixture)
from tests.play.web_helpers import FakePlayer, call, running_server


def test_a_terminal_record_replays_alike_in_serve_and_gtp(player, tmp_path) -> None:  # noqa: F811
    path = tmp_path / "terminal game.sgf"
    cells = [Rules(side=3).board.cell_name(index) for index in range(19)]
    # Every cell twice and the button, each followed by `save`: refused moves are skipped,
    # and the line after the move that ends the game saves the finished game.
    script = "".join(f"{move}\nsave {path}\n" for move in cells * 2 + ["button"])
    output = io.StringIO()
    assert play_terminal(player, TerminalConfig(side=3, komi=2), io.StringIO(script),
                         output) == 0
    text = output.getvalue()
    terminal_result = re.search(r"game over: (\S+)", text).group(1)
    record = load_record(path)
    game = replay(record)
    assert game.is_over and record.result == game.result_string() == terminal_result
    black, white = game.stones_of(BLACK), game.stones_of(WHITE)

    with running_server(FakePlayer(side=3)) as server:
        port = server.server_address[1]
        status, state = call(port, "POST", "/api/load", {"record": path.read_text()})
    assert status == 200, state
    assert state["over"] and state["result"] == record.result
    assert state["stones"] == game.state.stones[0].tolist()
    assert state["history"] == [game.board.action_name(a) for a in game.history]

    engine = GtpEngine()
    gtp_path = tmp_path / "game.sgf"  # GTP arguments are split at spaces
    gtp_path.write_bytes(path.read_bytes())
    ok(engine, f"loadsgf {gtp_path}")
    assert ok(engine, "final_score") == record.result
    assert ok(engine, "list_stones black").split() == black
    assert ok(engine, "list_stones white").split() == white
