"""GTP under hostile input: ASCII numbers only, bounded echoes and lines, and a fuzz of
thousands of bad lines in every game state that must be refused without changing anything."""

from __future__ import annotations

import copy
import io
import random
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catena_zero.play.gtp import ECHO_CHARS, MAX_LINE_CHARS, GtpEngine
from catena_zero.play.gtp_time import install_time_commands
from catena_zero.rules import BLACK, WHITE, Rules

REPLY_PATTERN = re.compile(r"[=?][0-9]*( [^\n]*)?(\n[^\n]+)*")
STRANGE_DIGITS = ["\u00b2", "\uff15", "\u0661", "\u0663", "\u07c1", "\U0001d7d9", "\u2167",
                  "\u00bd", "\u0e53"]


def run_lines(engine: GtpEngine, text: str) -> list[str]:
    """Feed `text` to engine.run; the replies, each checked well-formed, without blank line."""
    output = io.StringIO()
    engine.run(io.StringIO(text), output)
    out = output.getvalue()
    if not out:
        return []
    assert out.endswith("\n\n"), repr(out[-80:])
    replies = out[:-2].split("\n\n")
    for reply in replies:
        assert REPLY_PATTERN.fullmatch(reply), repr(reply[:200])
    return replies


def position(engine: GtpEngine):
    game = engine.game
    return (engine.rules, engine.komi, list(game.history), game.to_move, game.is_over,
            game.stones_of(BLACK), game.stones_of(WHITE), int(game.state.komi[0]))


@pytest.mark.parametrize("line", [
    "\u00b2 name", "\uff17 name", "\u0661\u0662 version",
    "boardsize \uff15", "boardsize \u0665", "boardsize 1_0", "boardsize 0x5", "boardsize 5.0",
    "komi \u0661", "komi 1_0", "komi 1e1", "komi \uff17.0", "komi 7.\u0660", "komi inf",
    "komi nan", "komi 0x7", "komi " + "9" * 5000, "boardsize " + "9" * 5000,
], ids=lambda line: ascii(line[:24]))
def test_numbers_are_ascii_digits_only(line: str) -> None:
    engine = GtpEngine()
    engine.handle_line("play b F6")
    before = position(engine)
    (reply,) = run_lines(engine, line + "\n")
    assert reply.startswith("? "), (line, reply)
    assert reply.isascii() and len(reply) < 200, reply
    assert position(engine) == before


def test_good_numbers_still_work() -> None:
    engine = GtpEngine()
    assert run_lines(engine, "12 boardsize 4\n0007 komi 07.00\nkomi +3\n99 name\n") == [
        "=12", "=0007", "=", "=99 catena_zero"]
    assert engine.rules.side == 4 and engine.komi == 3


def test_refusals_echo_a_bounded_ascii_prefix() -> None:
    engine = GtpEngine()
    for line in ["x" * 1_000_000, "\u00e9" * 50_000, "play b " + "Z" * 60_000,
                 "play " + "q" * 60_000 + " F6", "catena-set-rules " + "k" * 30_000 + " s",
                 "list_stones " + "\u4e2d" * 1000]:
        (reply,) = run_lines(engine, line + "\n")
        assert reply.startswith("? ") and reply.isascii(), reply[:100]
        assert len(reply) < 4 * ECHO_CHARS + 200, (line[:20], len(reply))


def test_a_huge_line_is_refused_and_skipped_in_linear_time() -> None:
    engine = GtpEngine()
    huge = "7 " + "x" * (16 * MAX_LINE_CHARS)
    start = time.monotonic()
    replies = run_lines(engine, f"1 name\n{huge}\n2 name\n{'y' * (MAX_LINE_CHARS + 1)}")
    elapsed = time.monotonic() - start
    assert replies[0] == "=1 catena_zero" and replies[2] == "=2 catena_zero"
    assert replies[1].startswith("?7 line too long") and replies[3].startswith("? line too long")
    assert elapsed < 5, elapsed  # about 0.05 s; the whole-line read took far longer
    (reply,) = run_lines(engine, "x" * MAX_LINE_CHARS + "\n")  # at the limit: an answer
    assert reply.startswith("? unknown command")


def test_undecodable_bytes_on_a_binary_stream_get_a_refusal() -> None:
    engine = GtpEngine()
    stream = io.TextIOWrapper(io.BytesIO(b"\xff\xfe\x80 name\n3 name\n\xc3( boardsize 4\n"),
                              encoding="utf-8")
    output = io.StringIO()
    engine.run(stream, output)
    replies = output.getvalue()[:-2].split("\n\n")
    assert replies[0].startswith("? unknown command") and replies[0].isascii()
    assert replies[1] == "=3 catena_zero" and replies[2].startswith("? ")
    assert engine.rules.side == 6


