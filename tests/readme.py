"""The README and the guides in docs/ read as tests read them: sections, fenced blocks and
the commands in them.

Every command and configuration they show is pasted by some test
(``tests/test_guides_pasted.py`` holds the list); the tests all find them the same way, here.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
# the references generated from the code (`make docs`) are no guides: their blocks are
# signatures, and the generated parts are checked by tests/test_docs.py
GENERATED = ("cli.md", "mcp-tools.md", "errors.md")
GUIDES = [
    path
    for path in sorted((ROOT / "docs").glob("*.md"))
    if path.name not in GENERATED and path.name != "README.md"
]
FENCE = re.compile(r"^```(\S*)\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)
COG = re.compile(r"<!-- \[\[\[cog.*?\[\[\[end\]\]\] -->", flags=re.DOTALL)


def documents() -> dict[Path, str]:
    """The README and every guide, each as a reader sees it (a guide's generated parts left
    out)."""
    found = {ROOT / "README.md": README}
    for path in GUIDES:
        found[path] = COG.sub("", path.read_text(encoding="utf-8"))
    return found


def section(title: str, *, subsections: bool = False) -> str:
    """The text under the heading ``title`` (a line starting so, in the README or in exactly
    one guide) up to the next heading of its level (or of the level below too, unless
    ``subsections``); a ``#`` line inside a fenced block is no heading."""
    level = len(title.split(" ", 1)[0])
    holders = [
        f"\n{text}".split(f"\n{title}", 1)[1]
        for text in documents().values()
        if f"\n{title}" in f"\n{text}"
    ]
    assert len(holders) == 1, f"{title!r} heads {len(holders)} sections of the docs, not one"
    deepest = level if subsections else level + 1
    found, fenced = [], False
    for line in holders[0].splitlines(keepends=True)[1:]:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(rf"#{{1,{deepest}}} ", line):
            break
        found.append(line)
    return "".join(found)


def blocks(text: str, language: str) -> list[str]:
    """The fenced ``language`` blocks of ``text``, in order."""
    return [body for lang, body in FENCE.findall(text) if lang == language]


def lines(block: str) -> list[str]:
    """A shell block's command lines, trailing comments dropped."""
    found = []
    for line in block.splitlines():
        command = line.split("  #", 1)[0].strip()
        if command and not command.startswith("#"):
            found.append(command)
    return found


def commands(text: str) -> list[list[str]]:
    """The ``writegate`` command lines of a section's shell blocks, as words."""
    found = []
    for block in blocks(text, "sh"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "writegate":
                found.append(words)
    return found


@dataclass(frozen=True)
class Block:
    """One fenced block where a reader finds it: the document, the heading it sits under,
    its language and its place among that heading's blocks of that language."""

    document: str
    heading: str
    language: str
    index: int


def every_block() -> list[Block]:
    """Every fenced block of the README and the guides (a ``text`` fence is output shown,
    not something to paste, and is left out)."""
    found: list[Block] = []
    for path, text in documents().items():
        heading, seen = "", dict[tuple[str, str], int]()
        for match in re.finditer(r"^(#{1,6} [^\n]*)$|" + FENCE.pattern, text, flags=FENCE.flags):
            if match[1]:
                heading = match[1]
                continue
            language = match[2]
            if language == "text":
                continue
            index = seen.get((heading, language), 0)
            seen[heading, language] = index + 1
            found.append(Block(str(path.relative_to(ROOT)), heading, language, index))
    return found
