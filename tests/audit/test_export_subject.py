"""Everything held about one person, handed to them: a node three agents wrote, with a
superseded value, a corroboration, a cited observation, a relationship and a duplicate
merged into it, exported as one document (every value with its provenance) and as PROV-O
that rdflib parses; the CLI's JSON is the auditor's MCP tool's answer, on both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import PROV, RDF, RDFS

from tests.cli.conftest import as_json, writegate
from tests.conftest import FIXTURES
from tests.server.harness import stdio_agent
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected
from writegate.gate.audit.auditor import Auditor
from writegate.gate.audit.subject import SubjectExport
from writegate.gate.errors import GateRejection
from writegate.gate.observations import ObservationResult
from writegate.language import node_identity
from writegate.projections.prov import iri

pytestmark = pytest.mark.anyio
ANN, BOB, CY, DAN, EVE, REV = (Actor(agent=a) for a in ("ann", "bob", "cy", "dan", "eve", "rev"))
ADA = node_identity("Person", {"name": "Ada Lovelace"})
DUP = node_identity("Person", {"name": "ada lovelace"})
LETTER = "Dear Charles, I am settled in Paris and at work on the notes. Ada"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def written(result: Any) -> None:
    assert result.status in ("written", "corroborated", "merged", "recorded"), result


@pytest.fixture
def subject(any_db: str | Path) -> str:
    """Ann writes Ada from a letter she keeps; Bob moves her to London from the census
    (Paris superseded) and she works for the Engine; Cy says London again from a register
    (a corroboration, of her employer too) and writes her twin, whose email a reviewer merges into her; Dan's
    unsure guess at her role is held for review, and Eve's gossip about her (and about
    Charles alone, and Charles knowing her, in a batch) is refused."""
    with Gate.open(any_db) as gate:
        schema = yaml.safe_load((FIXTURES / "conflict_schema.yaml").read_text())
        schema["nodes"]["Person"]["review_below"] = 0.3  # Dan's guess waits for a reviewer
        schema["nodes"]["Organization"]["scope"] = "firms"  # her employer is kept apart
        assert gate.publish_schema(schema, actor=REV).status == "published"
        letter = gate.record_observation(
            text=LETTER, source="letters", extraction_method="manual", session="s-1", actor=ANN
        )
        assert isinstance(letter, ObservationResult), letter
        ada: dict[str, Any] = {"label": "Person", "merge_keys": {"name": "Ada Lovelace"}}
        written(
            gate.write_node(
                **ada,
                properties={"city": "Paris", "role": "analyst"},
                source="letters",
                extraction_method="llm",
                reliability=0.7,
                observations=[letter.observation_id],
                actor=ANN,
            )
        )
        written(
            gate.write_node(
                **ada, properties={"city": "London"}, source="census", extraction_method="api",
                reliability=0.9, actor=BOB,
            )
        )  # fmt: skip
        written(
            gate.write_relationship(
                type="WORKS_FOR", from_label="Person", from_keys={"name": "Ada Lovelace"},
                to_label="Organization", to_keys={"name": "Analytical Engine"},
                source="census", extraction_method="api", endpoint_policy="merge_endpoints",
                actor=BOB,
            )
        )  # fmt: skip
        written(
            gate.write_node(
                **ada, properties={"city": "London"}, source="register", extraction_method="api",
                actor=CY,
            )
        )  # fmt: skip
        works: dict[str, Any] = {
            "type": "WORKS_FOR", "from_label": "Person", "from_keys": {"name": "Ada Lovelace"},
            "to_label": "Organization", "to_keys": {"name": "Analytical Engine"},
        }  # fmt: skip
        written(
            gate.write_relationship(**works, source="register", extraction_method="api", actor=CY)
        )
        written(
            gate.write_node(
                label="Person", merge_keys={"name": "ada lovelace"},
                properties={"email": "ada@example.org"}, source="register",
                extraction_method="api", actor=CY,
            )
        )  # fmt: skip
        written(
            gate.merge_nodes(
                label="Person", survivor_keys={"name": "Ada Lovelace"},
                duplicate_keys={"name": "ada lovelace"}, source="review",
                extraction_method="manual", reason="one person", actor=REV,
            )
        )  # fmt: skip
        held = gate.write_node(
            **ada, properties={"role": "poet"}, source="rumour", extraction_method="llm",
            reliability=0.2, actor=DAN,
        )  # fmt: skip
        assert held.status == "proposed", held
        for name, email in (("Ada Lovelace", "lady@example.org"), ("Charles Babbage", "cb@x")):
            refused = gate.write_node(
                label="Person", merge_keys={"name": name}, properties={"email": email},
                source="gossip", extraction_method="guess", actor=EVE,
            )  # fmt: skip
            assert isinstance(refused, Rejected), refused
        knows = {
            "op": "write_relationship", "type": "KNOWS", "from_label": "Person",
            "from_keys": {"name": "Charles Babbage"}, "to_label": ":person",
            "to_keys": {"name": "Ada Lovelace"}, "source": "gossip", "extraction_method": "guess",
        }  # fmt: skip
        assert isinstance(gate.write_batch(items=[knows], actor=EVE), Rejected)
        assert gate.rejections.drained(10)
    return str(any_db)


def exported(db: str) -> SubjectExport:
    with Gate.open(db, create=False) as gate:
        return Auditor(gate.log).export_subject(ADA)


def test_every_value_is_exported_with_its_provenance(subject: str) -> None:
    held = exported(subject)
    assert held.exists
    assert held.current is not None
    assert held.current.properties == {
        "name": "Ada Lovelace", "role": "analyst", "city": "London", "email": "ada@example.org",
    }  # fmt: skip
    setters = {v.property: (v.value, v.agent, v.source) for v in held.current.values}
    assert setters["city"] == ("London", "bob", "census")
    assert setters["email"] == ("ada@example.org", "cy", "register")  # the merge keeps Cy's
    assert setters["role"] == ("analyst", "ann", "letters")
    assert held.current.aliases == [DUP]

    values = [
        (name, change.after, v.agent, v.source, v.extraction_method)
        for v in [*held.versions, *(v for m in held.merged_in for v in m.versions)]
        for name, change in v.changes.items()
        if change.after is not None
    ]
    assert ("city", "Paris", "ann", "letters", "llm") in values
    assert ("role", "analyst", "ann", "letters", "llm") in values
    assert ("city", "London", "bob", "census", "api") in values
    assert ("email", "ada@example.org", "cy", "register", "api") in values  # the twin's
    assert all(
        v.confidence is not None and v.reliability is not None and v.recorded.event_id
        for v in held.versions
    )
    replaced = [s for v in held.versions for s in v.recorded.superseded]
    assert [(s.property, s.value, s.agent, s.source) for s in replaced] == [
        ("city", "Paris", "ann", "letters")
    ]
    heard = [v for v in held.versions if v.type == "node.corroborated"]
    assert [(v.agent, v.source) for v in heard] == [("cy", "register")]
    assert [(s.agent, s.kind) for s in held.supported_by][-1] == ("rev", "written")

    (merge,) = held.merges
    assert (merge.role, merge.other, merge.agent, merge.reason) == (
        "survivor",
        DUP,
        "rev",
        "one person",
    )
    assert merge.merged_properties["email"] == "ada@example.org"
    assert [(r.relationship_type, r.direction, r.agent, r.type) for r in held.relationships] == [
        ("WORKS_FOR", "out", "bob", "relationship.written"),
        ("WORKS_FOR", "out", "cy", "relationship.corroborated"),
    ]
    (letter,) = held.observations
    assert (letter.text, letter.source, letter.conversation, letter.agent) == (
        LETTER, "letters", "s-1", "ann",
    )  # fmt: skip
    assert letter.cited_by == [held.versions[0].seq]
    (guess,) = held.proposals
    assert (guess.agent, guess.decision, guess.target) == ("dan", "pending", ADA)
    assert guess.arguments["properties"] == {"role": "poet"}
    gossip, knows = held.refusals  # the write about Charles alone is not hers
    assert (gossip.agent, gossip.operation, gossip.error_code) == (
        "eve", "write_node", "INVALID_EXTRACTION_METHOD",
    )  # fmt: skip
    assert "lady@example.org" in gossip.request
    assert (knows.agent, knows.operation) == ("eve", "write_batch")
    assert held.agents == ["ann", "bob", "cy", "dan", "eve", "rev"]
    assert {letter.seq, merge.seq} <= set(held.event_seqs)


def test_the_prov_export_parses_and_names_each_agent(subject: str, tmp_path: Path) -> None:
    out = tmp_path / "ada.ttl"
    writegate(subject, "export", "subject", "Person:name=Ada Lovelace", "--format", "prov",
              "--out", str(out))  # fmt: skip
    graph = Graph().parse(out, format="turtle")
    for agent in ("ann", "bob", "cy", "rev"):
        assert (iri("agent", agent), RDF.type, PROV.Agent) in graph
        assert (iri("agent", agent), RDFS.label, Literal(agent)) in graph
    node = iri("node", ADA)
    versions = set(graph.subjects(PROV.specializationOf, node))
    assert len(versions) == len({v.version for v in exported(subject).versions})
    attributed = {str(a) for v in versions for a in graph.objects(v, PROV.wasAttributedTo)}
    assert {str(iri("agent", a)) for a in ("ann", "bob", "cy", "rev")} <= attributed
    letter = URIRef(str(iri("observation", exported(subject).observations[0].observation_id)))
    assert (letter, PROV.value, Literal(LETTER)) in graph


async def test_the_cli_json_is_the_auditor_tool_answer(subject: str, tmp_path: Path) -> None:
    tokens = {"WRITEGATE_TOKENS": str(tmp_path / "tokens.json")}  # PostgreSQL's has no file
    async with stdio_agent(subject, "audit-1", ("auditor",), tokens) as auditor:
        answer = await auditor.call(
            "export_subject", {"node": {"label": "Person", "merge_keys": {"name": "Ada Lovelace"}}}
        )
        missing = await auditor.call(
            "export_subject", {"node": {"label": "Person", "merge_keys": {"name": "Nobody"}}}
        )
    async with stdio_agent(subject, "w-1", ("writer",), tokens) as writer:
        assert "export_subject" not in await writer.tool_names()
    scoped = ("--scope", "default")  # it would name her employer, outside this grant
    async with stdio_agent(subject, "audit-2", ("auditor",), tokens, extra=scoped) as auditor:
        denied = await auditor.call(
            "export_subject", {"node": {"label": "Person", "merge_keys": {"name": "Ada Lovelace"}}}
        )
    assert not answer.is_error, answer.data
    assert answer.data == exported(subject).model_dump(mode="json")
    for spelling in (["Person:name=Ada Lovelace"], ["Person", "name=Ada Lovelace"]):
        assert as_json(subject, "export", "subject", *spelling) == answer.data
    assert missing.is_error
    assert missing.data["error_code"] == "NODE_NOT_FOUND"
    assert denied.data["error_code"] == "POLICY_DENIED"


def test_an_unknown_node_is_one_line_and_a_refusal(subject: str) -> None:
    refused = writegate(subject, "export", "subject", "Person:name=Nobody", code=1)
    assert refused.stderr == 'error: NODE_NOT_FOUND: node Person{"name":"Nobody"} does not exist\n'
    with pytest.raises(GateRejection) as missing, Gate.open(subject, create=False) as gate:
        Auditor(gate.log).export_subject(node_identity("Person", {"name": "Nobody"}))
    assert missing.value.code == "NODE_NOT_FOUND"