def test_a_long_line_of_multibyte_characters_is_one_refusal() -> None:
    # 40,000 two-byte characters: under the limit in characters, over it in bytes read.
    line = ("4 boardsize 3 " + "\u00e9" * 40_000 + "\n").encode("utf-8")
    stream = io.TextIOWrapper(io.BytesIO(line + b"5 name\n"), encoding="utf-8")
    output = io.StringIO()
    engine = GtpEngine()
    engine.run(stream, output)
    assert output.getvalue().split("\n\n")[:2] == [
        "?4 line too long (over 64 KiB): skipped", "=5 catena_zero"]
    assert engine.rules.side == 6


def hostile_line(rng: random.Random, engine: GtpEngine) -> str:
    """One line of the fuzz: mostly malformed, sometimes a valid command to move the state."""
    board = engine.rules.board
    commands = list(engine.commands)
    cells = [board.cell_name(i) for i in range(board.num_cells)]
    words = (commands + cells + ["b", "w", "black", "white", "red", "button", "pass", "",
                                 "komi", "7", "-1", "6.5", "1_0", "0x10", "1e3", "A0", "Z99",
                                 "k" * 100, "standard", "longest", "quadratic", "nokomi",
                                 "double", "#", "\t", "\x00", "\x7f"] + STRANGE_DIGITS)
    kind = rng.randrange(12)
    if kind == 0:  # random bytes
        return rng.randbytes(rng.randrange(1, 80)).decode("latin-1")
    if kind == 1:  # random code points
        return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(1, 30)))
    if kind == 2:  # a command with a strange id
        prefix = rng.choice(STRANGE_DIGITS + ["-1", "1.5", "0x1", "9" * 30, "+3", "1_0"])
        return f"{prefix} {rng.choice(commands)}"
    if kind == 3:  # a known command with the wrong number of arguments
        return " ".join([rng.choice(commands)] + rng.choices(words, k=rng.randrange(0, 5)))
    if kind == 4:  # play: an illegal, occupied, malformed or out-of-turn move
        colour = rng.choice(["b", "w", "black", "white", "x", "\u00df"])
        move = rng.choice(cells + ["button", "A0", "Z9", "F\uff16", "", "pass"])
        return f"play {colour} {move}"
    if kind == 5:  # numbers in every shape
        number = rng.choice(["\uff15", "\u0661", "1_0", "1e1", "+-3", "--2", "3.", "3.5", ".0",
                             "9" * rng.randrange(5, 40), "nan", "inf", "0", "-0", "7.000"])
        return f"{rng.choice(['komi', 'boardsize'])} {number}"
    if kind == 6 and rng.random() < 0.05:  # a line over the limit
        return rng.choice(["", "5 ", "name "]) + "x" * (MAX_LINE_CHARS + rng.randrange(1, 9000))
    if kind == 7:  # a valid move for the side to move, when there is one
        if not engine.game.is_over:
            legal = engine.game.legal_actions()
            colour = "b" if engine.game.to_move == BLACK else "w"
            return f"play {colour} {board.action_name(rng.choice(list(legal)))}"
        return "clear_board"
    if kind == 8:  # the engine plays
        return f"genmove {rng.choice(['b', 'w'])}"
    if kind == 9:  # change the rules or the board now and then, to visit other states
        return rng.choice(["boardsize 2", "boardsize 3", "boardsize 4", "undo", "undo",
                           "catena-set-rules nokomi standard", "catena-set-rules double longest",
                           "catena-set-rules komi quadratic", "komi 500", "komi 3", "clear_board"])
    return " ".join(rng.choices(words, k=rng.randrange(1, 6)))


