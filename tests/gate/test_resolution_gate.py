"""Entity resolution in the write path (issue 12), on both backends: a write that would
create a probable duplicate is proposed or resolved as its label says, by index probes,
explainably, and a replay rebuilds the index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.readme import blocks, section
from writegate.eventlog import Actor
from writegate.gate import BatchResult, Gate, Rejected, WriteNodeResult, WriteRelationshipResult
from writegate.gate.audit.duplicates import audit_duplicates
from writegate.gate.schema import parse_document
from writegate.language import NodeWritten, RelationshipWritten, payload_of
from writegate.projections.state import StateProjection

SCHEMA: dict[str, Any] = {
    "nodes": {
        "Person": {
            "merge_keys": ["name"],
            "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
            "resolution": {"policy": "propose", "identity": ["email"]},
        },
        "Organization": {
            "merge_keys": ["name"],
            "resolution": {"policy": "auto", "kind": "organisation"},
        },
        "Thing": {"merge_keys": ["name"]},  # no resolution: seed 000's behaviour
    },
    "relationships": {"WORKS_FOR": {"from": ["Person"], "to": ["Organization"]}},
}


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Both backends."""
    return any_db


@pytest.fixture
def gate(db_path: str | Path) -> Iterator[Gate]:
    with Gate.open(db_path, default_actor=Actor(agent="a")) as g:
        assert g.publish_schema(SCHEMA).status == "published"
        yield g


def write(gate: Gate, label: str, name: str, **extra: Any) -> object:
    return gate.write_node(
        label=label, merge_keys={"name": name}, source="s", extraction_method="api", **extra
    )


def labelled(gate: Gate, label: str) -> list[str]:
    rows = StateProjection().nodes_labelled(gate.log.connection(), label)
    return [row.keys["name"] for row in rows]


def test_a_label_without_resolution_is_unchanged(gate: Gate) -> None:
    for name in ("Widget", "widget"):
        assert isinstance(write(gate, "Thing", name), WriteNodeResult)
    assert labelled(gate, "Thing") == ["Widget", "widget"]


def test_propose_refuses_a_probable_duplicate_and_lists_it(gate: Gate) -> None:
    assert isinstance(write(gate, "Person", "Alan Turing"), WriteNodeResult)
    head = gate.log.head()
    out = write(gate, "Person", "alan  turing")
    assert isinstance(out, Rejected)
    assert out.error_code == "POSSIBLE_DUPLICATE"
    [candidate] = out.details["candidates"]
    assert candidate["merge_keys"] == {"name": "Alan Turing"}
    assert candidate["score"] == 1.0
    assert candidate["reasons"] == ["equal once normalized: 'alan turing'"]
    assert gate.log.head() == head  # nothing appended
    assert isinstance(write(gate, "Person", "alan  turing", resolution="new"), WriteNodeResult)
    assert labelled(gate, "Person") == ["Alan Turing", "alan  turing"]


def test_initials_are_proposed_never_auto_resolved(gate: Gate) -> None:
    write(gate, "Person", "Alan Turing")
    out = write(gate, "Person", "A. Turing")
    assert isinstance(out, Rejected)
    assert out.details["candidates"][0]["verdict"] == "possible"


def test_an_equal_identity_property_is_a_match(gate: Gate) -> None:
    write(gate, "Person", "Grace Hopper", properties={"email": "grace@navy.mil"})
    out = write(gate, "Person", "Admiral Hopper", properties={"email": "Grace@Navy.mil"})
    assert isinstance(out, Rejected)
    [candidate] = out.details["candidates"]
    assert candidate["reasons"][0].startswith("the same email")


def test_auto_lands_on_the_existing_node_and_says_so(gate: Gate) -> None:
    first = write(gate, "Organization", "Acme Corp")
    assert isinstance(first, WriteNodeResult)
    out = write(gate, "Organization", "Acme Corporation", properties={"city": "Springfield"})
    assert isinstance(out, WriteNodeResult)
    assert out.merge_keys == {"name": "Acme Corp"}
    assert out.resolved_from == 'Organization{"name":"Acme Corporation"}'
    assert (out.created, out.version) == (False, 2)
    assert labelled(gate, "Organization") == ["Acme Corp"]
    event = gate.log.read(after_seq=out.seq - 1, limit=1).events[0]
    written = payload_of(event)
    assert isinstance(written, NodeWritten)
    assert written.resolved_from == out.resolved_from
    # a different organisation with a shared word is not resolved
    assert isinstance(write(gate, "Organization", "Acme Bank"), WriteNodeResult)
    assert labelled(gate, "Organization") == ["Acme Bank", "Acme Corp"]
    assert gate.verify().ok  # the index, rebuilt from the log's keys, equals the live one
    [resolution] = audit_duplicates(gate.log).entries
    assert (resolution.written_as, resolution.landed_on) == (
        'Organization{"name":"Acme Corporation"}',
        'Organization{"name":"Acme Corp"}',
    )


def test_a_deleted_node_is_no_candidate(gate: Gate) -> None:
    write(gate, "Person", "Alan Turing")
    deleted = gate.delete_node(
        label="Person", merge_keys={"name": "Alan Turing"}, source="s", extraction_method="api"
    )
    assert not isinstance(deleted, Rejected)
    assert isinstance(write(gate, "Person", "alan turing"), WriteNodeResult)
    assert gate.verify().ok


def test_the_readme_example_is_a_schema() -> None:
    [text] = blocks(section("### Duplicate entities"), "yaml")
    document = parse_document(yaml.safe_load(text))
    person = document.nodes["Person"].resolution
    organization = document.nodes["Organization"].resolution
    assert person is not None
    assert organization is not None
    assert (person.policy, person.identity) == ("propose", ["email"])
    assert (organization.policy, organization.kind) == ("auto", "organisation")
    assert document.identity_groups == {"people": ["Person", "Contact"]}


