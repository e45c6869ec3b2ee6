"""The terminal game, driven by piped input."""

from __future__ import annotations

import io

import pytest
import torch

from catena_zero.cli.play import main as play_main
from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.play.terminal import TerminalConfig, play_terminal
from catena_zero.rules import Rules
from tests.export.tiny_model import tiny_model_file


@pytest.fixture(scope="module")
def player() -> ModelPlayer:
    torch.set_num_threads(1)
    return ModelPlayer(ModelLibrary(tiny_model_file(3)), PlayerConfig(simulations=4))


def run(player: ModelPlayer, text: str, **settings) -> str:
    output = io.StringIO()
    assert play_terminal(player, TerminalConfig(side=3, **settings), io.StringIO(text),
                         output) == 0
    return output.getvalue()


def test_moves_errors_undo_and_quit(player: ModelPlayer) -> None:
    text = run(player, "C3\nc3\nq9\nundo\nhint\nhelp\nquit\n")
    assert text.count("model plays") == 1
    assert "error: illegal move C3" in text
    assert "error: cell 'q9' is not on the side-3 board" in text and "undone" in text
    assert "win rate for black" in text and "take the button" in text
    assert text.rstrip().endswith("bye")
    # The board is drawn in RULES.md notation: rows 1..5 and columns A..E on side 3, each
    # column lettered at both ends (B's top end is left of row 5).
    assert " 5   B . . ." in text and "        A B C" in text


def test_a_whole_game_by_piping_every_cell(player: ModelPlayer) -> None:
    cells = [Rules(side=3).board.cell_name(i) for i in range(19)]
    text = run(player, "\n".join(cells * 2 + ["button"]) + "\n", colour="white", komi=3)
    assert "game over: " in text and ("you win" in text or "the model wins" in text)


def test_end_of_input_and_swap(player: ModelPlayer) -> None:
    text = run(player, "", game_type="nokomi", colour="white")
    assert "you may swap" in text and "end of input" in text
    text = run(player, "swap\nquit\n", game_type="nokomi", colour="white")
    assert "you: black" in text


def test_cli_reads_stdin(monkeypatch, capsys) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("c3\nquit\n"))
    assert play_main([f"model={tiny_model_file(3)}", "side=3", "komi=auto",
                      "player.simulations=4"]) == 0
    out = capsys.readouterr().out
    assert "the model chose komi" in out and "model plays" in out


def test_think_levels_bound_the_model_and_are_checked(player: ModelPlayer) -> None:
    text = run(player, "think quick\nthink blitz\nthink\nC3\nquit\n")
    assert "the model now thinks up to 0.5 s or 128 simulations a move" in text
    assert text.count("expected one of quick, normal, strong") == 2
    assert "model plays" in text
    with pytest.raises(ValueError, match="think time"):
        TerminalConfig(side=3, think="forever")
    assert "model plays" in run(player, "C3\nquit\n", think="quick")
