"""What one line of `catena-zero analysis` may hold, checked before it is parsed.

    read_lines(stream, put)          # every non-blank line, each read in bounded pieces
    lines = LineQueue(stream)        # the same, on a thread, at most MAX_QUEUED_LINES ahead
    obj = load_line(line)            # the line's JSON value; QueryError(field "line"/"json")
    echo(value)                      # a client's value as an error message may show it

A client's line is hostile until proven otherwise. `json.loads` recurses once per level of
nesting (a thousand `[` end in a RecursionError) and `int()` refuses numbers of more than
4300 digits (a ValueError), either of which would end the engine and lose the answers not
yet written; a line of gigabytes would be held whole. So a line is refused, with one error
line, before it is parsed when it is

- longer than MAX_LINE_BYTES bytes (the reader keeps at most that much of it; the rest is
  skipped in bounded pieces, counted so that the error names the line's length),
- not UTF-8 (an id or move name that is not text could not be written back as JSON),
- nested deeper than MAX_NESTING arrays and objects (brackets inside strings do not count),
- or holds a run of more than MAX_NUMBER_DIGITS digits outside strings (a number no field
  needs).

The error line keeps the line's id when the line begins with `{"id": "..."` and names no
other `"id"`, so a client can tell which query was refused; otherwise its id is null. The
limits are far above what a query needs: the longest game on the largest board (side 10,
271 cells) with every turn analysed is under 4 KB, and a query nests two levels.
`json.loads`' own RecursionError and ValueError are still caught, as a last line of defence.
JSON has no NaN or Infinity, though `json.loads` reads them: a line holding one is refused
as not JSON (field `json`), so no field ever sees a non-finite number.

The engine reads ahead of its searches, so that the lines waiting can be batched, but no
further than MAX_QUEUED_LINES lines (at most MAX_QUEUED_LINES x MAX_LINE_BYTES = 4 MiB):
while the queue is full the reader waits, the pipe fills and the client's writes block, so
a client that sends faster than the engine answers loses nothing and costs no memory.
"""

from __future__ import annotations

import itertools
import json
import queue
import re
import threading
from dataclasses import dataclass

from catena_zero.play.gtp_protocol import shown

MAX_LINE_BYTES = 65536  # longer lines are refused (not counting the newline)
PIECE = MAX_LINE_BYTES + 2  # what the reader takes at once: the longest line and CR LF
MAX_QUEUED_LINES = 64  # lines read ahead of the engine; four batches of the default 16
MAX_NESTING = 16  # a query nests two levels; deeper JSON is refused unparsed
MAX_NUMBER_DIGITS = 32  # komi, visits and turn numbers need a few; int() refuses > 4300
MAX_MESSAGE_CHARS = 400  # an error message is cut here (as GTP's `?` messages are)

# A JSON string token, whose inside is not structure: runs of plain characters and escapes
# (one way to match, so no backtracking), up to the closing quote or, unterminated, the end
# of the line. The closing quote is optional so that a match never fails: a failed match
# at every quote of `x"\"\"\"...` would rescan the rest of the line each time (quadratic).
STRING_PATTERN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
BRACKET_PATTERN = re.compile(r"[\[\]{}]")
DIGITS_PATTERN = re.compile(r"[0-9]+")
LEADING_ID_PATTERN = re.compile(r'\s*\{\s*"id"\s*:\s*("(?:[^"\\]|\\.)*")')


class QueryError(ValueError):
    """A line refused: `field` names what was wrong, `query_id` the query (None unknown).
    (Here rather than in analysis_protocol, which re-exports it, because the line checks
    raise it too.)"""

    def __init__(self, message: str, field: str | None, query_id: str | None = None) -> None:
        # Whatever a library error put in the message, an error line stays short.
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS] + "..."
        super().__init__(message)
        self.field = field
        self.query_id = query_id

    def to_json(self) -> dict:
        return {"id": self.query_id, "error": str(self), "field": self.field}


@dataclass(frozen=True)
class OverlongLine:
    """A line longer than MAX_LINE_BYTES: its first PIECE bytes (or characters), kept to
    recover its id, and its length in bytes without the line break; the rest was read
    and dropped."""

    head: bytes | str
    length: int = 0


def read_lines(stream, put) -> None:
    """Call `put(line)` for every non-blank line of `stream` (bytes or str, the newline
    kept) until the end of input; a line over MAX_LINE_BYTES is put as an OverlongLine.

    Lines are read in pieces of at most PIECE (the longest line with its CR LF), so memory
    stays bounded however long a line is. (On a text stream the pieces count
    characters; `load_line` then checks the bytes.)"""
    while True:
        piece = stream.readline(PIECE)
        if not piece:
            return
        newline, crlf = (b"\n", b"\r\n") if isinstance(piece, bytes) else ("\n", "\r\n")
        if len(piece) == PIECE and not piece.endswith(newline):
            length, rest = _size(piece), piece
            while rest and not rest.endswith(newline):
                rest = stream.readline(PIECE)
                length += _size(rest)
            line_break = 2 if rest.endswith(crlf) else 1 if rest else 0  # EOF: none
            put(OverlongLine(piece, length - line_break))
        elif piece.strip():
            put(piece)


