"""Conflicting facts through MCP (issue 12, acceptance 1): each policy, on properties and
on functional relationships, and nothing ever lost — every superseded value, with who set
it and at what confidence, is in the event that replaced it, in ``audit node`` and in
``show node --as-of`` before it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.server.conftest import published
from tests.server.harness import WRITEGATE, Agent, Served
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


async def works_for(agent: Agent, organization: str, claim: dict[str, Any]) -> Any:
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
        },
    )


def head(db: Path) -> int:
    with EventLog(db, create=False) as log:
        return log.head()[0]


def cli(db: Path, *args: str) -> Any:
    done = subprocess.run(
        [WRITEGATE, "--db", str(db), *args, "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
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
