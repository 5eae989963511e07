"""The README is the entrance: read in minutes, two commands to start, the system's own words."""

from __future__ import annotations

import re

from tests.readme import README, documents


def test_quick_start_has_exactly_two_commands() -> None:
    quick = README.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in quick.strip().splitlines()]
    assert commands == ["make run", "make test"]


def test_the_readme_is_under_250_lines() -> None:
    assert len(README.splitlines()) < 250


def test_the_readme_and_the_guides_speak_of_the_system_not_of_its_seeds() -> None:
    """The specification's documents are named in docs/design.md by their titles; nothing a
    reader meets says "seed 000"."""
    said = {
        str(path.name): re.findall(r"(?i)\bseeds?\b[^.\n]{0,20}", text)
        for path, text in documents().items()
    }
    assert {name: found for name, found in said.items() if found} == {}
