"""A personal label's nodes through the gate, on SQLite and PostgreSQL: their keys and
personal properties sealed in the log and named by a pseudonym, read back in the clear by
their keys, and forgotten with ``Gate.forget`` so that no byte of them is left in the log's
files or in a projection rebuilt after."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import AGENT, ROOT
from tests.personal import person, raw_bytes, works_at_acme
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult
from writegate.gate.models import ProposedResult, Rejected
from writegate.gate.reads.reader import GraphReader
from writegate.gate.review import ReviewDecision
from writegate.projections.jsonl import JsonlProjector
from writegate.projections.prov import ProvProjector
from writegate.projections.runner import rebuild

SCHEMA = ROOT / "fixtures" / "personal_schema.yaml"


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


@pytest.fixture
def people(db_path: str | Path) -> Any:
    g = Gate.open(db_path, default_actor=AGENT)
    assert g.publish_schema(SCHEMA).status == "published"
    yield g
    g.close()


def test_a_personal_node_is_sealed_in_the_log_and_read_in_the_clear(people: Gate) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    written = person(people, marker, email=f"{marker}@mail", role="engineer")
    assert written.status == "written", written
    event = people.log.read(after_seq=0, limit=100, sealed=True).events[-1]
    stored = "".join(str(x) for x in (event.streams, event.payload, event.request))
    assert marker not in stored
    assert "Person~" in str(event.streams)
    assert "engineer" in stored
    node = (
        GraphReader(people.log, people.state)
        .open_nodes([{"label": "Person", "merge_keys": {"name": marker}}], people.current_schema())
        .nodes[0]
    )
    assert node.merge_keys == {"name": marker}
    assert node.properties["email"] == f"{marker}@mail"


def test_a_plain_label_keeps_its_clear_identity(people: Gate) -> None:
    assert (
        people.write_node(
            label="Company", merge_keys={"name": "Acme"}, source="test", extraction_method="manual"
        ).status
        == "written"
    )
    event = people.log.read(after_seq=0, limit=100, sealed=True).events[-1]
    assert event.streams == {'node:Company{"name":"Acme"}': 1}


def test_a_forgotten_subject_leaves_no_byte_in_the_log_or_a_rebuilt_projection(
    people: Gate, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    mail = f"{marker.lower()}mail"
    assert person(people, marker, email=mail, role="engineer").status == "written"
    assert person(people, marker, email=f"{mail}2").status == "written"
    works_at_acme(people, marker)
    refused = person(people, marker, nickname=marker)  # not declared: refused
    assert isinstance(refused, Rejected)
    assert people.rejections.count() == 1
    assert marker.encode() in raw_bytes(people, request)  # the test can fail

    dry = people.forget("Person", {"name": marker}, reason="asked", dry_run=True)
    assert isinstance(dry, ForgetResult)
    assert dry.dry_run
    assert dry.seq is None
    done = people.forget("Person", {"name": marker}, reason="asked by the person")
    assert isinstance(done, ForgetResult), done
    assert done.events == dry.events
    assert len(done.events) == 3
    assert done.counts["rejections"] == 1
    assert done.counts["state_nodes"] == 1
    assert done.seq is not None

    raw = raw_bytes(people, request)
    for needle in (marker, marker.lower(), mail):
        assert needle.encode() not in raw
    assert b"Acme" in raw
    assert b"engineer" in raw
    chain = people.log.verify()
    assert chain.ok, chain
    assert chain.erased == len(done.events)
    report = people.verify()  # the read model is what a replay makes of the log now
    assert report.ok, report.checks
    for projector in (
        JsonlProjector(tmp_path / "graph.jsonl", people.log),
        ProvProjector(tmp_path / "graph.nt", log=people.log),
    ):
        rebuild(people.log, projector)
    for path in tmp_path.iterdir():
        text = path.read_bytes()
        assert marker.encode() not in text, path
        assert mail.encode() not in text, path
    assert b"Acme" in (tmp_path / "graph.jsonl").read_bytes()


def test_forget_refuses_a_label_that_is_not_personal(people: Gate) -> None:
    refused = people.forget("Company", {"name": "Acme"}, reason="asked")
    assert isinstance(refused, Rejected)
    assert refused.error_code == "INVALID_ARGUMENT"


def test_a_held_personal_write_is_sealed_while_it_waits_and_once_approved(
    db_path: str | Path,
) -> None:
    document = yaml.safe_load(SCHEMA.read_text())
    document["nodes"]["Person"]["review_below"] = 0.5
    marker = f"MARK{os.urandom(6).hex()}"
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(document).status == "published"
        held = gate.write_node(
            label="Person",
            merge_keys={"name": marker},
            properties={"email": f"{marker}@mail"},
            source="chat",
            extraction_method="llm",
            reliability=0.5,
        )
        assert isinstance(held, ProposedResult)
        assert gate.reviews.queue().proposals[0].target.startswith("Person~")
        decided = gate.reviews.decide(held.proposal, "approve", Actor(agent="reviewer"))
        assert isinstance(decided, ReviewDecision), decided
        stored = gate.log.read(after_seq=0, limit=100, sealed=True).events
        assert [e.type for e in stored[1:]] == [
            "write.proposed",
            "proposal.decided",
            "node.written",
        ]
        assert all(marker not in str((e.streams, e.payload, e.request)) for e in stored)
        node = GraphReader(gate.log, gate.state).open_nodes(
            [{"label": "Person", "merge_keys": {"name": marker}}], gate.current_schema()
        )
        assert node.nodes[0].properties["email"] == f"{marker}@mail"
        done = gate.forget("Person", {"name": marker}, reason="asked")
        assert isinstance(done, ForgetResult)
        assert len(done.events) == 2
        assert gate.verify().ok


def test_a_sealed_observation_is_forgotten_with_the_person_its_facts_name(
    db_path: str | Path, request: pytest.FixtureRequest
) -> None:
    document = yaml.safe_load(SCHEMA.read_text())
    document["personal_observations"] = True
    marker = f"MARK{os.urandom(6).hex()}"
    said = f"{marker} said her mail is {marker}x@mail"
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(document).status == "published"
        heard = gate.record_observation(text=said, source="chat", extraction_method="manual")
        assert heard.status == "recorded", heard
        assert gate.record_observation(text="a plain remark", source="chat",
                                       extraction_method="manual").status == "recorded"  # fmt: skip
        written = gate.write_node(
            label="Person",
            merge_keys={"name": marker},
            properties={"role": "pilot"},
            source="chat",
            extraction_method="manual",
            observations=[heard.observation_id],
        )
        assert written.status == "written", written
        stored = gate.log.read(after_seq=0, limit=100, sealed=True).events
        assert all(marker not in str((e.streams, e.payload, e.request)) for e in stored)
        found = gate.observation_reader().search_observations(marker.lower(), 5)
        assert [o.text for o in found.observations] == [said]  # the read model holds it clear

        done = gate.forget("Person", {"name": marker}, reason="asked")
        assert isinstance(done, ForgetResult), done
        assert done.counts["state_observations"] == 1
        assert marker.encode() not in raw_bytes(gate, request)
        assert b"a plain remark" in raw_bytes(gate, request)
        assert gate.verify().ok


def test_a_personal_node_read_as_it_stood_shows_its_keys(people: Gate) -> None:
    assert person(people, "Ada", role="engineer").status == "written"
    moment = datetime.now(UTC)
    assert person(people, "Ada", role="admiral").status == "written"
    reader, schema = GraphReader(people.log, people.state), people.current_schema()
    ada: list[Mapping[str, Any]] = [{"label": "Person", "merge_keys": {"name": "Ada"}}]
    for past in (reader.open_nodes(ada, schema, as_of=moment),
                 reader.open_nodes(ada, schema, valid_at=moment)):  # fmt: skip
        assert past.nodes[0].merge_keys == {"name": "Ada"}
    assert reader.open_nodes(ada, schema, as_of=moment).nodes[0].properties["role"] == "engineer"
