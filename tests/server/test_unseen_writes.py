"""A write aimed at what the caller cannot see is answered as one aimed at nothing (issue 41,
finding 7): a deletion or an update of a node kept in a scope outside the grant gets the
very answer — code, message, details — it gets on the same log without that node; a write
that would make it is refused by the grant, never told the node's version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.harness import http_agent, http_server
from writegate.gate import Gate
from writegate.gate.server.app import WritegateServer
from writegate.gate.server.calls import run
from writegate.gate.server.policy import Principal
from writegate.gate.server.tokens import create_token

SCOPES = ("ops", "eng")
SCHEMA: dict[str, Any] = {
    "name": "tickets",
    "nodes": {"Ticket": {"merge_keys": ["name"], "scopes": list(SCOPES)}},
    "relationships": {"BLOCKS": {"from": ["Ticket"], "to": ["Ticket"]}},
}
PROV: dict[str, Any] = {"source": "tracker", "extraction_method": "api", "reliability": 0.9}
TICKETS = ("t0", "t1", "t2")


def keys(name: str) -> dict[str, Any]:
    return {"label": "Ticket", "merge_keys": {"name": name}}


def aimed_at(hidden: str, other: str) -> list[tuple[str, dict[str, Any]]]:
    """Every deletion and update of ``hidden``, on the generic and the per-label tools."""
    link = {
        "type": "BLOCKS",
        "from_label": "Ticket",
        "from_keys": {"name": hidden},
        "to_label": "Ticket",
        "to_keys": {"name": other},
    }
    return [
        ("delete_node", {**keys(hidden), **PROV}),
        ("delete_node", {**keys(hidden), "detach": True, **PROV}),
        ("delete_ticket", {"ticket": {"name": hidden}, **PROV}),
        ("update_ticket", {"ticket": {"name": hidden, "note": "x"}, **PROV}),
        ("delete_relationship", {**link, **PROV}),
        *(("write_batch", {"items": items}) for items in _batches(hidden, other, link)),
    ]


def _batches(hidden: str, other: str, link: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Batches that delete ``hidden``: alone, after another item, before one the batch
    refuses while planning, and its relationship (a batch answered "may not write in scope
    eng", naming where the node is kept)."""
    gone = {"op": "delete_node", **keys(hidden), **PROV}
    return [
        [gone],
        [{"op": "write_node", **keys(other), **PROV}, {**gone, "detach": True}],
        [gone, {"op": "write_node", "label": "Ticket", "merge_keys": {}, **PROV}],
        [{"op": "delete_relationship", **link, **PROV}],
    ]


def kept(db: Path, where: dict[str, str], links: list[tuple[str, str]]) -> Path:
    """A log holding each ticket of ``where`` in its scope, and ``links`` between them."""
    with Gate.open(db) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        for name, scope in where.items():
            written = gate.write_node(**keys(name), scope=scope, **PROV)
            assert written.status == "written", written
        for start, end in links:
            if start in where and end in where:
                gate.write_relationship(
                    type="BLOCKS",
                    from_label="Ticket",
                    from_keys={"name": start},
                    to_label="Ticket",
                    to_keys={"name": end},
                    **PROV,
                )
    return db


def answers(
    db: Path, granted: frozenset[str], calls: list[tuple[str, dict[str, Any]]]
) -> list[Any]:
    """What a writer granted ``granted`` is answered, through the server's own call path."""
    with Gate.open(db) as gate:
        server = WritegateServer(gate, tools="all")
        catalog = server.catalog()
        principal = Principal("agent-ops", ("writer",), transport="http", scopes=granted)
        grant = server.calls.grant(principal, frozenset(SCOPES))
        return [
            run(catalog[tool], server.calls.make(principal, catalog[tool], raw, grant)).model_dump(
                mode="json"
            )
            for tool, raw in calls
        ]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    where=st.dictionaries(st.sampled_from(TICKETS), st.sampled_from(SCOPES), min_size=1),
    links=st.lists(st.tuples(st.sampled_from(TICKETS), st.sampled_from(TICKETS)), max_size=4),
    granted=st.sampled_from([frozenset({"ops"}), frozenset({"eng"})]),
)
def test_a_deletion_or_update_of_an_unseen_node_is_answered_as_of_no_node(
    tmp_path_factory: pytest.TempPathFactory,
    where: dict[str, str],
    links: list[tuple[str, str]],
    granted: frozenset[str],
) -> None:
    for hidden in [name for name, scope in where.items() if scope not in granted]:
        other = next((n for n in TICKETS if n != hidden), hidden)
        calls = aimed_at(hidden, other)
        scratch = tmp_path_factory.mktemp("unseen")
        with_it = kept(scratch / "with.db", where, links)
        without = {n: s for n, s in where.items() if n != hidden}
        without_it = kept(scratch / "without.db", without, links)
        assert answers(with_it, granted, calls) == answers(without_it, granted, calls)


@pytest.mark.anyio
async def test_an_add_over_an_unseen_node_is_refused_by_the_grant_not_told_its_version(
    tmp_path: Path,
) -> None:
    """The issue's case, over HTTP: ``t1`` kept in eng, a writer granted only ops."""
    db = kept(tmp_path / "log.db", {"t1": "eng"}, [])
    tokens = tmp_path / "tokens.json"
    ops = create_token(tokens, "agent-ops", ("writer",), scopes=frozenset({"ops"}))
    with http_server(db, extra=("--tokens", str(tokens), "--tools", "all")) as server:
        async with http_agent(server.url, ops) as agent:
            added = await agent.call("add_ticket", {"ticket": {"name": "t1"}, **PROV})
            deleted = await agent.call("delete_ticket", {"ticket": {"name": "t1"}, **PROV})
    assert added.is_error
    assert added.data["error_code"] == "POLICY_DENIED", added.data
    assert "version" not in added.data["message"]
    assert deleted.data["error_code"] == "NODE_NOT_FOUND", deleted.data
    assert deleted.data["message"] == 'node Ticket{"name":"t1"} does not exist'