def _size(piece: bytes | str) -> int:
    """Bytes of a piece (a text stream's characters counted as UTF-8)."""
    return len(piece) if isinstance(piece, bytes) else len(
        piece.encode("utf-8", "surrogatepass"))


END = None  # what a LineQueue gives at the end of input


class LineQueue:
    """The non-blank lines of `stream`, read on a thread (read_lines) at most `size` ahead
    of `get`: while the queue is full the reader waits (nothing is dropped). `ended` is set
    as soon as the reader meets the end of input, before the lines still queued are taken;
    `get` gives END after the last line."""

    def __init__(self, stream, size: int = MAX_QUEUED_LINES) -> None:
        self._lines: queue.Queue = queue.Queue(maxsize=size)
        self.ended = threading.Event()
        self._reader = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._reader.start()

    def _read(self, stream) -> None:
        try:
            read_lines(stream, self._lines.put)
        finally:
            self.ended.set()
            self._lines.put(END)

    def get(self, timeout: float | None = None):
        """The next line or END; waits up to `timeout` seconds (None: for ever, 0: not
        at all), then raises queue.Empty."""
        if timeout == 0:
            return self._lines.get_nowait()
        return self._lines.get(timeout=timeout)


def load_line(line: str | bytes | OverlongLine):
    """The JSON value of one line, after the checks of the module docstring; QueryError
    naming `line` (length, encoding, nesting, digits) or `json` (not JSON) otherwise."""
    if isinstance(line, OverlongLine):
        raise QueryError(f"line is {line.length} bytes, over the limit of {MAX_LINE_BYTES} "
                         f"bytes", "line", leading_id(_as_text(line.head)))
    if isinstance(line, bytes):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise QueryError(f"line is not valid UTF-8: {error.reason} at byte "
                             f"{error.start}", "line", leading_id(_as_text(line))) from None
    text = _as_text(line)
    try:
        size = len(text.rstrip("\r\n").encode("utf-8"))
    except UnicodeEncodeError:  # lone surrogates: a text stream's undecodable bytes
        raise QueryError("line is not valid UTF-8", "line", leading_id(text)) from None
    if size > MAX_LINE_BYTES:
        raise QueryError(f"line is {size} bytes, over the limit of {MAX_LINE_BYTES} bytes",
                         "line", leading_id(text))
    depth, digits = structure(text)
    if depth > MAX_NESTING:
        raise QueryError(f"line nests deeper than {MAX_NESTING} levels of arrays and "
                         f"objects", "line", leading_id(text))
    if digits > MAX_NUMBER_DIGITS:
        raise QueryError(f"line holds a number of more than {MAX_NUMBER_DIGITS} digits",
                         "line", leading_id(text))
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except NonFiniteNumber as error:
        raise QueryError(f"{error} is not JSON (JSON numbers are finite); send a number",
                         "json", leading_id(text)) from None
    except json.JSONDecodeError as error:
        raise QueryError(f"bad JSON: {error.msg} at column {error.colno}", "json",
                         leading_id(text)) from None
    except (RecursionError, ValueError):  # the checks above should have refused the line
        raise QueryError("line is not JSON this engine can read (too deep or a number too "
                         "long)", "line", leading_id(text)) from None


class NonFiniteNumber(ValueError):
    """NaN, Infinity or -Infinity in a line: `json.loads` reads them, JSON has none."""


def _refuse_constant(name: str):
    raise NonFiniteNumber(name)


def _as_text(line: str | bytes) -> str:
    """`line` as str; bytes that are not UTF-8 become lone surrogates, which `load_line`
    refuses (and `leading_id` never returns)."""
    return line.decode("utf-8", "surrogateescape") if isinstance(line, bytes) else line


def structure(text: str) -> tuple[int, int]:
    """(deepest [ / { nesting, longest run of digits) of JSON text, strings left out.

    Cheap and linear: regular expressions only, nothing is parsed. An unterminated string
    runs to the end of the line, as the JSON parser reads it (and then refuses it)."""
    bare = STRING_PATTERN.sub('""', text)
    steps = (1 if bracket in "[{" else -1 for bracket in BRACKET_PATTERN.findall(bare))
    depth = max(itertools.accumulate(steps, initial=0))
    digits = max((len(run) for run in DIGITS_PATTERN.findall(bare)), default=0)
    return depth, digits


def leading_id(text: str) -> str | None:
    """The id of a refused line when it can be read without parsing the line: the line
    begins with `{"id": "..."`, the id is valid text and no other `"id"` appears."""
    match = LEADING_ID_PATTERN.match(text)
    if match is None or text.count('"id"') != 1:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) and value and is_text(value) else None


def is_text(value: str) -> bool:
    """Whether `value` is valid Unicode text (no lone surrogates), so it can be written out
    as UTF-8 JSON."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def echo(value) -> str:
    """A client's value as an error message may show it: its repr, cut to the 40 characters
    of catena_zero.play.gtp.ECHO_CHARS (then "...") and escaped to ASCII, so a long or
    undecodable value never makes a long or invalid error line."""
    return shown(repr(value))
