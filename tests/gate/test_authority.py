"""Authority along the lineage (issue 43, acceptance 2), through the Python API on both
backends: a write ranked lower than a held value never supersedes it (refused, or held for
review where the schema says), a write citing an observation taken from an ``llm`` one is
``llm`` however it calls itself, reads say each fact's authority, and a schema that ranks
nothing decides as it always did."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.readme import blocks, section
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.models import ProposedResult, WriteRelationshipResult
from writegate.gate.observations import ObservationResult
from writegate.gate.review import ReviewDecision
from writegate.gate.schema.comparing import diff_documents
from writegate.gate.schema.document import parse_document
from writegate.language import (
    Authority,
    NodeWritten,
    ObservationRecorded,
    payload_of,
    provenance_of,
)

REVIEWER = Actor(agent="rev-1")
MANUAL: dict[str, Any] = {"source": "desk", "extraction_method": "manual", "reliability": 0.9}
LLM: dict[str, Any] = {"source": "chat", "extraction_method": "llm", "reliability": 0.9}
API: dict[str, Any] = {"source": "crm", "extraction_method": "api", "reliability": 0.9}
SCHEMA: dict[str, Any] = {
    "name": "authority",
    "authority": {"methods": {"manual": 3, "api": 2, "parsed": 2, "llm": 1}, "hold": ["Note"]},
    "nodes": {
        "Person": {
            "merge_keys": ["name"],
            "properties": {"name": {"type": "string"}, "city": {"type": "string"}},
        },
        "Note": {
            "merge_keys": ["name"],
            "properties": {"name": {"type": "string"}, "text": {"type": "string"}},
        },
        "Organization": {"merge_keys": ["name"], "properties": {"name": {"type": "string"}}},
    },
    "relationships": {
        "WORKS_FOR": {"from": ["Person"], "to": ["Organization"], "functional": True},
        "KNOWS": {"from": ["Person"], "to": ["Person"]},
    },
}


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    """Both backends."""
    return any_db


def opened(db_path: str | Path, document: dict[str, Any]) -> Gate:
    gate = Gate.open(db_path, default_actor=Actor(agent="writer-1"))
    assert gate.publish_schema(document).status == "published"
    return gate


@pytest.fixture
def gate(db_path: str | Path) -> Iterator[Gate]:
    with opened(db_path, SCHEMA) as g:
        yield g


def city(gate: Gate, name: str, value: str, cites: list[str] | None = None, **prov: Any) -> Any:
    return gate.write_node(
        label="Person",
        merge_keys={"name": name},
        properties={"city": value},
        observations=cites,
        **prov,
    )


def held_city(gate: Gate, name: str) -> Any:
    return gate.reader().open_nodes([{"label": "Person", "merge_keys": {"name": name}}]).nodes[0]


def observed(gate: Gate, text: str, cites: list[str] | None = None, **prov: Any) -> str:
    done = gate.record_observation(text=text, observations=cites, **prov)
    assert isinstance(done, ObservationResult), done
    return done.observation_id


def test_an_llm_write_cannot_supersede_a_manual_value(gate: Gate) -> None:
    assert isinstance(city(gate, "Ada", "London", **MANUAL), WriteNodeResult)
    refused = city(gate, "Ada", "Paris", **LLM)
    assert isinstance(refused, Rejected)
    assert refused.error_code == "AUTHORITY_CONFLICT"
    assert "authority 3 (method manual)" in refused.message
    assert "authority is 1 (method llm)" in refused.message
    (conflict,) = refused.details["conflicts"]
    assert conflict["existing"]["authority"] == {"rank": 3, "by": "method manual"}
    assert conflict["incoming"]["authority"] == {"rank": 1, "by": "method llm"}
    assert held_city(gate, "Ada").properties["city"] == "London"
    # equal or higher authority supersedes as before
    assert isinstance(city(gate, "Ada", "Rome", **MANUAL), WriteNodeResult)
    assert isinstance(city(gate, "Bob", "Oslo", **LLM), WriteNodeResult)
    assert isinstance(city(gate, "Bob", "Bergen", **API), WriteNodeResult)
    assert held_city(gate, "Bob").properties["city"] == "Bergen"
    assert gate.verify().ok


def test_saying_a_value_again_at_a_lower_authority_does_not_lower_it(gate: Gate) -> None:
    assert isinstance(city(gate, "Ada", "London", **MANUAL), WriteNodeResult)
    again = gate.write_node(
        label="Person",
        merge_keys={"name": "Ada"},
        properties={"city": "London", "nick": "A"},
        **LLM,
    )
    assert isinstance(again, WriteNodeResult)
    refused = city(gate, "Ada", "Paris", **LLM)
    assert isinstance(refused, Rejected)
    assert refused.error_code == "AUTHORITY_CONFLICT"
    shown = held_city(gate, "Ada")
    assert shown.properties == {"name": "Ada", "city": "London", "nick": "A"}


def test_a_merge_keeps_the_value_of_higher_authority(gate: Gate) -> None:
    assert isinstance(city(gate, "Ada", "London", **MANUAL), WriteNodeResult)
    assert isinstance(city(gate, "Ada L", "Paris", **LLM), WriteNodeResult)  # the later one
    merged = gate.merge_nodes(
        label="Person",
        survivor_keys={"name": "Ada"},
        duplicate_keys={"name": "Ada L"},
        source="review",
        extraction_method="manual",
    )
    assert not isinstance(merged, Rejected), merged
    assert held_city(gate, "Ada").properties["city"] == "London"


def test_a_lower_write_to_a_held_label_waits_for_a_reviewer(gate: Gate) -> None:
    note: dict[str, Any] = {"label": "Note", "merge_keys": {"name": "n1"}}
    assert isinstance(
        gate.write_node(**note, properties={"text": "by hand"}, **MANUAL), WriteNodeResult
    )
    held = gate.write_node(**note, properties={"text": "guessed"}, **LLM)
    assert isinstance(held, ProposedResult), held
    assert "authority 3 (method manual)" in held.reason
    assert gate.reviews.queue().pending == 1
    decided = gate.reviews.decide(held.proposal, "approve", REVIEWER)
    assert isinstance(decided, ReviewDecision), decided
    shown = gate.reader().open_nodes([note]).nodes[0]
    assert shown.properties["text"] == "guessed"


def test_a_held_write_s_proposal_keeps_the_authority_of_its_lineage(gate: Gate) -> None:
    summary = observed(gate, "the note says b, says the chat", **LLM)
    note: dict[str, Any] = {"label": "Note", "merge_keys": {"name": "n2"}}
    assert isinstance(gate.write_node(**note, properties={"text": "a"}, **MANUAL), WriteNodeResult)
    held = gate.write_node(**note, properties={"text": "b"}, observations=[summary], **MANUAL)
    assert isinstance(held, ProposedResult), held
    (proposed,) = [e for e in gate.log.iter_events() if e.seq == held.seq]
    kept = provenance_of(proposed)
    assert kept is not None
    assert kept.authority == Authority(rank=1, by="method llm", via=summary)


def test_a_functional_relationship_of_higher_authority_is_not_ended(gate: Gate) -> None:
    def works(org: str, prov: dict[str, Any]) -> Any:
        return gate.write_relationship(
            type="WORKS_FOR",
            from_label="Person",
            from_keys={"name": "Ada"},
            to_label="Organization",
            to_keys={"name": org},
            endpoint_policy="merge_endpoints",
            **prov,
        )

    assert isinstance(works("Initech", MANUAL), WriteRelationshipResult)
    refused = works("Globex", LLM)
    assert isinstance(refused, Rejected)
    assert refused.error_code == "AUTHORITY_CONFLICT"


def test_citing_an_observation_taken_from_an_llm_one_is_llm_two_levels_down(gate: Gate) -> None:
    summary = observed(gate, "Ada moved to Paris, I think.", **LLM)
    note = observed(gate, "Ada lives in Paris (from the chat summary).", [summary], **MANUAL)
    assert isinstance(city(gate, "Ada", "London", **MANUAL), WriteNodeResult)
    refused = city(gate, "Ada", "Paris", [note], **MANUAL)  # it says manual
    assert isinstance(refused, Rejected)
    assert refused.error_code == "AUTHORITY_CONFLICT"
    (conflict,) = refused.details["conflicts"]
    assert conflict["incoming"]["authority"] == {"rank": 1, "by": "method llm", "via": note}
    # a fact of its own: written, at the lowest authority along its lineage
    assert isinstance(city(gate, "Cy", "Paris", [note], **MANUAL), WriteNodeResult)
    shown = held_city(gate, "Cy")
    assert shown.provenance.extraction_method == "manual"
    assert shown.provenance.authority == Authority(rank=1, by="method llm", via=note)
    # each level is kept in the log, as computed when it was written
    recorded = {
        p.observation: provenance_of(e)
        for e in gate.log.iter_events()
        if isinstance(p := payload_of(e), ObservationRecorded)
    }
    taken, first = recorded[note], recorded[summary]
    assert taken is not None
    assert first is not None
    assert taken.authority == Authority(rank=1, by="method llm", via=summary)
    assert first.authority == Authority(rank=1, by="method llm")
    assert taken.observations == [summary]


def test_an_observation_cited_as_lineage_must_exist(gate: Gate) -> None:
    missing = "obs_" + "0" * 32
    refused = gate.record_observation(text="a note", observations=[missing], **MANUAL)
    assert isinstance(refused, Rejected)
    assert refused.error_code == "OBSERVATION_NOT_FOUND"


def test_reads_and_graph_query_say_each_fact_s_authority(gate: Gate) -> None:
    assert isinstance(city(gate, "Ada", "London", **MANUAL), WriteNodeResult)
    knows = gate.write_relationship(
        type="KNOWS",
        from_label="Person",
        from_keys={"name": "Ada"},
        to_label="Person",
        to_keys={"name": "Grace"},
        endpoint_policy="merge_endpoints",
        **LLM,
    )
    assert isinstance(knows, WriteRelationshipResult)
    shown = gate.reader().open_nodes([{"label": "Person", "merge_keys": {"name": "Ada"}}])
    ada = next(n for n in shown.nodes if n.merge_keys == {"name": "Ada"})
    assert ada.provenance.model_dump(mode="json")["authority"] == {"rank": 3, "by": "method manual"}
    (edge,) = shown.edges
    assert edge.provenance.authority == Authority(rank=1, by="method llm")
    answer = gate.reader().graph_query("Ada Grace").model_dump(mode="json", by_alias=True)
    (triplet,) = answer["triplets"]
    assert triplet["provenance"]["authority"] == {"rank": 1, "by": "method llm"}


def test_without_an_authority_section_nothing_changes(db_path: str | Path) -> None:
    document = copy.deepcopy(SCHEMA)
    del document["authority"]
    with opened(db_path, document) as gate:
        assert isinstance(city(gate, "Ada", "London", **MANUAL), WriteNodeResult)
        assert isinstance(city(gate, "Ada", "Paris", **LLM), WriteNodeResult)
        shown = held_city(gate, "Ada")
        assert shown.properties["city"] == "Paris"
        assert "authority" not in shown.provenance.model_dump(mode="json")
        written = [e for e in gate.log.iter_events() if isinstance(payload_of(e), NodeWritten)]
        assert written
        assert all("authority" not in (e.provenance or {}) for e in written)
        superseded = payload_of(written[-1])
        assert isinstance(superseded, NodeWritten)
        assert superseded.superseded
        assert "authority" not in superseded.stored()["superseded"][0]


def test_the_section_reads_flat_and_a_change_of_ranks_is_named_by_a_diff() -> None:
    flat = copy.deepcopy(SCHEMA)
    flat["authority"] = {"manual": 3, "api": 2, "parsed": 2, "llm": 1}
    before, after = parse_document(SCHEMA), parse_document(flat)
    assert after.authority is not None
    assert after.authority.methods == {"manual": 3, "api": 2, "parsed": 2, "llm": 1}
    (change,) = diff_documents(before, after)
    assert change.kind == "setting_changed"
    assert "authority" in change.model_dump_json()
    unranked = copy.deepcopy(SCHEMA)
    del unranked["authority"]
    assert "authority" not in parse_document(unranked).model_dump(mode="json")


def test_an_agent_ranked_low_lowers_what_it_writes_and_what_it_observed(
    db_path: str | Path,
) -> None:
    document = copy.deepcopy(SCHEMA)
    document["authority"]["agents"] = {"chat-agent": 1}
    chat = Actor(agent="chat-agent")
    with opened(db_path, document) as gate:
        assert isinstance(city(gate, "Ada", "London", **MANUAL), WriteNodeResult)
        refused = gate.write_node(
            label="Person",
            merge_keys={"name": "Ada"},
            properties={"city": "Paris"},
            actor=chat,
            **MANUAL,
        )
        assert isinstance(refused, Rejected)
        assert refused.error_code == "AUTHORITY_CONFLICT"
        assert "1 (agent chat-agent)" in refused.message
        heard = gate.record_observation(text="Ada is in Paris", actor=chat, **MANUAL)
        assert isinstance(heard, ObservationResult)
        assert isinstance(
            city(gate, "Cy", "Paris", [heard.observation_id], **MANUAL), WriteNodeResult
        )
        assert held_city(gate, "Cy").provenance.authority == Authority(
            rank=1, by="agent chat-agent", via=heard.observation_id
        )


def test_the_guides_section_is_a_schema_that_ranks_as_it_says(db_path: str | Path) -> None:
    [text] = blocks(section("### Authority along the lineage"), "yaml")
    document = {**copy.deepcopy(SCHEMA), **yaml.safe_load(text)}
    with opened(db_path, document) as gate:
        hr = {**MANUAL, "source": "hr.csv"}
        assert isinstance(city(gate, "Ada", "London", **hr), WriteNodeResult)
        refused = city(gate, "Ada", "Paris", **API)
        assert isinstance(refused, Rejected)
        assert refused.error_code == "AUTHORITY_CONFLICT"
        note: dict[str, Any] = {"label": "Note", "merge_keys": {"name": "n1"}}
        assert isinstance(gate.write_node(**note, properties={"text": "a"}, **hr), WriteNodeResult)
        held = gate.write_node(**note, properties={"text": "b"}, **LLM)
        assert isinstance(held, ProposedResult), held
