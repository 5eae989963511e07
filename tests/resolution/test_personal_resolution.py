"""Entity resolution among personal nodes, on SQLite and PostgreSQL: a personal node is
named by a pseudonym that holds no keys, yet a near duplicate of it is still found and
proposed by its name as read back in the clear (or, under ``auto``, written onto it), and
once it is forgotten it is found no more."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import AGENT, FIXTURES
from tests.personal import CLAIM, person
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult
from writegate.gate.models import Rejected
from writegate.gate.reads.reader import GraphReader

SCHEMA: dict[str, Any] = yaml.safe_load((FIXTURES / "personal_schema.yaml").read_text())


def _opened(db: str | Path, policy: str) -> Gate:
    document = {**SCHEMA, "nodes": {**SCHEMA["nodes"]}}
    document["nodes"]["Person"] = {**SCHEMA["nodes"]["Person"], "resolution": {"policy": policy}}
    gate = Gate.open(db, default_actor=AGENT)
    assert gate.publish_schema(document).status == "published"
    return gate


@pytest.fixture
def people(any_db: str | Path) -> Iterator[Gate]:
    with _opened(any_db, "propose") as gate:
        yield gate


def test_a_near_duplicate_of_a_personal_node_is_proposed_by_its_clear_name(people: Gate) -> None:
    assert person(people, "Ada Lovelace", role="analyst").status == "written"
    refused = person(people, "Ada Lovelase")
    assert isinstance(refused, Rejected), refused
    assert refused.error_code == "POSSIBLE_DUPLICATE"
    candidates = refused.details["candidates"]
    assert [(c["label"], c["merge_keys"]) for c in candidates] == [
        ("Person", {"name": "Ada Lovelace"})
    ]
    assert "Ada Lovelace" in refused.message
    assert "~" not in refused.message  # no pseudonym: the agent is told whom it means


def test_a_forgotten_person_is_no_longer_found_as_a_duplicate(people: Gate) -> None:
    assert person(people, "Ada Lovelace").status == "written"
    forgotten = people.forget("Person", {"name": "Ada Lovelace"}, reason="asked")
    assert isinstance(forgotten, ForgetResult), forgotten
    assert person(people, "Ada Lovelase").status == "written"


def test_under_auto_a_write_of_the_same_person_lands_on_the_personal_node(
    any_db: str | Path,
) -> None:
    with _opened(any_db, "auto") as gate:
        assert person(gate, "Ada Lovelace", role="analyst").status == "written"
        again = gate.write_node(label="Person", merge_keys={"name": "Lovelace, Ada"},
                                properties={"email": "ada@mail"}, **CLAIM)  # fmt: skip
        assert again.status == "written", again
        ada: list[Mapping[str, Any]] = [{"label": "Person", "merge_keys": {"name": "Ada Lovelace"}}]
        found = GraphReader(gate.log, gate.state).open_nodes(ada, gate.current_schema())
        assert [n.merge_keys for n in found.nodes] == [{"name": "Ada Lovelace"}]
        assert found.nodes[0].properties == {
            "name": "Ada Lovelace", "role": "analyst", "email": "ada@mail"
        }  # fmt: skip
        with gate.log.snapshot() as conn:
            assert gate.state.counts(conn).labels == {"Person": 1}  # one person, not two
