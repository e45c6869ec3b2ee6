"""GTP time controls: `time_settings`, `time_left`, `kgs-time_settings`, and the genmove
time bound they give a model player.

    install_time_commands(engine)      # after GtpEngine(...); the clock starts with no limit

`time_settings main byo_yomi_time byo_yomi_stones` (GTP 2): absolute time when the
byo-yomi time is 0, Canadian overtime otherwise, no limit when byo-yomi time > 0 and stones 0.
`kgs-time_settings none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN PERIOD
STONES`. `time_left COLOR SECONDS STONES` sets a player's clock (stones 0: main time). The
engine also runs its own clocks: each genmove's thinking time is taken off the mover's clock,
so a controller that never sends `time_left` is still played in time. `clear_board` and
`boardsize` start both clocks again.
"""

from __future__ import annotations

from catena_zero.play.gtp import GtpEngine
from catena_zero.play.gtp_protocol import GtpError, parse_integer, parse_number
from catena_zero.play.time_control import GameClock

MAX_SECONDS = 10_000_000  # any clock a controller sets is far below (115 days)


def parse_seconds(text: str, name: str) -> float:
    """Seconds in 0..10000000: ASCII digits with an optional fraction (GTP sends whole
    seconds; `12.5` is accepted); no sign, exponent, '_', nan or inf."""
    return float(parse_number(text, name, 0, MAX_SECONDS, decimal=True))


def _time_settings(engine: GtpEngine, args: list[str]) -> str:
    if len(args) != 3:
        raise GtpError("usage: time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
    main = parse_seconds(args[0], "main time")
    period = parse_seconds(args[1], "byo-yomi time")
    stones = parse_integer(args[2], "byo-yomi stones", 0, 1_000_000)
    engine.clock = GameClock.gtp(main, period, stones)
    return ""


def _kgs_time_settings(engine: GtpEngine, args: list[str]) -> str:
    kind = args[0].lower() if args else ""
    usage = {"none": 1, "absolute": 2, "byoyomi": 4, "canadian": 4}
    if kind not in usage or len(args) != usage[kind]:
        raise GtpError("usage: kgs-time_settings none | absolute MAIN | byoyomi MAIN PERIOD "
                       "PERIODS | canadian MAIN PERIOD STONES")
    if kind == "none":
        engine.clock = GameClock("none")
    elif kind == "absolute":
        engine.clock = GameClock("absolute", main=parse_seconds(args[1], "main time"))
    else:
        main = parse_seconds(args[1], "main time")
        period = parse_seconds(args[2], "period time")
        count = parse_integer(args[3], "periods" if kind == "byoyomi" else "stones", 0, 1_000_000)
        try:
            engine.clock = (GameClock("byoyomi", main=main, period=period, periods=count)
                            if kind == "byoyomi" else
                            GameClock("canadian", main=main, period=period, stones=count))
        except ValueError as error:
            raise GtpError(str(error)) from error
    return ""


def _time_left(engine: GtpEngine, args: list[str]) -> str:
    if len(args) != 3:
        raise GtpError("usage: time_left COLOR TIME STONES")
    colour = engine.parse_colour(args[0])
    seconds = parse_seconds(args[1], "time left")
    stones = parse_integer(args[2], "stones", 0, 1_000_000)
    engine.clock.set_left(colour, seconds, stones)
    return ""


def install_time_commands(engine: GtpEngine) -> None:
    """Register the time commands on `engine` (its clock is `engine.clock`)."""
    engine.register_command("time_settings", _time_settings)
    engine.register_command("kgs-time_settings", _kgs_time_settings)
    engine.register_command("time_left", _time_left)