def fuzz(count: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    engine = GtpEngine(seed=seed, rules=None)
    engine.handle_line("boardsize 3")
    counts = {"=": 0, "?": 0, "empty": 0, "over": 0}
    for _ in range(count):
        line = hostile_line(rng, engine).replace("\n", " ").replace("\r", " ")
        before = position(engine)
        counts["over"] += engine.game.is_over
        replies = run_lines(engine, line + "\n")
        assert len(replies) <= 1, (line[:80], replies)
        if not replies:
            counts["empty"] += 1  # a blank line or a comment: no reply, no change
            assert position(engine) == before, line[:80]
            continue
        counts[replies[0][0]] += 1
        if replies[0].startswith("?"):
            assert position(engine) == before, (line[:80], replies[0][:120])
            assert len(replies[0]) < 600 and replies[0].isascii(), replies[0][:120]
        # The engine's own view stays consistent whatever happened.
        low, high = engine.rules.komi_range
        assert low <= engine.komi <= high and int(engine.game.state.komi[0]) == engine.komi
        assert engine.game.rules == engine.rules
    return counts


def test_gtp_fuzz_of_3000_hostile_lines(tmp_path, monkeypatch) -> None:
    # catena-savesgf with a fuzzed file name writes that file: keep it out of the checkout.
    monkeypatch.chdir(tmp_path)
    counts = fuzz(3000, seed=1)
    # The mix reaches both answers and finished games (commands in every state).
    assert counts["?"] > 1500 and counts["="] > 300 and counts["over"] > 20, counts


@pytest.mark.slow
def test_gtp_fuzz_of_30000_hostile_lines(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for seed in range(2, 12):
        fuzz(3000, seed=seed)


# ------------------------------------------------ numbers of every command, one parser
def timed_engine() -> GtpEngine:
    engine = GtpEngine(rules=Rules(side=4))
    install_time_commands(engine)
    engine.handle_line("time_settings 60 0 0")
    engine.handle_line("play b D4")
    return engine


def state(engine: GtpEngine):
    """Everything a refused command must leave as it was: the game and both clocks."""
    return position(engine), copy.deepcopy(engine.clock)


@pytest.mark.parametrize("line", [
    "time_settings \u0661 0 0", "time_settings 1_0 0 0", "time_settings \uff16\uff10 0 0",
    "time_settings 1e3 0 0", "time_settings inf 0 0", "time_settings nan 0 0",
    "time_settings 0x10 0 0", "time_settings +60 0 0", "time_settings 60 \u0665 1",
    "time_settings 60 0 \u0661", "time_left b \u0661\u0660 0", "time_left b 1_0 0",
    "time_left b 10 1_0", "time_left w 1E1 0", "kgs-time_settings absolute \u0669\u0660",
    "kgs-time_settings byoyomi 30 1_0 3", "kgs-time_settings canadian 0 60 \uff11\uff10",
    "boardsize +4", "boardsize -4", "komi \u0667.0", "komi 7.0e0", "komi 7_0",
], ids=lambda line: ascii(line[:30]))
def test_every_command_reads_ascii_numbers_only(line: str) -> None:
    engine = timed_engine()
    before = state(engine)
    (reply,) = run_lines(engine, line + "\n")
    assert reply.startswith("? ") and "\n" not in reply, (line, reply)
    assert reply.isascii() and len(reply) < 200, reply
    assert state(engine) == before


def test_ascii_numbers_still_set_the_clock() -> None:
    engine = timed_engine()
    assert run_lines(engine, "time_settings 0090 5.5 3\ntime_left w 12. 2\n"
                             "time_left b .5 0\nkomi -0\n") == ["=", "=", "=", "="]
    assert (engine.clock.kind, engine.clock.main, engine.clock.period) == ("canadian", 90, 5.5)
    assert engine.clock.clocks[BLACK].left == 0.5 and engine.clock.clocks[WHITE].stones == 2


# One token of the fuzz: pieces a number may be made of, and pieces no GTP number holds.
NUMBER_PIECES = st.sampled_from(
    list("0123456789") + ["+", "-", ".", "_", "e", "E", "x", " ", "\t", "\u00a0", "\u2003",
                          "nan", "inf", "Infinity"] + STRANGE_DIGITS
    + ["\u0660", "\u06f5", "\u09e7", "\uff10"])
FUZZ_COMMANDS = [  # (template, the ASCII grammar its number must match, the accepted range)
    ("time_settings {} 0 0", r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)", (0, 10_000_000)),
    ("time_settings 60 {} 1", r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)", (0, 10_000_000)),
    ("time_settings 60 5 {}", r"[0-9]+", (0, 1_000_000)),
    ("kgs-time_settings byoyomi 30 {} 3", r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)",
     (0, 10_000_000)),
    ("kgs-time_settings canadian 30 60 {}", r"[0-9]+", (1, 1_000_000)),
    ("time_left b {} 0", r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)", (0, 10_000_000)),
    ("time_left w 10 {}", r"[0-9]+", (0, 1_000_000)),
    ("boardsize {}", r"[0-9]+", (2, 10)),
    ("komi {}", r"[+-]?(?:[0-9]+(?:\.0*)?|\.0+)", (0, 15)),
]


@settings(max_examples=400, deadline=None)
@given(command=st.sampled_from(FUZZ_COMMANDS),
       number=st.lists(NUMBER_PIECES, min_size=1, max_size=8).map("".join))
def test_fuzzed_numbers_are_pure_ascii_or_one_refusal(command, number: str) -> None:
    template, grammar, (low, high) = command
    engine = timed_engine()
    before = state(engine)
    replies = run_lines(engine, template.format(number) + "\n")
    assert len(replies) == 1
    (reply,) = replies
    tokens = number.replace("\t", " ").split()  # GTP's own tokenising of the line
    valid = (len(tokens) == 1 and re.fullmatch(grammar, tokens[0]) is not None
             and low <= float(tokens[0]) <= high)
    if valid:
        assert reply == "=", (number, reply)
        return
    assert reply.startswith("? ") and "\n" not in reply and reply.isascii(), (number, reply)
    assert state(engine) == before, number
