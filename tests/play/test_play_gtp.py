"""GTP front end driven by scripted command strings."""

import io

import pytest

from catena_zero.play.gtp import GtpEngine, GtpError, RandomPlayer, run_gtp
from catena_zero.rules import BLACK, WHITE, Game, Rules

REQUIRED_COMMANDS = [
    "protocol_version", "name", "version", "known_command", "list_commands", "quit",
    "boardsize", "clear_board", "komi", "play", "genmove", "undo", "showboard",
    "final_score", "catena-set-rules", "all_legal", "list_stones",
]


def replies(engine: GtpEngine, script: str) -> list[str]:
    """Run `script` and split the output into replies (each without its blank line)."""
    output = io.StringIO()
    engine.run(io.StringIO(script), output)
    text = output.getvalue()
    assert text.endswith("\n\n") or text == ""
    return text[:-2].split("\n\n") if text else []


def ask(engine: GtpEngine, command: str) -> str:
    (reply,) = replies(engine, command + "\n")
    return reply


def ok(engine: GtpEngine, command: str) -> str:
    reply = ask(engine, command)
    assert reply.startswith("="), f"{command!r} -> {reply!r}"
    return reply[1:].strip()


def refused(engine: GtpEngine, command: str) -> str:
    """The command must be refused and change nothing visible."""
    before = position(engine)
    reply = ask(engine, command)
    assert reply.startswith("? ") and len(reply) > 3, f"{command!r} -> {reply!r}"
    assert position(engine) == before, f"{command!r} changed the game"
    return reply[2:]


def position(engine: GtpEngine):
    game = engine.game
    return (engine.rules, engine.komi, list(game.history), game.to_move, game.is_over,
            game.stones_of(BLACK), game.stones_of(WHITE), game.board_text())


def test_framing_ids_comments_and_blank_lines():
    engine = GtpEngine(name="tester", version="9.9")
    script = ("7 name\n\n   \n# a comment line\nversion # trailing comment\n"
              "12\tprotocol_version\r\n\x01name\n99\n")
    assert replies(engine, script) == ["=7 tester", "= 9.9", "=12 2", "= tester",
                                       "?99 missing command"]


def test_protocol_version_name_version_known_and_list_commands():
    engine = GtpEngine()
    assert ok(engine, "protocol_version") == "2"
    assert ok(engine, "name") == "catena_zero"
    assert ok(engine, "version")
    listed = ok(engine, "list_commands").split("\n")
    assert set(REQUIRED_COMMANDS) <= set(listed)
    for command in REQUIRED_COMMANDS:
        assert ok(engine, f"known_command {command}") == "true"
    assert ok(engine, "known_command fly") == "false"
    refused(engine, "known_command")


def test_quit_stops_and_end_of_input_stops():
    engine = GtpEngine()
    assert replies(engine, "1 quit\nname\n") == ["=1"]
    assert replies(GtpEngine(), "name") == ["= catena_zero"]  # no newline at EOF


def test_unknown_command_and_bad_input_never_kill_the_engine():
    engine = GtpEngine()
    script = "frobnicate\nplay\nplay b\nplay x F6\nplay b F66\nplay b ZZ\nboardsize\nname\n"
    out = replies(engine, script)
    assert all(reply.startswith("? ") for reply in out[:-1]), out
    assert "unknown command" in out[0]
    assert out[-1] == "= catena_zero"


@pytest.mark.parametrize("size", ["1", "11", "0", "x", "6.5", "-3"])
def test_boardsize_refused_outside_2_to_10(size):
    engine = GtpEngine()
    ok(engine, "play b F6")
    assert "size" in refused(engine, f"boardsize {size}")


def test_boardsize_and_clear_board():
    engine = GtpEngine()
    for side in range(2, 11):
        ok(engine, f"boardsize {side}")
        assert engine.rules.side == side and engine.game.history == []
        ok(engine, "play b A1")
    ok(engine, "clear_board")
    assert engine.game.history == [] and engine.rules.side == 10


