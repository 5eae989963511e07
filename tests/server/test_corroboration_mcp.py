"""Saying a fact again over MCP, through the official SDK client: ``write_node`` answers
``unchanged`` (nothing appended) to its own repetition and ``corroborated`` to another
agent's, whose support the next read shows."""

from __future__ import annotations

import pytest

from tests.conftest import person, relationship
from tests.server.harness import Served
from writegate.gate import Gate

pytestmark = pytest.mark.anyio

REF = {"label": "Person", "merge_keys": {"name": "Alice"}}


def head(served: Served) -> int:
    with Gate.open(served.db, readonly=True) as gate:
        return gate.log.head()[0]


async def test_write_node_answers_unchanged_then_corroborated(served: Served) -> None:
    async with served.agent("scribe") as scribe:
        first = await scribe.call("write_node", person())
        again = await scribe.call("write_node", person())
    after_again = head(served)
    async with served.agent("checker") as checker:
        heard = await checker.call(
            "write_node", person(source="registry", extraction_method="api", reliability=0.8)
        )
        opened = await checker.call("open_nodes", {"nodes": [REF]})
    assert not first.is_error
    assert first.data["status"] == "written"
    assert again.data["status"] == "unchanged"
    assert (again.data["seq"], again.data["event_id"]) == (
        first.data["seq"],
        first.data["event_id"],
    )
    assert after_again == first.data["seq"]
    assert heard.data["status"] == "corroborated"
    assert heard.data["version"] == first.data["version"] == 1
    both = 1 - (1 - 0.9 * 0.75) * (1 - 0.8)
    assert heard.data["corroborated_confidence"] == pytest.approx(both)
    [alice] = opened.data["nodes"]
    assert alice["provenance"]["corroborated_confidence"] == pytest.approx(both)
    assert alice["provenance"]["sources"] == ["test", "registry"]
    assert head(served) == first.data["seq"] + 1


async def test_write_relationship_answers_unchanged(served: Served) -> None:
    async with served.agent("scribe") as scribe:
        await scribe.call("write_node", person("Alice"))
        await scribe.call("write_node", person("Bob"))
        first = await scribe.call("write_relationship", relationship())
        again = await scribe.call("write_relationship", relationship())
    assert first.data["status"] == "written"
    assert again.data["status"] == "unchanged"
    assert again.data["seq"] == first.data["seq"]
