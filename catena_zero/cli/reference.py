"""The configuration reference (docs/configuration.md), written from the schemas themselves.

Every config key is a dataclass field with a one-line note beside it in the module that
reads it; this page collects them per subcommand, so the reference cannot drift from the
code (a test compares the committed page with this output)::

    python -m catena_zero.cli.reference > docs/configuration.md
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from typing import Any

from catena_zero.cli import schemas
from catena_zero.cli.common import config_dir, group_options
from catena_zero.cli.schemas import LAYOUT, SCHEMAS

_FIELD_LINE = re.compile(r"^\s+(\w+)\s*:\s*[^=#]+(?:=[^#]*)?(?:#\s*(.+))?$")
_COMMENT_LINE = re.compile(r"^\s+#\s*(.+)$")
_CONTINUED_LINE = re.compile(r"^\s+# {2,}(.+)$")  # "#   ..." under a field: its note goes on


def field_notes(cls: type) -> dict[str, str]:
    """{field name: the comment written beside it} from the dataclass's source (and bases)."""
    notes: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        above: list[str] = []  # a note written on the lines before its field
        last = None  # the field just read: "#   more" lines below it continue its note
        for line in source.splitlines():
            continued = _CONTINUED_LINE.match(line)
            if continued and last is not None and not above:
                notes[last] = f"{notes[last]} {continued.group(1).strip()}"
                continue
            comment = _COMMENT_LINE.match(line)
            if comment:
                above.append(comment.group(1).strip())
                last = None
                continue
            match = _FIELD_LINE.match(line)
            last = None
            if match and (match.group(2) or above):
                notes[match.group(1)] = (match.group(2) or " ".join(above)).strip()
                last = match.group(1) if match.group(2) else None
            above = []
    return notes


def _original(cls: type) -> type:
    """The library dataclass a schema copy was made from (same name, same fields)."""
    for module_class in _library_classes():
        if module_class.__name__ == cls.__name__:
            return module_class
    return cls


def _library_classes() -> list[type]:
    found = []
    for name in dir(schemas):
        value = getattr(schemas, name)
        if isinstance(value, type) and dataclasses.is_dataclass(value):
            found.append(value)
    return found


def _type_name(hint: Any) -> str:
    text = getattr(hint, "__name__", None) if not typing.get_args(hint) else None
    return text or str(hint).replace("typing.", "")


def _default(item: dataclasses.Field) -> str:
    if item.default is not dataclasses.MISSING:
        value = item.default
    elif item.default_factory is not dataclasses.MISSING:
        value = item.default_factory()
        if dataclasses.is_dataclass(value):
            return "(section)"
    else:
        return "(required)"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    return str(getattr(value, "value", value))


def _rows(cls: type, prefix: str, notes_of: type) -> list[str]:
    hints = typing.get_type_hints(cls)
    notes = field_notes(notes_of)
    rows, nested = [], []
    for item in dataclasses.fields(cls):
        if not item.init:
            continue
        hint = hints[item.name]
        key = f"{prefix}{item.name}"
        if dataclasses.is_dataclass(hint):
            nested.append((hint, f"{key}."))
            continue
        note = notes.get(item.name, "").replace("|", "\\|")
        rows.append(f"| `{key}` | {_type_name(hint).replace('|', 'or')} | `{_default(item)}` "
                    f"| {note} |")
    for hint, key in nested:
        rows += _rows(hint, key, _original(hint))
    return rows


def reference_text() -> str:
    """The whole reference page as Markdown."""
    lines = [
        "# Configuration reference",
        "",
        "Every subcommand composes `configs/<subcommand>.yaml` over its schema "
        "(`catena_zero/cli/schemas.py`); override any key as `key=value` "
        "(`catena-zero train mcts.num_simulations=64`), pick a group option as "
        "`group=option` (`network=b4c32`), and print the composed config with `--cfg`. "
        "`side`, `game_type` and `scoring` are short for `board.side`, `rules.game_type` and "
        "`rules.scoring`. The defaults below are the schema's; a subcommand's YAML, its group "
        "options and presets may set others (`catena-zero SUBCOMMAND --help` shows the "
        "composed defaults).",
        "",
        "This page is generated: `python -m catena_zero.cli.reference > "
        "docs/configuration.md`.",
        "",
    ]
    directory = config_dir()
    for name, schema in SCHEMAS.items():
        lines += [f"## `catena-zero {name}`", ""]
        groups = sorted(path.name for path in directory.iterdir() if path.is_dir()
                        and path.name in {item.name for item in dataclasses.fields(schema)})
        if groups:
            lines += ["Group options: " + "; ".join(
                f"`{group}`: {', '.join(group_options(group))}" for group in groups) + ".", ""]
        lines += ["| key | type | default | meaning |", "|---|---|---|---|"]
        tops, _ = LAYOUT[name]
        for top, exclude in tops:
            lines += [row for row in _rows(top, "", top)
                      if row.split("`")[1] not in exclude]
        for group, cls in LAYOUT[name][1].items():
            lines += _rows(cls, f"{group}.", cls)
        lines.append("")
    lines += ["## Presets", "",
              "`preset=NAME` (train and arena) sets a whole recipe: " + ", ".join(
                  f"`{option}`" for option in group_options("preset"))
              + " (`configs/preset/`).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(reference_text())