@pytest.mark.parametrize("game_type,scoring,good,bad", [
    ("komi", "standard", ["0", "15", "7.0"], ["16", "-1", "6.5", "x"]),
    ("komi", "longest", ["15"], ["16"]),
    ("komi", "quadratic", ["1000", "0"], ["1001", "-1"]),
    ("nokomi", "standard", ["0"], ["1", "7"]),
    ("double", "quadratic", ["0"], ["1", "1000"]),
])
def test_komi_range_per_scoring_and_game_type(game_type, scoring, good, bad):
    engine = GtpEngine()
    ok(engine, f"catena-set-rules {game_type} {scoring}")
    for value in good:
        ok(engine, f"komi {value}")
        assert engine.komi == int(float(value)) == int(engine.game.state.komi[0])
    for value in bad:
        assert value in refused(engine, f"komi {value}")


def test_komi_keeps_the_position_and_reaches_the_result():
    engine = GtpEngine(seed=5)
    ok(engine, "play b F6")
    ok(engine, "komi 9")
    assert engine.game.stones_of(BLACK) == ["F6"] and engine.game.to_move == WHITE
    play_out(engine)
    assert ok(engine, "final_score") == engine.game.result_string()
    replay = Game(Rules(), komi=9)
    for action in engine.game.history:
        replay.play(action)
    assert replay.result_string() == engine.game.result_string()


def test_play_colours_turns_pass_alias_and_refusals():
    engine = GtpEngine()
    ok(engine, "play black f6")
    assert "turn" in refused(engine, "play b F7")
    assert "turn" in refused(engine, "play BLACK F7")
    ok(engine, "play W pass")  # pass is the button
    assert engine.game.history[-1] == engine.rules.board.button_action
    refused(engine, "play b button")  # taken already
    refused(engine, "play b F6")  # occupied
    refused(engine, "play b A7")  # not a cell on side 6
    refused(engine, "play b 7")  # malformed
    refused(engine, "play red F5")  # bad colour
    refused(engine, "play b F5 extra")
    ok(engine, "play b F5")
    ok(engine, "play white F7")
    refused(engine, "play b E6")  # next to the middle of F5-F6-F7: a branch
    assert ok(engine, "list_stones b") == "F5 F6"
    assert ok(engine, "list_stones white") == "F7"
    assert ok(engine, "list_stones w") == "F7"


def test_double_placement_turns_and_nokomi_first_move():
    engine = GtpEngine()
    ok(engine, "boardsize 4")
    ok(engine, "catena-set-rules double standard")
    ok(engine, "play b D4")
    ok(engine, "play w A1")
    ok(engine, "play w G7")
    refused(engine, "play w A4")
    ok(engine, "play b A4")
    assert "button" not in ok(engine, "all_legal b").split()
    refused(engine, "play b button")
    ok(engine, "catena-set-rules nokomi longest")
    assert engine.game.history == []
    legal = ok(engine, "all_legal b").split()
    assert "button" not in legal and len(legal) == 37
    refused(engine, "play b button")  # ruling 2
    ok(engine, "play b D4")
    assert "button" in ok(engine, "all_legal w").split()


def test_set_rules_clears_board_and_refuses_unknown_names():
    engine = GtpEngine()
    ok(engine, "komi 7")
    ok(engine, "play b F6")
    refused(engine, "catena-set-rules swap standard")
    refused(engine, "catena-set-rules komi longer")
    refused(engine, "catena-set-rules komi")
    ok(engine, "catena-set-rules KOMI Quadratic")
    assert engine.game.history == [] and engine.komi == 7
    assert str(engine.rules.scoring.value) == "quadratic"
    ok(engine, "komi 500")
    ok(engine, "catena-set-rules komi longest")  # 500 is outside 0..15: reset to 0
    assert engine.komi == 0


def test_all_legal_matches_game_and_is_empty_when_over_or_out_of_turn():
    engine = GtpEngine(seed=1)
    ok(engine, "boardsize 3")
    board = engine.rules.board
    while not engine.game.is_over:
        colour = "b" if engine.game.to_move == BLACK else "w"
        other = "w" if colour == "b" else "b"
        expected = [board.action_name(a) for a in engine.game.legal_actions()]
        assert ok(engine, f"all_legal {colour}").split() == expected
        assert ok(engine, f"all_legal {other}") == ""
        ok(engine, f"genmove {colour}")
    assert ok(engine, "all_legal b") == "" and ok(engine, "all_legal w") == ""
    refused(engine, "genmove b")
    refused(engine, "genmove w")
    refused(engine, "play b A1")
    refused(engine, "all_legal purple")


