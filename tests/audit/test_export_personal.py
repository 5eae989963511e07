"""``export subject`` of a personal node, on SQLite and PostgreSQL: named by a pseudonym in
the log, it is exported under the keys it was asked by; once forgotten, nothing is held and
the refusal says so in one line without echoing a pseudonym."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.conftest import AGENT, FIXTURES
from tests.personal import person
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult


@pytest.fixture
def people(any_db: str | Path) -> str | Path:
    with Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(FIXTURES / "personal_schema.yaml").status == "published"
        assert person(gate, "Ada", email="ada@mail").status == "written"
    return any_db


def test_a_personal_node_is_exported_under_its_clear_keys(people: str | Path) -> None:
    held = json.loads(writegate(people, "export", "subject", "Person:name=Ada").stdout)
    assert (held["label"], held["keys"]) == ("Person", {"name": "Ada"})
    assert held["current"]["properties"]["email"] == "ada@mail"


def test_a_forgotten_person_is_not_held_and_is_told_in_one_line(people: str | Path) -> None:
    with Gate.open(people, create=False, default_actor=AGENT) as gate:
        assert isinstance(gate.forget("Person", {"name": "Ada"}, reason="asked"), ForgetResult)
    refused = writegate(people, "export", "subject", "Person:name=Ada", code=1)
    assert refused.stderr == (
        "error: NODE_NOT_FOUND: no Person with those keys is held (a personal label: never "
        "written, or forgotten)\n"
    )
