"""The README read as tests read it: sections, fenced blocks and the commands in them.

Every command and configuration the README shows is pasted by some test; they all find
them the same way, here.
"""

from __future__ import annotations

import re
import shlex

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str, *, subsections: bool = False) -> str:
    """The text under ``title`` up to the next heading of its level (or any, unless
    ``subsections``)."""
    text = README.split(title, 1)[1].split("\n## ", 1)[0]
    return text if subsections else text.split("\n### ", 1)[0]


def blocks(text: str, language: str) -> list[str]:
    """The fenced ``language`` blocks of ``text``, in order."""
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


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
