"""Merging personal nodes is refused in one line naming the label, on SQLite and PostgreSQL:
a merge would move one subject's sealed values onto another's node, and forgetting either
would then leave the other's copy. Nothing is appended and no identity is echoed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import AGENT, FIXTURES
from writegate.gate import Gate
from writegate.gate.models import Rejected


@pytest.fixture
def people(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(FIXTURES / "personal_schema.yaml").status == "published"
        for name in ("Grace Hopper", "Grace B. Hopper"):
            written = gate.write_node(
                label="Person",
                merge_keys={"name": name},
                source="test",
                extraction_method="manual",
                resolution="new",
            )
            assert written.status == "written", written
        yield gate


def test_merging_two_personal_nodes_is_refused_in_one_line(people: Gate) -> None:
    head = people.log.head()
    refused = people.merge_nodes(
        label="Person",
        survivor_keys={"name": "Grace Hopper"},
        duplicate_keys={"name": "Grace B. Hopper"},
        reason="the same person",
        source="review",
        extraction_method="manual",
    )
    assert isinstance(refused, Rejected)
    assert refused.error_code == "INVALID_ARGUMENT"
    assert refused.message == (
        "Person is personal: its nodes are not merged (a merge would move one person's "
        "sealed values onto another's node, out of reach of forgetting the first)"
    )
    assert "\n" not in refused.message
    assert people.log.head() == head