def test_undo_restores_state_and_refuses_on_empty_history():
    engine = GtpEngine()
    refused(engine, "undo")
    start = position(engine)
    ok(engine, "play b F6")
    after_one = position(engine)
    ok(engine, "play w button")
    ok(engine, "play b F7")  # the button took White's turn
    ok(engine, "undo")
    ok(engine, "undo")
    assert position(engine) == after_one
    ok(engine, "undo")
    assert position(engine) == start
    refused(engine, "undo")
    refused(engine, "undo now")


def test_showboard_is_multiline_without_blank_lines():
    engine = GtpEngine()
    ok(engine, "play b F6")
    reply = ask(engine, "showboard")
    assert reply.startswith("= \n")
    lines = reply.split("\n")[1:]
    assert len(lines) >= 11 and all(line.strip() for line in lines)
    assert "X" in reply


def play_out(engine: GtpEngine) -> None:
    while not engine.game.is_over:
        colour = "black" if engine.game.to_move == BLACK else "white"
        move = ok(engine, f"genmove {colour}")
        assert move == "button" or engine.rules.board.parse_cell(move) >= 0


@pytest.mark.parametrize("side,game_type,scoring,komi", [
    (6, "komi", "standard", 7), (5, "komi", "longest", 3), (4, "komi", "quadratic", 40),
    (6, "nokomi", "longest", 0), (3, "double", "standard", 0), (7, "double", "quadratic", 0),
])
def test_final_score_after_a_full_random_game(side, game_type, scoring, komi):
    engine = GtpEngine(seed=side)
    ok(engine, f"boardsize {side}")
    ok(engine, f"catena-set-rules {game_type} {scoring}")
    ok(engine, f"komi {komi}")
    refused(engine, "final_score")
    play_out(engine)
    score = ok(engine, "final_score")
    assert score == engine.game.result_string()
    assert score == "0" or score[:2] in ("B+", "W+") and not score.endswith(".0")
    replay = Game(Rules(side=side, game_type=game_type, scoring=scoring), komi=komi)
    for action in engine.game.history:
        replay.play(action)
    assert replay.result_string() == score


def test_seeded_random_player_is_reproducible():
    moves = []
    for _ in range(2):
        engine = GtpEngine(seed=123)
        ok(engine, "boardsize 4")
        play_out(engine)
        moves.append(list(engine.game.history))
    assert moves[0] == moves[1]


class FirstMovePlayer:
    def genmove(self, game, **options):
        return game.legal_actions()[0]


class BadPlayer:
    def genmove(self, game, **options):
        return 10**6


def test_custom_player_and_bad_player():
    engine = GtpEngine(player=FirstMovePlayer())
    assert ok(engine, "genmove b") == "A1"
    engine.player = BadPlayer()
    assert "illegal" in refused(engine, "genmove w")
    engine.player = RandomPlayer(seed=0)
    ok(engine, "genmove w")


def test_register_command_and_refusals_restore_state():
    engine = GtpEngine()

    def count_stones(engine, args):
        return str(len(engine.game.history))

    def play_then_fail(engine, args):
        engine.game.play("F6")
        raise GtpError("changed my mind")

    def crash(engine, args):
        engine.new_game(Rules(side=3))
        raise RuntimeError("boom")

    engine.register_command("count", count_stones)
    engine.register_command("fickle", play_then_fail)
    engine.register_command("crash", crash)
    assert ok(engine, "known_command count") == "true"
    assert "count" in ok(engine, "list_commands").split("\n")
    ok(engine, "play b A1")
    assert ok(engine, "count") == "1"
    assert refused(engine, "fickle") == "changed my mind"
    assert "internal error" in refused(engine, "crash")
    assert ask(engine, "3 count") == "=3 1"
    with pytest.raises(ValueError):
        engine.register_command("two words", count_stones)


def test_run_gtp_convenience():
    output = io.StringIO()
    engine = run_gtp(stdin=io.StringIO("boardsize 2\ngenmove b\nquit\n"), stdout=output,
                     seed=0)
    out = output.getvalue().split("\n\n")
    assert out[0] == "=" and out[2] == "=" and out[1].startswith("= ")
    assert len(engine.game.history) == 1
