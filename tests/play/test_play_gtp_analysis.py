"""GTP with a model: genmove, catena-analyze, catena-choose-komi/-color, model file refusals."""

from __future__ import annotations

import io
import shutil

import pytest
import torch

from catena_zero.cli.common import ConfigError
from catena_zero.cli.gtp import build_engine
from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.gtp import GtpEngine
from catena_zero.play.gtp_analysis import install_model_commands
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.rules import Rules
from tests.export.tiny_model import tiny_model_file


@pytest.fixture()
def engine() -> GtpEngine:
    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(tiny_model_file(3)), PlayerConfig(simulations=8))
    engine = GtpEngine(player, rules=Rules(side=3))
    install_model_commands(engine, player)
    return engine


def reply(engine: GtpEngine, line: str) -> tuple[bool, str]:
    text = engine.handle_line(line)
    assert text.endswith("\n\n")
    return text.startswith("="), text[1:].strip()


def test_genmove_and_analysis(engine: GtpEngine) -> None:
    ok, move = reply(engine, "genmove b")
    assert ok and move in engine.game.stones_of("b")
    ok, text = reply(engine, "catena-analyze 12 3")
    assert ok
    lines = text.split("\n")
    head = lines[0].split()
    assert head[0::2] == ["winrate", "scorelead", "tomove", "simulations", "best"]
    assert 0 <= float(head[1]) <= 1 and head[5] == "white" and head[7] == "12"
    moves = [line.split() for line in lines[1:4]]
    assert all(m[0] == "move" and m[2] == "visits" and m[4] == "prior" for m in moves)
    assert lines[4].startswith("ownership") and len(lines[4].split()) == 1 + 19
    assert all(-1 <= float(v) <= 1 for v in lines[4].split()[1:])


def test_komi_and_colour_choices(engine: GtpEngine) -> None:
    ok, komi = reply(engine, "catena-choose-komi")
    assert ok and 0 <= int(komi) <= 15
    reply(engine, f"komi {komi}")
    ok, colour = reply(engine, "catena-choose-color")
    assert ok and colour in ("black", "white")
    reply(engine, "play b c3")
    ok, error = reply(engine, "catena-choose-color")
    assert not ok and "before the first move" in error
    reply(engine, "catena-set-rules nokomi standard")
    reply(engine, "play b c3")
    ok, colour = reply(engine, "catena-choose-color")
    assert ok and colour in ("black", "white")
    reply(engine, "catena-set-rules double standard")
    assert reply(engine, "catena-choose-komi") == (True, "0")
    assert not reply(engine, "catena-choose-color")[0]


def test_bad_requests_change_nothing(engine: GtpEngine) -> None:
    reply(engine, "play b c3")
    for line, message in [
        ("catena-analyze x", "whole number"),
        ("catena-analyze 0", "1..100000"),
        ("catena-analyze 5 5 5", "usage"),
        ("catena-choose-komi 3", "no arguments"),
        ("boardsize 4", None),
        ("genmove w", "move out of turn"),
    ]:
        ok, text = reply(engine, line)
        if message is None:
            assert ok
        else:
            assert not ok and message in text, (line, text)
    reply(engine, "boardsize 3")
    assert engine.game.history == []


@pytest.mark.parametrize("arguments", ["\u0661\u0662", "\uff18", "1_0", "1e1", "8 \u00b2",
                                       "8 1_0", "9" * 5000])
def test_analysis_numbers_are_ascii_digits_only(engine: GtpEngine, arguments: str) -> None:
    reply(engine, "play b c3")
    ok, text = reply(engine, f"catena-analyze {arguments}")
    assert not ok and "must be" in text and text.isascii() and len(text) < 200, text
    assert engine.game.history == [engine.rules.board.parse_cell("C3")]


def test_model_files_are_checked_before_the_protocol_starts(tmp_path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        build_engine([f"model={tmp_path / 'missing.pt'}"])
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(tiny_model_file(3).read_bytes()[:5000])
    with pytest.raises(ConfigError, match="truncated"):
        build_engine([f"model={truncated}"])
    copy = tmp_path / "copy.pt"
    shutil.copy(tiny_model_file(3), copy)
    engine = build_engine([f"model={copy}", "player.simulations=4"])
    assert engine.rules.side == 3  # starts on the model's board (side: null)
    output = io.StringIO()
    engine.run(io.StringIO("1 genmove b\n2 catena-choose-komi\nquit\n"), output)
    answers = output.getvalue().split("\n\n")
    assert answers[0].startswith("=1 ") and answers[1].startswith("=2 ")
    random_engine = build_engine(["model=random", "side=4"])
    assert random_engine.rules.side == 4 and "catena-analyze" not in random_engine.commands
