"""Resolution switched on (or re-keyed) for a label that already has nodes, on both backends:
the publish indexes the nodes already written, in events of their own, so the next write
meets them and a replay rebuilds the same index; a personal label's keys are sealed with
each node's subject, so forgetting the person leaves none of them."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import AGENT, FIXTURES
from tests.personal import raw_bytes
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.forgetting import ForgetResult
from writegate.language import NodesIndexed, payload_of

CLAIM: dict[str, Any] = {"source": "hr.csv", "extraction_method": "parsed"}
PLAIN: dict[str, Any] = {
    "nodes": {
        "Person": {
            "merge_keys": ["id"],
            "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
        },
    },
}


def resolving(name: str = "name", **more: Any) -> dict[str, Any]:
    doc = copy.deepcopy(PLAIN)
    doc["nodes"]["Person"]["resolution"] = {"policy": "propose", "name": name, **more}
    return doc


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=AGENT) as g:
        assert g.publish_schema(PLAIN).status == "published"
        yield g


def person(gate: Gate, pid: str, name: str, **extra: Any) -> WriteNodeResult | Rejected:
    out = gate.write_node(
        label="Person", merge_keys={"id": pid}, properties={"name": name}, **CLAIM, **extra
    )
    assert isinstance(out, WriteNodeResult | Rejected)
    return out


def indexed_since(gate: Gate, seq: int) -> list[NodesIndexed]:
    events = gate.log.read(after_seq=seq, limit=10_000).events
    return [p for e in events if isinstance(p := payload_of(e), NodesIndexed)]


def test_nodes_written_before_resolution_are_met_by_the_next_write(gate: Gate) -> None:
    assert isinstance(person(gate, "p1", "Grace Hopper"), WriteNodeResult)
    assert gate.publish_schema(resolving()).status == "published"
    out = person(gate, "p2", "Grace Hoper")
    assert isinstance(out, Rejected), out  # before the fix: written, a silent duplicate
    assert out.error_code == "POSSIBLE_DUPLICATE"
    [candidate] = out.details["candidates"]
    assert candidate["merge_keys"] == {"id": "p1"}
    report = gate.verify()  # a replay indexes them the same way
    assert report.ok, report.checks


def test_the_index_is_built_in_events_of_their_own_in_batches(gate: Gate) -> None:
    for n in range(1203):
        assert isinstance(person(gate, f"p{n}", f"Person Number{n}"), WriteNodeResult)
    head = gate.log.head()[0]
    published = gate.publish_schema(resolving())
    assert (published.status, getattr(published, "indexed", None)) == ("published", 1203)
    batches = indexed_since(gate, head)
    assert [len(b.nodes) for b in batches] == [500, 500, 203]
    assert {b.label for b in batches} == {"Person"}
    named = {entry.node.keys["id"] for b in batches for entry in b.nodes}
    assert named == {f"p{n}" for n in range(1203)}
    assert all(entry.resolution_keys for b in batches for entry in b.nodes)
    versions = {e.streams.get("Person:p7") for e in gate.log.read(after_seq=head).events}
    assert versions == {None}  # indexing is no write to the node: its version stays


def test_publishing_the_same_keying_again_indexes_nothing(gate: Gate) -> None:
    person(gate, "p1", "Grace Hopper")
    assert gate.publish_schema(resolving()).status == "published"
    head = gate.log.head()[0]
    stricter = resolving(propose_threshold=0.9)  # a threshold changes no key
    assert gate.publish_schema(stricter).status == "published"
    assert indexed_since(gate, head) == []


def test_a_new_name_property_re_keys_the_nodes(gate: Gate) -> None:
    schema = resolving(name="alias")
    schema["nodes"]["Person"]["properties"]["alias"] = {"type": "string"}
    assert gate.publish_schema(schema).status == "published"
    person(gate, "p1", "Grace Hopper", resolution="new")
    assert gate.publish_schema(resolving()).status == "published"  # now by "name"
    out = person(gate, "p2", "Grace Hoper")
    assert isinstance(out, Rejected), out
    assert out.error_code == "POSSIBLE_DUPLICATE"
    assert gate.verify().ok


def test_deleted_nodes_are_not_indexed(gate: Gate) -> None:
    person(gate, "p1", "Grace Hopper")
    assert gate.delete_node(label="Person", merge_keys={"id": "p1"}, **CLAIM).status == "deleted"
    head = gate.log.head()[0]
    assert gate.publish_schema(resolving()).status == "published"
    assert indexed_since(gate, head) == []
    assert isinstance(person(gate, "p2", "Grace Hoper"), WriteNodeResult)


def test_a_personal_label_seals_the_keys_and_forgets_them(
    any_db: str | Path, request: pytest.FixtureRequest
) -> None:
    sealed = yaml.safe_load((FIXTURES / "personal_schema.yaml").read_text())
    plain = copy.deepcopy(sealed)
    del plain["nodes"]["Person"]["resolution"]
    marker = f"Mark{os.urandom(4).hex()}"
    with Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(plain).status == "published"
        name = f"Grace {marker} Hopper"
        written = gate.write_node(label="Person", merge_keys={"name": name}, **CLAIM)
        assert isinstance(written, WriteNodeResult), written
        head = gate.log.head()[0]
        assert gate.publish_schema(sealed).status == "published"
        events = gate.log.read(after_seq=head, limit=100, sealed=True).events
        stored = "".join(str(e.payload) for e in events if e.type == NodesIndexed.event_type)
        assert "$sealed" in stored
        assert marker.lower() not in stored.lower()
        again = {"name": f"Grace {marker} Hoper"}
        out = gate.write_node(label="Person", merge_keys=again, **CLAIM)
        assert isinstance(out, Rejected), out
        assert out.error_code == "POSSIBLE_DUPLICATE"
        assert marker.lower().encode() in raw_bytes(gate, request).lower()  # can fail
        done = gate.forget("Person", {"name": name}, reason="asked by the person")
        assert isinstance(done, ForgetResult), done
        assert marker.lower().encode() not in raw_bytes(gate, request).lower()
        report = gate.verify()
        assert report.ok, report.checks
