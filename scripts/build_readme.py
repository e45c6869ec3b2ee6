"""Assemble README.md from docs/readme/00-header.md and the numbered section files.

    python scripts/build_readme.py          # writes README.md
    python scripts/build_readme.py --check  # exit 1 if README.md is out of date

Each capability keeps its README section in `docs/readme/NN-name.md` beside the code's
owners; the number orders them. The table of contents is made from the sections' titles.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ROOT / "docs" / "readme"
HEADER = "00-header.md"


def _anchor(title: str) -> str:
    text = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return text.replace(" ", "-")


def build() -> str:
    header = (SECTIONS / HEADER).read_text().rstrip() + "\n"
    parts = []
    contents = []
    for path in sorted(SECTIONS.glob("[0-9][0-9]-*.md")):
        if path.name == HEADER:
            continue
        text = path.read_text().strip()
        match = re.match(r"#+\s+(.*)", text)
        if match:
            contents.append(f"- [{match.group(1)}](#{_anchor(match.group(1))})")
        parts.append(text)
    toc = "## Contents\n\n" + "\n".join(contents) + "\n"
    return "\n".join([header, toc, *[part + "\n" for part in parts]])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = build()
    target = ROOT / "README.md"
    if args.check:
        current = target.read_text() if target.exists() else ""
        if current != text:
            print("README.md is out of date: run python scripts/build_readme.py", file=sys.stderr)
            return 1
        return 0
    temporary = target.with_name(f"README.md.tmp-{os.getpid()}")
    temporary.write_text(text)
    os.replace(temporary, target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
