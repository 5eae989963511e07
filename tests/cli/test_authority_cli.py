"""Authority from the command line (issue 43, acceptance 2): ``observe --observation`` keeps
what a note was taken from, a write citing it is as trusted as the least trusted along the
way whatever ``--method`` it says, the refusal names both authorities, and ``show node``
says the authority a node was last written with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import as_json, writegate
from tests.gate.test_authority import SCHEMA
from writegate.gate import Gate


@pytest.fixture
def log(any_db: str | Path) -> str | Path:
    with Gate.open(any_db) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
    return any_db


def observe(log: str | Path, method: str, text: str, *cites: str) -> str:
    taken = [arg for cited in cites for arg in ("--observation", cited)]
    done = writegate(log, "observe", "--source", "desk", "--method", method, *taken, text)
    return done.stdout.strip()


def write_city(log: str | Path, name: str, city: str, *cites: str, code: int = 0) -> Any:
    taken = [arg for cited in cites for arg in ("--observation", cited)]
    return writegate(
        log,
        "write",
        "node",
        f"Person:name={name}",
        "-p",
        f"city={city}",
        "--source",
        "desk",
        "--method",
        "manual",
        *taken,
        code=code,
    )


def test_a_manual_write_from_an_llm_note_is_llm_and_cannot_supersede_manual(
    log: str | Path,
) -> None:
    summary = observe(log, "llm", "Ada moved to Paris, the chat said.")
    note = observe(log, "manual", "Ada lives in Paris (my note of the chat).", summary)
    write_city(log, "Ada", "London")
    refused = write_city(log, "Ada", "Paris", note, code=1)
    assert "AUTHORITY_CONFLICT" in refused.stderr
    assert "authority 3 (method manual)" in refused.stderr
    assert f"1 (method llm via {note})" in refused.stderr
    write_city(log, "Cy", "Paris", note)
    shown = as_json(log, "show", "node", "Person:name=Cy", "--format", "json")
    assert shown["authority"] == {"rank": 1, "by": "method llm", "via": note}
    table = writegate(log, "show", "node", "Person:name=Ada", env={"COLUMNS": "200"}).stdout
    assert "3 (method manual)" in table
