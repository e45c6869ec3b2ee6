"""A strict reader of SGF text: one game tree without variations, as a list of nodes (each
a dict identifier -> value). It knows nothing of Catena; `game_record` gives the nodes their
meaning. Any defect is one `RecordError` line with the character position."""

from __future__ import annotations

import re

MAX_VALUE_CHARS = 40_000  # a property value longer than this is refused while reading
IDENTIFIER = re.compile(r"[A-Z]{1,8}")


class RecordError(ValueError):
    """A game record that cannot be read or does not replay; the message is one line."""


def read_game_tree(text: str) -> list[dict[str, str]]:
    """The nodes of the one game tree in `text` (RecordError otherwise)."""
    return _Reader(text).game_tree()


class _Reader:
    """A strict reader of one SGF game tree without variations: a list of nodes, each a
    dict identifier -> value (a property with several values is refused)."""

    def __init__(self, text: str):
        self.text = text
        self.position = 0

    def fail(self, message: str):
        raise RecordError(f"{message} (at character {self.position})")

    def skip_space(self) -> None:
        text, position = self.text, self.position
        while position < len(text) and text[position] in " \t\r\n":
            position += 1
        self.position = position

    def expect(self, char: str, what: str) -> None:
        self.skip_space()
        if self.position >= len(self.text) or self.text[self.position] != char:
            found = "the end" if self.position >= len(self.text) else \
                character_kind(self.text[self.position])
            self.fail(f"expected {what}, found {found}")
        self.position += 1

    def game_tree(self) -> list[dict[str, str]]:
        self.expect("(", "'(' opening the game tree")
        nodes = []
        while True:
            self.skip_space()
            if self.position >= len(self.text):
                self.fail("the game tree is not closed by ')'")
            char = self.text[self.position]
            if char == ";":
                self.position += 1
                nodes.append(self.node(len(nodes)))
            elif char == ")":
                self.position += 1
                break
            elif char == "(":
                self.fail("variations are not supported: a record is one line of play")
            else:
                self.fail(f"expected ';' or ')', found {character_kind(char)}")
        if not nodes:
            self.fail("the game tree has no node")
        self.skip_space()
        if self.position != len(self.text):
            self.fail("text after the game tree (one game per record)")
        return nodes

    def node(self, index: int) -> dict[str, str]:
        properties: dict[str, str] = {}
        what = "the root node" if index == 0 else f"move {index}"
        while True:
            self.skip_space()
            if self.position >= len(self.text) or self.text[self.position] in ";()":
                return properties
            match = IDENTIFIER.match(self.text, self.position)
            if match is None:
                self.fail(f"{what}: expected a property name (upper-case letters), found "
                          f"{character_kind(self.text[self.position])}")
            identifier = match.group(0)
            self.position = match.end()
            if identifier in properties:
                self.fail(f"{what}: property {identifier} appears twice")
            properties[identifier] = self.value(f"{what} {identifier}")
            self.skip_space()
            if self.position < len(self.text) and self.text[self.position] == "[":
                self.fail(f"{what} {identifier}: a property has exactly one value")

    def value(self, what: str) -> str:
        self.expect("[", f"'[' starting the value of {what}")
        text = self.text
        out = []
        position = self.position
        start = position
        while True:
            if position >= len(text):
                self.position = start
                self.fail(f"{what}: the value is not closed by ']'")
            char = text[position]
            if char == "]":
                break
            if char == "\\":
                position += 1
                if position >= len(text):
                    continue
                escaped = text[position]
                if escaped == "\r" and text[position + 1:position + 2] == "\n":
                    position += 1  # a soft line break \<CR><LF>
                elif escaped not in "\r\n":
                    out.append(escaped)
            else:
                out.append(char)
            position += 1
            if position - start > MAX_VALUE_CHARS:
                self.position = start
                self.fail(f"{what}: the value is longer than {MAX_VALUE_CHARS} characters")
        self.position = position + 1
        return "".join(out)


def character_kind(char: str) -> str:
    """What kind of character `char` is, for an error message: a refusal names the problem,
    never the content (the file may be something private that is not a record at all)."""
    if char in "();[]":
        return repr(char)  # SGF's own punctuation says where the structure broke
    if char.isdigit():
        return "a digit"
    if char.isalpha() and char.isascii():
        return "a lower-case letter" if char.islower() else "an upper-case letter"
    if char < " " or char == "\x7f":
        return "a control character"
    if not char.isascii():
        return "a non-ASCII character"
    return "a punctuation character"


def shown_value(text, brackets: bool = True) -> str:
    if text is None:
        return "nothing"
    text = str(text)
    cut = text[:40] + ("..." if len(text) > 40 else "")
    cut = cut.encode("ascii", "backslashreplace").decode("ascii")
    return f"[{cut}]" if brackets else repr(cut)
