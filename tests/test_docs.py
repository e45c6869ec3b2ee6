"""README.md and docs/ stay usable: relative links resolve, the README stays short and opens
with the two set-up commands.

Links are read from the Markdown text (inline links and reference definitions, outside code
blocks and code spans); a link with a `#fragment` must also name a heading of its target.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_README_LINES = 250
MAIN_JOB_COMMAND = "pip install torch==2.13.0 && pip install -e . && catena-zero train"
TEST_COMMAND = "pip install torch==2.13.0 && pip install -e '.[dev]' && python -m pytest"

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
INLINE_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.MULTILINE)
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...


def markdown_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def links(text: str) -> list[str]:
    body = prose(text)
    return INLINE_LINK.findall(body) + REFERENCE_LINK.findall(body)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {anchor(title) for title in HEADING.findall(FENCE.sub("", path.read_text()))}


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """One line per link of `path` that does not resolve to a file (and heading) inside root."""
    problems = []
    for target in links(path.read_text()):
        if EXTERNAL.match(target):
            continue
        location, _, fragment = target.partition("#")
        resolved = (path.parent / location).resolve() if location else path
        if not resolved.exists():
            problems.append(f"{target}: no such file")
        elif not resolved.is_relative_to(root):
            problems.append(f"{target}: outside the repository")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            problems.append(f"{target}: no heading #{fragment} in {resolved.name}")
    return problems


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path):
    assert broken_links(path) == []


def test_readme_is_short():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"


def test_readme_opens_with_the_two_setup_commands():
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", README.read_text(), re.MULTILINE | re.DOTALL)
    assert [block.strip() for block in blocks[:2]] == [MAIN_JOB_COMMAND, TEST_COMMAND]


def test_checker_finds_broken_links(tmp_path):
    """The checker itself: a missing file, an unknown heading and a link out of the repository
    are reported, while links in code and external links are not."""
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# A title, with punctuation!\n")
    page.write_text(
        "[ok](other.md#a-title-with-punctuation) [self](#top)\n# Top\n"
        "[missing](nowhere.md) [bad anchor](other.md#nothing) [web](https://example.org)\n"
        "`[in code](nowhere.md)`\n```\n[in a block](nowhere.md)\n```\n"
        "[up](../outside.md)\n")
    (tmp_path.parent / "outside.md").write_text("# Outside\n")
    assert broken_links(page, root=tmp_path) == [
        "nowhere.md: no such file",
        "other.md#nothing: no heading #nothing in other.md",
        "../outside.md: outside the repository",
    ]


RESULTS = ROOT / "docs" / "results"
RESULT_PAGE_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}-[a-z0-9]+(-[a-z0-9]+)*\.md$")


def test_result_pages_are_dated_and_indexed():
    index = (RESULTS / "README.md").read_text()
    pages = sorted(path.name for path in RESULTS.glob("*.md") if path.name != "README.md")
    assert pages, "docs/results holds no pages"
    assert [name for name in pages if not RESULT_PAGE_NAME.match(name)] == []
    assert [name for name in pages if f"({name})" not in index] == []


def _tracked_text_files() -> list[Path]:
    """Every file git tracks (every file under the root outside git), text files only."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.split()
        paths = [ROOT / name for name in listed]
    except (OSError, subprocess.CalledProcessError):
        paths = [path for path in ROOT.rglob("*") if ".git" not in path.parts]
    texts = []
    for path in paths:
        if path.is_file() and path.suffix in {".md", ".py", ".yaml", ".toml", ".sh", ".js",
                                               ".html", ".css", ".ipynb", ""}:
            texts.append(path)
    return texts


def test_the_project_describes_the_software_not_its_history():
    # Written in two pieces so that this file does not match itself.
    history = re.compile(r"session [0-9]+|the issue" + "'s", re.IGNORECASE)
    found = [f"{path.relative_to(ROOT)}: {match}" for path in _tracked_text_files()
             for match in history.findall(path.read_text(errors="replace"))]
    assert found == []
