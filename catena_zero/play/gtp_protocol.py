"""GTP's framing and numbers, shared by every GTP command module (catena_zero.play.gtp).

Input is hostile until proven otherwise: `clean_line` applies GTP 2's preprocessing,
`line_reader` reads a line in bounded pieces (a line longer than MAX_LINE_CHARS is never held
whole), `parse_number` takes ASCII digits only, and `shown` cuts and escapes what a refusal
echoes of the input. A handler raises `GtpError(message)` for a `? message` reply.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MAX_LINE_CHARS = 65536  # longer command lines are refused and skipped
ECHO_CHARS = 40  # at most this much of a client's text is echoed back in a refusal
MAX_MESSAGE_CHARS = 400  # a `?` message is cut here, whatever a handler put in it
ID_PATTERN = re.compile(r"[0-9]{1,18}")  # longer ids are not numbers a controller sends
# GTP numbers: ASCII digits, a '.' fraction where a command takes decimals (7, 7.5, 7., .5),
# a leading sign only where a command allows negatives. ([0-9] is ASCII in `re`; \d is not.)
NUMBER_PATTERNS = {  # (signed, decimal) -> pattern
    (False, False): re.compile(r"[0-9]+"),
    (True, False): re.compile(r"[+-]?[0-9]+"),
    (False, True): re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"),
    (True, True): re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"),
}
NUMBER_SHAPES = {  # what a refusal says a number must look like
    (False, False): "a whole number in ASCII digits (like 12)",
    (True, False): "a whole number in ASCII digits (like 12 or -3)",
    (False, True): "a number in ASCII digits (like 12 or 12.5)",
    (True, True): "a number in ASCII digits (like 7, 7.0 or -3)",
}
MAX_DIGITS = 9  # larger numbers are out of every range here; int() is never asked for more


class GtpError(Exception):
    """Raised by a command handler; the engine answers `? message` and changes nothing."""


def shown(text: str) -> str:
    """A client's text as a refusal may echo it: at most ECHO_CHARS characters, ASCII."""
    text = str(text)
    cut = text[:ECHO_CHARS] + ("..." if len(text) > ECHO_CHARS else "")
    return cut.encode("ascii", "backslashreplace").decode("ascii")


def parse_number(text: str, name: str, low: float, high: float, *, decimal: bool = False,
                 signed: bool | None = None) -> int | float:
    """A GTP number in low..high: an int, or with `decimal` a float (a '.' fraction
    allowed); GtpError naming `name` otherwise. Every command reads its numbers here.

    Only ASCII digits, and a leading sign only when `signed` (by default when low < 0; a
    command whose GTP argument may be negative, like komi, passes True). Python's int() and
    float() also read '\uff15', '\u0661', '1_0', '1e3', 'nan' and 'inf', none of which a
    GTP controller means."""
    signed = low < 0 if signed is None else signed
    if not NUMBER_PATTERNS[signed, decimal].fullmatch(text):
        raise GtpError(f"{name} must be {NUMBER_SHAPES[signed, decimal]}, got "
                       f"{shown(text)!r}")
    if len(text.lstrip("+-").split(".", 1)[0].lstrip("0")) > MAX_DIGITS:
        raise GtpError(f"{name} must be in {_bound(low)}..{_bound(high)}, got {shown(text)}")
    value = float(text) if decimal else int(text)
    if not low <= value <= high:
        raise GtpError(f"{name} must be in {_bound(low)}..{_bound(high)}, got {shown(text)}")
    return value


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def parse_integer(text: str, name: str, low: int, high: int) -> int:
    """A whole number in low..high (parse_number without a fraction)."""
    return int(parse_number(text, name, low, high))


def clean_line(line: str) -> str:
    """GTP 2 preprocessing: drop control characters except tab, tab -> space, cut comments."""
    line = "".join(ch for ch in line if ch == "\t" or ch >= " " and ch != "\x7f")
    line = line.replace("\t", " ")
    return line.split("#", 1)[0].strip()


def line_reader(stream) -> Callable[[], tuple[str, bool]]:
    """A function returning the next piece of `stream` ("" at the end): a whole line, or
    the next MAX_LINE_CHARS + 1 characters (bytes, on a binary stream) of a longer one,
    with True for `the line goes on`."""
    binary = getattr(stream, "buffer", None)
    if binary is not None and hasattr(binary, "readline"):
        def read_bytes() -> tuple[str, bool]:
            piece = binary.readline(MAX_LINE_CHARS + 1)
            cut = len(piece) > MAX_LINE_CHARS and not piece.endswith(b"\n")
            return piece.decode("utf-8", "replace"), cut
        return read_bytes

    def read_text() -> tuple[str, bool]:
        piece = stream.readline(MAX_LINE_CHARS + 1)
        return piece, len(piece) > MAX_LINE_CHARS and not piece.endswith("\n")
    return read_text


def too_long_reply(line: str) -> str:
    first = line[:32].split()
    command_id = first[0] if first and ID_PATTERN.fullmatch(first[0]) else ""
    return f"?{command_id} line too long (over {MAX_LINE_CHARS // 1024} KiB): skipped\n\n"


def no_blank_lines(text: str) -> str:
    """A blank line ends a GTP reply, so keep the first line and drop later empty ones."""
    lines = text.rstrip().split("\n")
    return "\n".join(lines[:1] + [line.rstrip() for line in lines[1:] if line.strip()])


def expect_arguments(args: list[str], count: int, usage: str) -> None:
    if len(args) != count:
        raise GtpError(f"syntax error: usage is {usage}")
