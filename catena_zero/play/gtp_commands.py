"""The standard GTP commands of the board and the game: boardsize, clear_board, komi,
catena-set-rules, play, genmove, undo, showboard, final_score, all_legal and list_stones.

Each handler is `handler(engine, args) -> str` over a `catena_zero.play.gtp.GtpEngine`
(which registers them, GAME_COMMANDS), raising GtpError for a `?` reply; the engine restores
its rules, komi and moves when a handler raises.
"""

from __future__ import annotations

import time

from catena_zero.play.gtp_protocol import (
    ECHO_CHARS,
    GtpError,
    expect_arguments,
    parse_integer,
    parse_number,
    shown,
)
from catena_zero.rules import BLACK, WHITE, Game, Rules

COLOUR_LABELS = {BLACK: "Black", WHITE: "White"}


def _boardsize(engine, args: list[str]) -> str:
    expect_arguments(args, 1, "boardsize N")
    try:
        side = parse_integer(args[0], "board side", 2, 10)
    except GtpError as error:  # GTP 2's own words for a refused size come first
        raise GtpError(f"unacceptable size: {error}") from None
    rules = Rules(side=side, game_type=engine.rules.game_type,
                  scoring=engine.rules.scoring)
    engine.new_game(rules)
    engine.note_track()
    return ""


def _clear_board(engine, args: list[str]) -> str:
    expect_arguments(args, 0, "clear_board")
    engine.new_game()
    return ""


def _komi(engine, args: list[str]) -> str:
    expect_arguments(args, 1, "komi K")
    # A GTP komi is a float and may be negative; this game's komi is whole and in the
    # rules' range.
    low, high = engine.rules.komi_range
    value = parse_number(args[0], "komi", low, high, decimal=True, signed=True)
    if not float(value).is_integer():
        raise GtpError(f"komi must be a whole number, got {shown(args[0])}")
    komi = int(value)
    engine.rules.validate_komi(komi)
    history = list(engine.game.history)
    game = Game(engine.rules, komi=komi)
    for action in history:  # legality does not depend on the komi: keep the position
        game.play(action)
    engine.game, engine.komi = game, komi
    return ""


def _set_rules(engine, args: list[str]) -> str:
    expect_arguments(args, 2, "catena-set-rules komi|nokomi|double standard|longest|quadratic")
    try:
        rules = Rules(side=engine.rules.side, game_type=args[0].lower(),
                      scoring=args[1].lower())
    except ValueError as error:
        if max(len(args[0]), len(args[1])) <= ECHO_CHARS:
            raise
        # The rules' own message would repeat the names in full.
        raise GtpError(f"unknown rules {shown(args[0])} {shown(args[1])}: game type is "
                       f"komi, nokomi or double, scoring standard, longest or quadratic") \
            from error
    engine.new_game(rules)
    engine.note_track()
    return ""


def _colour_to_move(engine, args: list[str], count: int, usage: str) -> int:
    """Parse COLOR and refuse it unless the game is running and it is that colour's turn."""
    expect_arguments(args, count, usage)
    colour = engine.parse_colour(args[0])
    if engine.game.is_over:
        raise GtpError("the game is over")
    if colour != engine.game.to_move:
        raise GtpError(f"move out of turn: it is {COLOUR_LABELS[engine.game.to_move]}'s turn")
    return colour


def _play(engine, args: list[str]) -> str:
    _colour_to_move(engine, args, 2, "play COLOR MOVE")
    move = args[1].lower() if args[1].lower() in ("button", "pass") else args[1]
    try:
        action = engine.game.parse_action(move)
    except ValueError as error:
        detail = f": {error}" if len(args[1]) <= ECHO_CHARS else ""
        raise GtpError(f"invalid vertex {shown(args[1])!r}{detail}") from error
    if action not in engine.game.legal_actions():
        raise GtpError(f"illegal move {shown(args[1])}")
    engine.game.play(action)
    return ""


def _genmove(engine, args: list[str]) -> str:
    _colour_to_move(engine, args, 1, "genmove COLOR")
    engine.note_track()
    colour = int(engine.game.state.to_move[0])
    seconds = engine.move_seconds()
    start = time.monotonic()
    if seconds is None:
        action = int(engine.player.genmove(engine.game))
    else:
        action = int(engine.player.genmove(engine.game, seconds=seconds))
    engine.clock.charge(colour, time.monotonic() - start)
    if action not in engine.game.legal_actions():
        raise GtpError(f"the player chose an illegal action {action}")
    engine.game.play(action)
    return engine.rules.board.action_name(action)


def _undo(engine, args: list[str]) -> str:
    expect_arguments(args, 0, "undo")
    if not engine.game.history:
        raise GtpError("cannot undo: no moves have been played")
    engine.game.undo()
    return ""


def _showboard(engine, args: list[str]) -> str:
    expect_arguments(args, 0, "showboard")
    return "\n" + engine.game.board_text()


def _final_score(engine, args: list[str]) -> str:
    expect_arguments(args, 0, "final_score")
    if not engine.game.is_over:
        raise GtpError("the game is not over")
    return engine.game.result_string()


def _all_legal(engine, args: list[str]) -> str:
    expect_arguments(args, 1, "all_legal COLOR")
    colour = engine.parse_colour(args[0])
    if engine.game.is_over or colour != engine.game.to_move:
        return ""
    board = engine.rules.board
    return " ".join(board.action_name(action) for action in engine.game.legal_actions())


def _list_stones(engine, args: list[str]) -> str:
    expect_arguments(args, 1, "list_stones COLOR")
    return " ".join(engine.game.stones_of(engine.parse_colour(args[0])))


GAME_COMMANDS = {
    "boardsize": _boardsize,
    "clear_board": _clear_board,
    "komi": _komi,
    "play": _play,
    "genmove": _genmove,
    "undo": _undo,
    "showboard": _showboard,
    "final_score": _final_score,
    "catena-set-rules": _set_rules,
    "all_legal": _all_legal,
    "list_stones": _list_stones,
}