def test_a_batch_counts_the_items_it_resolved(gate: Gate) -> None:
    write(gate, "Organization", "Acme Corp")
    items = [
        {"op": "write_node", "label": "Organization", "merge_keys": {"name": name},
         "source": "s", "extraction_method": "api"}
        for name in ("Acme Corporation", "Globex", "Acme Corp.")
    ]  # fmt: skip
    out = gate.write_batch(items=items)
    assert isinstance(out, BatchResult)
    assert out.resolved == 2  # seed 004's mergedCount
    assert labelled(gate, "Organization") == ["Acme Corp", "Globex"]


def works_for(gate: Gate, person: str, organization: str) -> object:
    return gate.write_relationship(
        type="WORKS_FOR",
        from_label="Person",
        from_keys={"name": person},
        to_label="Organization",
        to_keys={"name": organization},
        endpoint_policy="merge_endpoints",
        source="s",
        extraction_method="api",
    )


def test_a_stub_a_relationship_would_create_is_proposed_as_a_duplicate(gate: Gate) -> None:
    write(gate, "Person", "Alan Turing")
    head = gate.log.head()
    out = works_for(gate, "alan  turing", "Bletchley Park")
    assert isinstance(out, Rejected)
    assert out.error_code == "POSSIBLE_DUPLICATE"
    assert out.details["end"] == "from"
    assert out.details["candidates"][0]["merge_keys"] == {"name": "Alan Turing"}
    assert "from node" in out.message
    assert gate.log.head() == head  # nothing appended: no stub, no relationship
    assert labelled(gate, "Person") == ["Alan Turing"]
    assert labelled(gate, "Organization") == []


def test_a_stub_under_auto_lands_the_relationship_on_the_existing_node(gate: Gate) -> None:
    write(gate, "Organization", "Acme Corp")
    out = works_for(gate, "Alan Turing", "Acme Corporation")
    assert isinstance(out, WriteRelationshipResult), out
    assert out.to_node.merge_keys == {"name": "Acme Corp"}
    assert out.resolved_from == {"to": 'Organization{"name":"Acme Corporation"}'}
    assert [s.merge_keys for s in out.stubs_created] == [{"name": "Alan Turing"}]
    event = gate.log.read(after_seq=out.seq - 1, limit=1).events[0]
    written = payload_of(event)
    assert isinstance(written, RelationshipWritten)
    assert written.resolved_from == out.resolved_from
    assert labelled(gate, "Organization") == ["Acme Corp"]
    assert gate.verify().ok


def test_a_stub_is_indexed_so_a_later_duplicate_meets_it(gate: Gate) -> None:
    assert isinstance(works_for(gate, "Alan Turing", "Acme Corp"), WriteRelationshipResult)
    out = write(gate, "Person", "alan turing")
    assert isinstance(out, Rejected)
    assert out.details["candidates"][0]["merge_keys"] == {"name": "Alan Turing"}
    assert gate.verify().ok  # the stub's keys are in the log: a replay indexes them too


def test_filling_a_stub_is_checked_like_creating_it(gate: Gate) -> None:
    assert isinstance(works_for(gate, "Alan Turing", "Acme Corp"), WriteRelationshipResult)
    assert isinstance(write(gate, "Person", "alan turing", resolution="new"), WriteNodeResult)
    out = write(gate, "Person", "Alan Turing", properties={"email": "alan@npl.uk"})
    assert isinstance(out, Rejected)
    assert out.error_code == "POSSIBLE_DUPLICATE"
    assert out.details["candidates"][0]["merge_keys"] == {"name": "alan turing"}
    filled = write(gate, "Person", "Alan Turing", resolution="new")
    assert isinstance(filled, WriteNodeResult)
    assert (filled.created, filled.merge_keys) == (False, {"name": "Alan Turing"})


def test_an_auto_label_never_lands_a_stub_being_filled_elsewhere(gate: Gate) -> None:
    """The stub already has relationships: landing its filling write on another node would
    leave it behind, so a probable duplicate is proposed (a reviewer merges the two)."""
    assert isinstance(works_for(gate, "Alan Turing", "Acme Corp"), WriteRelationshipResult)
    assert isinstance(write(gate, "Organization", "ACME Corp.", resolution="new"), WriteNodeResult)
    out = write(gate, "Organization", "Acme Corp", properties={"city": "Springfield"})
    assert isinstance(out, Rejected)
    assert out.details["candidates"][0]["merge_keys"] == {"name": "ACME Corp."}


def test_a_schema_may_declare_more_stop_suffixes(db_path: str | Path) -> None:
    document = {
        "nodes": {
            "Organization": {
                "merge_keys": ["name"],
                "resolution": {"policy": "auto", "kind": "organisation",
                               "stop_suffixes": ["Holding", "Gruppe"]},
            }
        }
    }  # fmt: skip
    with Gate.open(db_path, default_actor=Actor(agent="a")) as g:
        assert g.publish_schema(document).status == "published"
        assert isinstance(write(g, "Organization", "Bluestone Gruppe"), WriteNodeResult)
        out = write(g, "Organization", "Bluestone")
        assert isinstance(out, WriteNodeResult)
        assert out.resolved_from == 'Organization{"name":"Bluestone"}'
        assert labelled(g, "Organization") == ["Bluestone Gruppe"]


def test_a_stop_suffix_must_be_one_word() -> None:
    with pytest.raises(ValueError, match="one word"):
        parse_document(
            {"nodes": {"P": {"merge_keys": ["name"], "resolution": {"stop_suffixes": ["a b"]}}}}
        )
