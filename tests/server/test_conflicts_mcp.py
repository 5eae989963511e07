"""Conflicting facts through MCP (issue 12, acceptance 1): each policy, on properties and
on functional relationships, and nothing ever lost — every superseded value, with who set
it and at what confidence, is in the event that replaced it, in ``audit node`` and in
``show node --as-of`` before it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from tests.console import run as writegate_run
from tests.server.conftest import published
from tests.server.harness import Agent, Served
from writegate.eventlog import EventLog
from writegate.gate import Gate
from writegate.language import NodeWritten, RelationshipDeleted, payload_of
from writegate.projections.state import StateProjection

pytestmark = pytest.mark.anyio
CONFLICT_SCHEMA = ROOT / "fixtures" / "conflict_schema.yaml"
HR = {"source": "hr.csv", "extraction_method": "parsed", "reliability": 0.95}
CHAT = {"source": "chat", "extraction_method": "llm", "reliability": 0.5}


@pytest.fixture(params=["stdio", "http"])
def served(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Served]:
    s = Served(request.param, published(db_path, CONFLICT_SCHEMA))
    yield s
    s.close()


async def ada(agent: Agent, claim: dict[str, Any], **properties: Any) -> Any:
    arguments = {"label": "Person", "merge_keys": {"name": "Ada"}, "properties": properties}
    return await agent.call("write_node", {**arguments, **claim})


async def works_for(agent: Agent, organization: str, claim: dict[str, Any], **valid: str) -> Any:
    return await agent.call(
        "write_relationship",
        {
            "type": "WORKS_FOR",
            "from_label": "Person",
            "from_keys": {"name": "Ada"},
            "to_label": "Organization",
            "to_keys": {"name": organization},
            "endpoint_policy": "merge_endpoints",
            **claim,
            **valid,
        },
    )


ADA = 'Person{"name":"Ada"}'
INITECH = '(Person{"name":"Ada"})-[WORKS_FOR]->(Organization{"name":"Initech"})'
GLOBEX = '(Person{"name":"Ada"})-[WORKS_FOR]->(Organization{"name":"Globex"})'


@pytest.fixture(params=["reject", "review"])
def employer_policy(
    request: pytest.FixtureRequest, db_path: Path, tmp_path: Path
) -> Iterator[tuple[str, Served]]:
    """The conflict schema with WORKS_FOR (functional) under ``reject`` or ``review``, over
    stdio (the transports are covered by the tests above)."""
    document = yaml.safe_load(CONFLICT_SCHEMA.read_text())
    document["relationships"]["WORKS_FOR"]["conflict"] = request.param
    schema = tmp_path / f"{request.param}.yaml"
    schema.write_text(yaml.safe_dump(document))
    s = Served("stdio", published(db_path, schema))
    yield request.param, s
    s.close()


def employers(db: Path) -> list[str]:
    with Gate.open(db) as gate:
        return [
            e.identity
            for e in StateProjection().edges_from(gate.log.connection(), ADA, "WORKS_FOR")
        ]


def head(db: Path) -> int:
    with EventLog(db, create=False) as log:
        return log.head()[0]


def cli(db: Path, *args: str) -> Any:
    done = writegate_run(["--db", str(db), *args, "--format", "json"])
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def test_supersede_keeps_the_old_value_and_its_provenance(served: Served) -> None:
    async with served.agent("hr-import") as hr, served.agent("chat-agent") as chat:
        first = await ada(hr, HR, city="London")
        second = await ada(chat, CHAT, city="Paris")
    assert not second.is_error, second.data
    assert second.data["confidence"] < first.data["confidence"]  # supersede ignores it
    assert second.data["superseded"] == [
        {
            "property": "city",
            "value": "London",
            "seq": first.data["seq"],
            "agent": "hr-import",
            "confidence": first.data["confidence"],
            "source": "hr.csv",
            "extraction_method": "parsed",
        }
    ]
    with EventLog(served.db, create=False) as log:
        [event] = log.read(after_seq=second.data["seq"] - 1, limit=1).events
    payload = payload_of(event)
    assert isinstance(payload, NodeWritten)
    assert payload.superseded is not None
    assert payload.superseded[0].value == "London"
    # recoverable from the auditor's views: the history, and the node as it stood before
    audit = cli(served.db, "audit", "node", "Person", "name=Ada")
    london, paris = audit["entries"]
    assert london["changes"]["city"]["after"] == "London"
    assert (london["agent"], london["source"], london["confidence"]) == (
        "hr-import",
        "hr.csv",
        first.data["confidence"],
    )
    assert paris["changes"]["city"] == {"before": "London", "after": "Paris"}
    before = cli(served.db, "show", "node", "Person", "name=Ada", "--as-of", london["occurred_at"])
    assert before["properties"]["city"] == "London"


async def test_keep_higher_confidence_refuses_a_weaker_claim(served: Served) -> None:
    async with served.agent("hr-import") as hr, served.agent("chat-agent") as chat:
        first = await ada(hr, HR, role="director")
        appended = head(served.db)
        weaker = await ada(chat, CHAT, role="intern")
        assert weaker.is_error
        assert weaker.data["error_code"] == "CONFLICT_LOWER_CONFIDENCE"
        assert head(served.db) == appended  # a refusal appends nothing
        [conflict] = weaker.data["details"]["conflicts"]
        assert conflict["property"] == "role"
        assert conflict["existing"]["value"] == "director"
        assert conflict["existing"]["agent"] == "hr-import"
        assert conflict["existing"]["confidence"] == first.data["confidence"]
        assert conflict["incoming"]["value"] == "intern"
        assert conflict["incoming"]["source"] == "chat"
        assert "hr.csv" in weaker.data["message"]
        # as strong a claim replaces it, and says what it replaced
        stronger = await ada(chat, {**HR, "source": "hr-2027.csv"}, role="cto")
    assert not stronger.is_error, stronger.data
    assert [s["value"] for s in stronger.data["superseded"]] == ["director"]


async def test_reject_refuses_any_change_but_not_the_same_value(served: Served) -> None:
    async with served.agent("hr-import") as hr:
        await ada(hr, HR, email="ada@example.org")
        changed = await ada(hr, HR, email="ada@elsewhere.org")
        again = await ada(hr, CHAT, email="ada@example.org")
        removed = await ada(hr, HR, email=None)
    assert changed.is_error
    assert changed.data["error_code"] == "CONFLICT"
    assert changed.data["details"]["conflicts"][0]["existing"]["value"] == "ada@example.org"
    assert not again.is_error
    assert "superseded" not in again.data
    assert removed.is_error
    assert removed.data["error_code"] == "CONFLICT"


async def test_a_multi_valued_property_is_never_a_conflict(served: Served) -> None:
    async with served.agent("hr-import") as hr, served.agent("chat-agent") as chat:
        await ada(hr, HR, nicknames=["Countess"])
        out = await ada(chat, CHAT, nicknames=["Enchantress of Numbers"])
    assert not out.is_error
    assert "superseded" not in out.data


async def test_a_functional_relationship_supersedes_the_previous_one(served: Served) -> None:
    async with served.agent("hr-import") as hr, served.agent("chat-agent") as chat:
        first = await works_for(hr, "Initech", HR)
        second = await works_for(chat, "Globex", CHAT)
    assert not second.is_error, second.data
    [replaced] = second.data["superseded"]
    old_identity = '(Person{"name":"Ada"})-[WORKS_FOR]->(Organization{"name":"Initech"})'
    assert replaced["property"] is None
    assert replaced["value"] == old_identity
    assert (replaced["seq"], replaced["agent"]) == (first.data["seq"], "hr-import")
    new_identity = '(Person{"name":"Ada"})-[WORKS_FOR]->(Organization{"name":"Globex"})'
    with Gate.open(served.db) as gate:
        employers = StateProjection().edges_from(
            gate.log.connection(), 'Person{"name":"Ada"}', "WORKS_FOR"
        )
        events = gate.log.read(after_seq=first.data["seq"]).events
        assert gate.verify().ok
    assert [edge.identity for edge in employers] == [new_identity]
    ended = payload_of(events[0])
    assert isinstance(ended, RelationshipDeleted)  # ended, in the log, before the new one
    assert (ended.identity, ended.superseded_by) == (old_identity, new_identity)


async def test_a_weaker_functional_claim_is_refused(served: Served) -> None:
    async with served.agent("hr-import") as hr, served.agent("chat-agent") as chat:
        for name in ("Ada", "Grace", "Alan"):
            await hr.call("write_node", {"label": "Person", "merge_keys": {"name": name}, **HR})

        async def reports_to(agent: Agent, manager: str, claim: dict[str, Any]) -> Any:
            return await agent.call(
                "write_relationship",
                {
                    "type": "REPORTS_TO",
                    "from_label": "Person",
                    "from_keys": {"name": "Ada"},
                    "to_label": "Person",
                    "to_keys": {"name": manager},
                    **claim,
                },
            )

        await reports_to(hr, "Grace", HR)
        weaker = await reports_to(chat, "Alan", CHAT)
        same = await reports_to(chat, "Grace", CHAT)  # the same fact again: no conflict
    assert weaker.is_error
    assert weaker.data["error_code"] == "CONFLICT_LOWER_CONFIDENCE"
    [conflict] = weaker.data["details"]["conflicts"]
    assert conflict["existing"]["value"].endswith('[REPORTS_TO]->(Person{"name":"Grace"})')
    assert not same.is_error
    assert "superseded" not in same.data


async def test_auditors_see_every_supersession_and_refusal(served: Served) -> None:
    async with served.agent("hr-import") as hr, served.agent("chat-agent") as chat:
        await ada(hr, HR, city="London", role="director")
        await ada(chat, CHAT, city="Paris")  # supersedes London
        refused = await ada(chat, CHAT, role="intern")  # weaker than the director claim
        assert refused.is_error
        assert "audit_conflicts" not in await chat.tool_names()  # auditors only
    async with served.agent("auditor-1", roles=("auditor",)) as auditor:
        found = await auditor.call("audit_conflicts", {})
    assert not found.is_error, found.data
    assert (found.data["superseded"], found.data["refused"]) == (1, 1)
    superseded, refusal = found.data["entries"]
    assert (superseded["property"], superseded["held_value"], superseded["held_by"]) == (
        "city",
        "London",
        "hr-import",
    )
    assert superseded["agent"] == "chat-agent"
    assert refusal["outcome"] == "refused"
    assert refusal["error_code"] == "CONFLICT_LOWER_CONFIDENCE"
    assert refusal["agent"] == "chat-agent"
    assert cli(served.db, "audit", "conflicts") == found.data  # the same call as the CLI's


async def test_a_functional_relationship_under_reject_or_review(
    employer_policy: tuple[str, Served],
) -> None:
    """``reject``: CONFLICT with both relationships' provenance, nothing appended.
    ``review``: held, and once approved it replaces the old one (which stays recoverable)."""
    policy, served = employer_policy
    async with served.agent("hr-import") as hr, served.agent("chat-agent") as chat:
        first = await works_for(hr, "Initech", HR)
        appended = head(served.db)
        second = await works_for(chat, "Globex", CHAT)
    if policy == "reject":
        assert second.is_error
        assert second.data["error_code"] == "CONFLICT"
        [conflict] = second.data["details"]["conflicts"]
        assert conflict["existing"]["value"] == INITECH
        assert (conflict["existing"]["agent"], conflict["existing"]["source"]) == (
            "hr-import",
            "hr.csv",
        )
        assert conflict["existing"]["confidence"] == first.data["confidence"]
        assert conflict["incoming"]["value"] == GLOBEX
        assert (conflict["incoming"]["source"], conflict["incoming"]["extraction_method"]) == (
            "chat",
            "llm",
        )
        assert conflict["incoming"]["confidence"] == pytest.approx(0.5 * 0.6)
        assert head(served.db) == appended  # a refusal appends nothing
        assert employers(served.db) == [INITECH]
        return
    assert not second.is_error, second.data
    assert second.data["status"] == "proposed"
    assert "conflict: review" in second.data["reason"]
    assert employers(served.db) == [INITECH]  # held: nothing changed yet
    async with served.agent("rev-1", roles=("reviewer",)) as reviewer:
        decided = await reviewer.call(
            "review_decide", {"proposal": second.data["proposal"], "decision": "approve"}
        )
    assert not decided.is_error, decided.data
    result = decided.data["result"]
    assert result["status"] == "written"
    [replaced] = result["superseded"]
    assert (replaced["value"], replaced["agent"]) == (INITECH, "hr-import")
    assert employers(served.db) == [GLOBEX]
    trail = cli(served.db, "audit", "node", "Person", "name=Ada")
    ended = [r for r in trail["relationships"] if r["relationship"] == INITECH]
    assert [(r["type"], r["agent"]) for r in ended] == [
        ("relationship.written", "hr-import"),
        ("relationship.deleted", "chat-agent"),  # the approved write, as its writer's
    ]
    assert ended[1]["superseded_by"] == GLOBEX


async def test_a_replaced_relationship_is_recoverable(served: Served) -> None:
    """From ``audit node`` of its start node (with its provenance, confidence and what
    replaced it), from ``show node --as-of`` before, and from ``open_nodes`` at a valid
    time (with its valid time closed where its successor's starts)."""
    async with served.agent("hr-import") as hr, served.agent("chat-agent") as chat:
        first = await works_for(hr, "Initech", HR, valid_from="2020-01-01T00:00:00Z")
        second = await works_for(chat, "Globex", CHAT, valid_from="2023-01-01T00:00:00Z")
        assert not second.is_error, second.data
        with EventLog(served.db, create=False) as log:
            [written] = log.read(after_seq=first.data["seq"] - 1, limit=1).events
        recorded = written.occurred_at.isoformat()
        ada_ref = {"label": "Person", "merge_keys": {"name": "Ada"}}
        then = await chat.call("open_nodes", {"nodes": [ada_ref], "as_of": recorded})
        earlier = await chat.call(
            "open_nodes", {"nodes": [ada_ref], "valid_at": "2021-06-01T00:00:00Z"}
        )
        later = await chat.call(
            "open_nodes", {"nodes": [ada_ref], "valid_at": "2024-06-01T00:00:00Z"}
        )
        now = await chat.call("open_nodes", {"nodes": [ada_ref]})
    trail = cli(served.db, "audit", "node", "Person", "name=Ada")
    initech = [r for r in trail["relationships"] if r["relationship"] == INITECH]
    assert [r["type"] for r in initech] == ["relationship.written", "relationship.deleted"]
    assert (initech[0]["agent"], initech[0]["source"], initech[0]["confidence"]) == (
        "hr-import",
        "hr.csv",
        first.data["confidence"],
    )
    assert (initech[0]["direction"], initech[0]["valid_from"]) == (
        "out",
        "2020-01-01T00:00:00.000000Z",
    )
    assert initech[1]["superseded_by"] == GLOBEX
    shown = cli(served.db, "show", "node", "Person", "name=Ada", "--as-of", recorded)
    assert [r["identity"] for r in shown["relationships"]] == [INITECH]

    def organizations(found: Any) -> list[tuple[str, str | None]]:
        assert not found.is_error, found.data
        return [(e["to"]["merge_keys"]["name"], e.get("valid_to")) for e in found.data["edges"]]

    assert organizations(then) == [("Initech", None)]
    assert organizations(earlier) == [("Initech", "2023-01-01T00:00:00.000000Z")]
    assert organizations(later) == [("Globex", None)]
    assert organizations(now) == [("Globex", None)]
    assert "valid_to" not in now.data["edges"][0]  # a read of now is the read model's
