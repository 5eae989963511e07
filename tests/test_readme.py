"""The README is part of the interface: its error table and quick start must stay true."""

from __future__ import annotations

import re

from tests.readme import README
from writegate.gate import ErrorCode


def test_every_error_code_is_in_the_readme_table() -> None:
    rows = [line.split("|")[1] for line in README.splitlines() if line.startswith("| `")]
    documented = {code for row in rows for code in re.findall(r"`([A-Z_]+)`", row)}
    assert {code.value for code in ErrorCode} <= documented


def test_quick_start_has_exactly_two_commands() -> None:
    quick = README.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in quick.strip().splitlines()]
    assert commands == ["make run", "make test"]
