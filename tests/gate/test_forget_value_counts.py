"""A forgotten person's values counted as evidence for entity resolution (keyed by the value
itself) leave ``state_value_counts``, on SQLite and PostgreSQL; those other people share
stay, counted once less."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult

SCHEMA: dict[str, Any] = {
    "nodes": {
        "Person": {
            "personal": True,
            "merge_keys": ["name"],
            "properties": {"name": {"type": "string"}, "city": {"type": "string"}},
            "resolution": {"policy": "propose", "evidence": {"city": {"compare": "similar"}}},
        }
    }
}


@pytest.fixture
def people(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        yield gate


def _counts(gate: Gate) -> dict[str, int]:
    with gate.log.snapshot() as conn:
        rows = conn.execute("SELECT key, count FROM state_value_counts").fetchall()
    return {str(key): int(count) for key, count in rows}


def test_a_forgotten_persons_counted_values_leave_the_counts(people: Gate) -> None:
    marker = f"mark{os.urandom(6).hex()}"
    for name, city in ((marker, f"{marker}ville"), ("Ada Lovelace", "London")):
        written = people.write_node(
            label="Person",
            merge_keys={"name": name},
            properties={"city": city},
            source="test",
            extraction_method="manual",
            resolution="new",
        )
        assert written.status == "written", written
    before = _counts(people)
    assert any(marker in key for key in before)  # the test can fail
    done = people.forget("Person", {"name": marker}, reason="asked")
    assert isinstance(done, ForgetResult)
    after = _counts(people)
    assert not any(marker in key for key in after)
    assert after["Person/ev:"] == before["Person/ev:"] - 1
    assert after["Person/ev:city=london"] == 1
    assert people.verify().ok
