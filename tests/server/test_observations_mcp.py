"""Observations over MCP, through the official SDK client on stdio and HTTP: an agent keeps
what it read, cites it in the facts it extracts, finds it by its words; a refusal appends
nothing, and a reader may find observations but not keep one."""

from __future__ import annotations

import pytest

from tests.conftest import person, relationship
from tests.server.harness import Served
from writegate.gate import Gate
from writegate.language import node_identity

pytestmark = pytest.mark.anyio

HEARD = {
    "text": "Ada told me she has led the Initech platform team since March.",
    "source": "chat:ada",
    "extraction_method": "llm",
    "said_at": "2025-03-04T10:00:00+01:00",
    "session": "onboarding-call",
}


def head(served: Served) -> int:
    with Gate.open(served.db, readonly=True) as gate:
        return gate.log.head()[0]


async def test_an_agent_keeps_an_observation_and_cites_it(served: Served) -> None:
    async with served.agent("scribe") as agent:
        kept = await agent.call("record_observation", HEARD)
        again = await agent.call("record_observation", {**HEARD, "session": "later"})
        written = await agent.call(
            "write_node", person("Ada", observations=[kept.data["observation_id"]])
        )
        linked = await agent.call(
            "write_relationship",
            relationship(
                from_keys={"name": "Ada"},
                to_keys={"name": "Bob"},
                endpoint_policy="merge_endpoints",
                observations=[kept.data["observation_id"]],
            ),
        )
        opened = await agent.call(
            "open_nodes", {"nodes": [{"label": "Person", "merge_keys": {"name": "Ada"}}]}
        )
        found = await agent.call("search_observations", {"query": "initech platform"})
        one = await agent.call("open_observation", {"observation_id": kept.data["observation_id"]})
    assert not kept.is_error
    assert kept.data["status"] == "recorded"
    assert kept.data["observation_id"].startswith("obs_")
    assert again.data == {**kept.data, "status": "unchanged"}
    assert written.data["status"] == linked.data["status"] == "written"
    ada = next(n for n in opened.data["nodes"] if n["merge_keys"] == {"name": "Ada"})
    assert ada["provenance"]["observations"] == [kept.data["observation_id"]]
    assert opened.data["edges"][0]["provenance"]["observations"] == [kept.data["observation_id"]]
    [hit] = found.data["observations"]
    assert {k: v for k, v in hit.items() if k not in ("score", "terms")} == one.data
    assert hit["terms"] == ["initech", "platform"]  # why it was found (issue 41, defect 5)
    assert hit["score"] > 0  # the index's relevance, higher is better
    assert hit["said_at"] == "2025-03-04T09:00:00.000000Z"
    assert (hit["agent"], hit["session"], hit["source"]) == (
        "scribe",
        "onboarding-call",
        "chat:ada",
    )
    assert set(hit["facts"]) == {
        node_identity("Person", {"name": "Ada"}),
        f"({node_identity('Person', {'name': 'Ada'})})-[KNOWS]->"
        f"({node_identity('Person', {'name': 'Bob'})})",
    }


async def test_refusals_append_nothing(served: Served) -> None:
    async with served.agent("scribe") as agent:
        await agent.call("write_node", person("Ada"))
        before = head(served)
        empty = await agent.call("record_observation", {**HEARD, "text": "   "})
        unknown = await agent.call("write_node", person("Ada", observations=["obs_" + "f" * 32]))
        malformed = await agent.call("write_node", person("Ada", observations=["Ada"]))
        bad_time = await agent.call("record_observation", {**HEARD, "said_at": "yesterday"})
        missing = await agent.call("open_observation", {"observation_id": "obs_" + "e" * 32})
    assert (empty.is_error, empty.data["error_code"]) == (True, "INVALID_ARGUMENT")
    assert unknown.data["error_code"] == "OBSERVATION_NOT_FOUND"
    assert unknown.data["details"] == {"missing": ["obs_" + "f" * 32]}
    assert malformed.data["error_code"] == bad_time.data["error_code"] == "INVALID_ARGUMENT"
    assert missing.data["error_code"] == "OBSERVATION_NOT_FOUND"
    assert head(served) == before


async def test_a_reader_finds_observations_but_keeps_none(served: Served) -> None:
    async with served.agent("scribe") as writer:
        await writer.call("record_observation", HEARD)
    async with served.agent("rita", ("reader",)) as reader:
        names = set(await reader.tool_names())
        found = await reader.call("search_observations", {"query": "initech"})
    assert {"search_observations", "open_observation"} <= names
    assert "record_observation" not in names
    assert len(found.data["observations"]) == 1


async def test_per_label_tools_cite_observations_too(served_npc: Served) -> None:
    """add_ and update_ cite like write_node; an update that moves an edge deletes the old
    one (a deletion cites nothing) and draws the new one from the observations."""
    envelope = {"source": "campaign-notes.md", "extraction_method": "manual"}
    async with served_npc.agent("scribe") as agent:
        first = (await agent.call("record_observation", {**HEARD, "text": "At Rivendell."})).data
        later = (await agent.call("record_observation", {**HEARD, "text": "Gone to Mordor."})).data
        added = await agent.call(
            "add_npc",
            {
                "npc": {
                    "name": "Gandalf",
                    "role": "Wizard",
                    "status": "Active",
                    "currentLocation": "Rivendell",
                },
                "observations": [first["observation_id"]],
                **envelope,
            },
        )
        moved = await agent.call(
            "update_npc",
            {
                "npc": {"name": "Gandalf", "currentLocation": "Mordor"},
                "observations": [later["observation_id"]],
                **envelope,
            },
        )
        opened = await agent.call(
            "open_nodes", {"nodes": [{"label": "Npc", "merge_keys": {"name": "Gandalf"}}]}
        )
        deleting = next(
            t for t in (await agent.client.list_tools()).tools if t.name == "delete_npc"
        )
    assert not added.is_error, added.data
    assert not moved.is_error, moved.data
    gandalf = next(n for n in opened.data["nodes"] if n["label"] == "Npc")
    assert gandalf["provenance"]["observations"] == [later["observation_id"]]
    [edge] = opened.data["edges"]
    assert edge["to"]["merge_keys"] == {"name": "Mordor"}
    assert edge["provenance"]["observations"] == [later["observation_id"]]
    assert "observations" not in deleting.input_schema["properties"]
