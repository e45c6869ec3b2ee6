"""Game records (SGF dialect): round trips, literal records, strict parsing, fuzzing."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catena_zero.data.game_record import (
    MAX_RECORD_BYTES,
    GameRecord,
    MoveAnalysis,
    RecordError,
    RecordMove,
    load_record,
    parse_record,
    record_from_actions,
    record_from_game,
    replay,
    same_position,
    save_record,
    write_record,
)
from catena_zero.rules import BLACK, WHITE, Game, Rules

VARIANTS = [(game_type, scoring) for game_type in ("komi", "nokomi", "double")
            for scoring in ("standard", "longest", "quadratic")]
NAME_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF,
                                  blacklist_characters="\x7f"), max_size=12)
COMMENT_TEXT = st.text(st.characters(min_codepoint=9, max_codepoint=0x2FFF,
                                     blacklist_categories=("Cs",)).filter(
    lambda ch: ch in "\n\t" or (ch >= " " and ch != "\x7f")), max_size=20)


def random_game(rules: Rules, komi: int, seed: int, stop: float = 1.0) -> Game:
    """A random legal game, played to the end, or cut after a `stop` share of it."""
    rng = np.random.default_rng(seed)
    game = Game(rules, komi=komi)
    while not game.is_over and (stop >= 1.0 or rng.random() > 1.0 - stop or not game.history):
        game.play(int(rng.choice(game.legal_actions())))
        if stop < 1.0 and rng.random() > stop:
            break
    return game


@st.composite
def records(draw):
    side = draw(st.integers(2, 4))
    game_type, scoring = draw(st.sampled_from(VARIANTS))
    rules = Rules(side, game_type, scoring)
    low, high = rules.komi_range
    komi = draw(st.integers(low, min(high, 40)))
    game = random_game(rules, komi, draw(st.integers(0, 2**32 - 1)),
                       draw(st.sampled_from([1.0, 1.0, 0.5])))
    board = rules.board
    analyses = []
    for _ in game.history:
        if draw(st.booleans()):
            analyses.append(None)
            continue
        top = draw(st.lists(st.tuples(st.integers(0, board.num_actions - 1),
                                      st.integers(0, 10**6)), max_size=3))
        analyses.append(MoveAnalysis(
            winrate=draw(st.none() | st.floats(0.0, 1.0)),
            score_lead=draw(st.none() | st.floats(-500, 500, allow_nan=False)),
            visits=draw(st.none() | st.integers(0, 10**6)),
            top_moves=tuple((board.action_name(action), visits) for action, visits in top)))
    comments = [draw(COMMENT_TEXT) for _ in game.history]
    swapped = draw(st.none() | st.booleans()) if game_type == "nokomi" and game.history else None
    record = record_from_game(game, draw(NAME_TEXT), draw(NAME_TEXT), draw(NAME_TEXT),
                              swapped=swapped, analyses=analyses, comments=comments)
    record.comment = draw(COMMENT_TEXT)
    return record, game


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_round_trip_keeps_the_record_and_the_final_position(drawn):
    record, game = drawn
    text = write_record(record)
    parsed = parse_record(text)
    assert parsed == record
    assert same_position(replay(parsed), game)
    assert write_record(parsed) == text
    assert parse_record(text.encode("utf-8")) == record


LITERAL = """(;GM[Catena]FF[4]CA[UTF-8]CV[1]AP[catena_zero:0.1.0]SZ[2]RU[komi/standard]KM[1]
PB[Ann]PW[Bob]DT[2026-12-01]RE[B+3.5]C[a side-2 game]
;B[A1]CZ[wr=0.25;lead=-1.5;v=10;top=A1:6,B2:4]C[opening]
;W[button]
;B[A2]
;W[B1]
;B[B3]
;W[C3])
"""


def test_a_literal_record_reads_as_written():
    record = parse_record(LITERAL)
    assert record.rules == Rules(2, "komi", "standard")
    assert (record.komi, record.result) == (1, "B+3.5")
    assert (record.black_player, record.white_player, record.date) == ("Ann", "Bob",
                                                                       "2026-12-01")
    assert record.comment == "a side-2 game"
    board = record.rules.board
    assert [board.action_name(move.action) for move in record.moves] == [
        "A1", "button", "A2", "B1", "B3", "C3"]
    assert [move.colour for move in record.moves] == [BLACK, WHITE] * 3
    assert record.moves[0].analysis == MoveAnalysis(0.25, -1.5, 10, (("A1", 6), ("B2", 4)))
    assert record.moves[0].comment == "opening"
    game = replay(record)
    assert game.is_over and game.result_string() == "B+3.5"


def test_the_documented_example_reads_and_replays():
    page = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "records.md").read_text()
    example = re.search(r"## Example.*?```\n(.*?)```", page, re.S).group(1)
    record = parse_record(example)
    assert record.result == "B+3.5" and replay(record).result_string() == "B+3.5"
    assert record.moves[0].analysis.top_moves == (("A1", 6), ("B2", 4))


def test_escapes_and_soft_line_breaks_in_text():
    text = LITERAL.replace("C[a side-2 game]", "C[a \\] b \\\\ c\\\nd]")
    assert parse_record(text).comment == "a ] b \\ cd"


def test_double_and_nokomi_records():
    rules = Rules(3, "double", "quadratic")
    record = record_from_game(random_game(rules, 0, 4))
    colours = [move.colour for move in record.moves]
    assert colours[:5] == [BLACK, WHITE, WHITE, BLACK, BLACK]
    assert parse_record(write_record(record)) == record
    nokomi = record_from_game(random_game(Rules(3, "nokomi", "standard"), 0, 5), swapped=True)
    assert "SW[yes]" in write_record(nokomi)


@pytest.mark.parametrize(("change", "message"), [
    (("GM[Catena]", "GM[Go]"), "GM must be Catena"),
    (("FF[4]", "FF[3]"), "FF must be 4"),
    (("CV[1]", "CV[2]"), "CV[2]"),
    (("SZ[2]", "SZ[11]"), "SZ"),
    (("SZ[2]", ""), "SZ (the board side) is missing"),
    (("RU[komi/standard]", "RU[komi]"), "RU must be GAMETYPE/SCORING"),
    (("RU[komi/standard]", "RU[chess/standard]"), "unknown game type"),
    (("KM[1]", "KM[16]"), "KM: komi 16 is outside"),
    (("KM[1]", "KM[1.5]"), "KM must be a whole number"),
    (("RE[B+3.5]", "RE[W+1.5]"), "RE[W+1.5]: the moves give B+3.5"),
    (("RE[B+3.5]", "RE[B+R]"), "RE must be B+x, W+x or 0"),
    (("RE[B+3.5]", "RE[B+3.0]"), "without a trailing .0"),
    ((";W[C3])", ")"), "RE[B+3.5]: the game is not over after 5 moves"),
    ((";B[A2]", ";B[B9]"), "move 3 (B[B9]): cell 'B9' is not on the side-2 board"),
    ((";B[A2]", ";W[A2]"), "move 3 (W[A2]): it is Black's turn"),
    ((";B[A2]", ";B[A1]"), "move 3 (B[A1]) is illegal: the cell is occupied"),
    ((";B[A2]", ";B[button]"), "move 3 (B[button]) is illegal: the button is already taken"),
    ((";W[C3])", ";W[C3];B[C2])"), "move 7 (B[C2]): the game is already over"),
    ((";B[A2]", ";B[A2]XX[1]"), "move 3: unknown property XX"),
    ((";B[A2]", ";B[A2]W[B2]"), "move 3: a node after the root holds exactly one move"),
    ((";B[A2]", ";C[hi]"), "found 0"),
    (("PB[Ann]", "PB[Ann][Al]"), "a property has exactly one value"),
    (("PB[Ann]", "PB[Ann]PB[Al]"), "property PB appears twice"),
    (("PB[Ann]", "B[A1]"), "the root node holds a move"),
    (("PB[Ann]", "pb[Ann]"), "expected a property name"),
    (("C[opening]", "C[opening](;B[A2])"), "variations are not supported"),
    (("v=10", "v=ten"), "move 1 CZ v must be a whole number"),
    (("wr=0.25", "wr=nan"), "move 1 CZ: wr must be a number"),
    (("wr=0.25", "wr=1.5"), "win rate must be in 0..1"),
    (("top=A1:6", "top=Z9:6"), "top move 'Z9'"),
    (("top=A1:6", "top=A1"), "a top move is MOVE:VISITS"),
    (("wr=0.25", "xx=1"), "expected wr=, lead=, v= or top="),
])
def test_a_bad_record_names_what_is_wrong(change, message):
    old, new = change
    assert old in LITERAL
    with pytest.raises(RecordError) as raised:
        parse_record(LITERAL.replace(old, new, 1))
    text = str(raised.value)
    assert message in text
    assert "\n" not in text


def test_structural_defects():
    for text, message in [("", "expected '(' opening"), ("(", "not closed"),
                          ("()", "no node"), (LITERAL + "(;GM[Catena])", "text after"),
                          (LITERAL.replace(";W[C3])", ";W[C3"), "not closed"),
                          (b"\xff\xfe", "not UTF-8")]:
        with pytest.raises(RecordError, match=message.replace("(", r"\(")):
            parse_record(text)
    with pytest.raises(RecordError, match="larger than"):
        parse_record(b" " * (MAX_RECORD_BYTES + 1))
    with pytest.raises(RecordError, match="text or bytes"):
        parse_record(12)


def test_nokomi_first_move_and_swap_rules():
    nokomi = LITERAL.replace("RU[komi/standard]", "RU[nokomi/standard]").replace("KM[1]", "KM[0]")
    with pytest.raises(RecordError, match="first move of nokomi must place a stone"):
        parse_record(nokomi.replace(";B[A1]", ";B[button]"))
    with pytest.raises(RecordError, match="SW: a swap exists only in the nokomi"):
        parse_record(LITERAL.replace("PB[Ann]", "SW[yes]PB[Ann]"))
    with pytest.raises(RecordError, match="SW must be yes or no"):
        parse_record(nokomi.replace("PB[Ann]", "SW[maybe]PB[Ann]"))
    double = LITERAL.replace("RU[komi/standard]", "RU[double/standard]").replace("KM[1]", "KM[0]")
    with pytest.raises(RecordError, match="double game type has no button"):
        parse_record(double)


def test_writing_refuses_a_bad_record(tmp_path):
    rules = Rules(2)
    good = record_from_actions(rules, 0, [0])
    bad = GameRecord(rules, 0, [RecordMove(BLACK, 0), RecordMove(WHITE, 0)])
    path = tmp_path / "game.sgf"
    with pytest.raises(RecordError, match="move 2 .* the cell is occupied"):
        save_record(path, bad)
    assert not path.exists()
    with pytest.raises(RecordError, match="control characters"):
        write_record(GameRecord(rules, 0, [], black_player="a\nb"))
    with pytest.raises(RecordError, match="lone surrogate"):
        save_record(path, GameRecord(rules, 0, [], comment="\ud800"))
    with pytest.raises(RecordError, match="lone surrogate"):
        parse_record(LITERAL.replace("C[opening]", "C[\ud800]"))
    save_record(path, good)
    assert load_record(path) == good
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left over


def test_load_names_the_file(tmp_path):
    path = tmp_path / "broken.sgf"
    path.write_text("(;GM[Go])")
    with pytest.raises(RecordError, match="broken.sgf: GM must be Catena"):
        load_record(path)
    with pytest.raises(RecordError, match="cannot read"):
        load_record(tmp_path / "missing.sgf")


def test_replay_upto_a_move_number():
    record = parse_record(LITERAL)
    game = replay(record, upto=2)
    assert len(game.history) == 2 and not game.is_over
    with pytest.raises(RecordError, match="outside 0..6"):
        replay(record, upto=7)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_raise_only_record_errors(data):
    try:
        parse_record(data)
    except RecordError:
        pass


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(LITERAL) - 1), st.integers(0, 2),
                          st.sampled_from(list("()[];\\:BW0123456789+-.=,AZ \n\x00é"))),
                min_size=1, max_size=4))
def test_mutated_records_raise_only_record_errors(edits):
    text = list(LITERAL)
    for position, kind, char in edits:
        position = min(position, len(text) - 1)
        if kind == 0:
            text[position] = char
        elif kind == 1:
            text.insert(position, char)
        elif len(text) > 1:
            del text[position]
    try:
        record = parse_record("".join(text))
    except RecordError:
        return
    assert isinstance(record, GameRecord)
    replay(record)  # what parses replays
