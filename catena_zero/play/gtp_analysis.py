"""GTP extension commands that ask the model: analysis, komi choice, colour choice.

    catena-analyze [SIMULATIONS [TOP]]
        = winrate 0.5632 scorelead 2.4 tomove black simulations 128 best F6
        move F6 visits 40 prior 0.2310 winrate 0.5800
        ... (TOP moves by visits; winrate "nan" for an unvisited move)
        ownership 0.82 -0.30 ... (one value per cell in cell order A1, A2, ..., B1, ...;
                                  Black's view: +1 Black owns it at the end, -1 White)
      win rate (draw = half) and score lead are for the side to move.
    catena-choose-komi
        = 7      the first player's komi: the one the model finds most balanced
    catena-choose-color
        = white  the second player's colour for the current komi (komi game type, before the
                 first move) or for the opening stone (nokomi, right after it: black = swap)

`install_model_commands(engine, player)` registers them and makes `player` the engine's
move generator.
"""

from __future__ import annotations

import math
import sys

from catena_zero.komi.fair import komi_for_play
from catena_zero.play.gtp_protocol import GtpError, parse_integer
from catena_zero.play.session import COLOUR_NAMES

ANALYZE = "catena-analyze"
CHOOSE_KOMI = "catena-choose-komi"
CHOOSE_COLOR = "catena-choose-color"
MAX_ANALYSIS_SIMULATIONS = 100_000


def _game(engine):
    return engine.game


def _format_winrate(value: float) -> str:
    return "nan" if math.isnan(value) else f"{value:.4f}"


def analyze_command(player):
    def handler(engine, args: list[str]) -> str:
        if len(args) > 2:
            raise GtpError(f"usage: {ANALYZE} [SIMULATIONS [TOP]]")
        simulations = (parse_integer(args[0], "simulations", 1, MAX_ANALYSIS_SIMULATIONS)
                       if args else None)
        top = parse_integer(args[1], "top", 1, 1000) if len(args) > 1 else None
        game = _game(engine)
        if game.is_over:
            raise GtpError("the game is over; there is nothing to analyse")
        try:
            analysis = player.analyze(game, simulations=simulations, top=top)
        except ValueError as error:
            raise GtpError(str(error)) from error
        board = game.rules.board
        used = simulations or player.config.simulations
        lines = [f"winrate {analysis.winrate:.4f} scorelead {analysis.score_lead:.2f} "
                 f"tomove {COLOUR_NAMES[analysis.to_move]} simulations {used} "
                 f"best {board.action_name(analysis.best)}"]
        for move in analysis.moves:
            lines.append(f"move {move.name} visits {move.visits} prior {move.prior:.4f} "
                         f"winrate {_format_winrate(move.winrate)}")
        lines.append("ownership " + " ".join(f"{v:.2f}" for v in analysis.ownership_black))
        return "\n".join(lines)

    return handler


def choose_komi_command(player):
    def handler(engine, args: list[str]) -> str:
        if args:
            raise GtpError(f"{CHOOSE_KOMI} takes no arguments")
        try:
            choice = komi_for_play(player, _game(engine).rules)
        except ValueError as error:
            raise GtpError(str(error)) from error
        # The answer stays a bare komi for controllers; where it came from goes to stderr.
        stream = getattr(engine, "note_stream", None) or sys.stderr
        stream.write(f"catena-zero: {choice.note}\n")
        return str(choice.komi)

    return handler


def choose_colour_command(player):
    def handler(engine, args: list[str]) -> str:
        if args:
            raise GtpError(f"{CHOOSE_COLOR} takes no arguments")
        try:
            return COLOUR_NAMES[player.choose_colour(_game(engine))]
        except ValueError as error:
            raise GtpError(str(error)) from error

    return handler


def install_model_commands(engine, player) -> None:
    """Register the three commands on a GtpEngine, answering with `player`."""
    engine.register_command(ANALYZE, analyze_command(player))
    engine.register_command(CHOOSE_KOMI, choose_komi_command(player))
    engine.register_command(CHOOSE_COLOR, choose_colour_command(player))
