"""Scope grants over MCP, through the official SDK client against ``writegate serve``: a
token granted scope a never meets anything of scope b — not in a search, an open, a walk,
a path, a query, a history, the stats, an audit or an error — and cannot write there
(``POLICY_DENIED``, nothing appended); a token granted nothing of the declared scopes sees
none of them; a scope switched off answers ``{disabled: true}``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import orjson
import pytest

from tests.conftest import AGENT
from tests.server.harness import HttpServer, http_agent, http_server
from writegate.gate import Gate
from writegate.gate.server.grants import IMPLICIT
from writegate.gate.server.tokens import TokenStore, create_token, list_tokens

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {
    "name": "scoped",
    "nodes": {
        "Orchard": {"merge_keys": ["name"], "scope": "a"},
        "Bramble": {"merge_keys": ["name"], "scope": "b"},
        "Plain": {"merge_keys": ["name"]},
        "Shared": {"merge_keys": ["name"], "scopes": ["a", "b"]},  # a write chooses
    },
    "relationships": {"LINK": {}},
}
PROVENANCE: dict[str, Any] = {"source": "test", "extraction_method": "manual", "reliability": 0.9}
# everything of scope b that must never reach a caller granted a
SECRETS = ("Bramble", "blackthorn", "hedgerow", "thicket")
A1: dict[str, Any] = {"label": "Orchard", "merge_keys": {"name": "apple one"}}
A2: dict[str, Any] = {"label": "Orchard", "merge_keys": {"name": "apple two"}}
B1: dict[str, Any] = {"label": "Bramble", "merge_keys": {"name": "blackthorn"}}


def node(gate: Gate, label: str, name: str, note: str) -> None:
    result = gate.write_node(
        label=label, merge_keys={"name": name}, properties={"note": note}, **PROVENANCE
    )
    assert result.status == "written", result


def link(gate: Gate, one: dict[str, Any], other: dict[str, Any]) -> None:
    result = gate.write_relationship(
        type="LINK",
        from_label=one["label"],
        from_keys=one["merge_keys"],
        to_label=other["label"],
        to_keys=other["merge_keys"],
        **PROVENANCE,
    )
    assert result.status == "written", result


def scoped_log(db: str | Path) -> str | Path:
    """Two apples in a, a blackthorn in b between them (a1 - b1 - a2), and a plain node."""
    with Gate.open(db, default_actor=AGENT) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        node(gate, "Orchard", "apple one", "apple blossom")
        node(gate, "Orchard", "apple two", "apple harvest")
        node(gate, "Bramble", "blackthorn", "hedgerow thicket apple")
        node(gate, "Plain", "plainly", "plain apple")
        link(gate, A1, B1)
        link(gate, B1, A2)
    return db


@dataclass
class Answers:
    """Every answer one agent got, as raw JSON, to look for what it must not hold."""

    raw: list[str] = field(default_factory=list)

    def leaked(self) -> list[str]:
        return [s for s in SECRETS if any(s.lower() in r.lower() for r in self.raw)]


@dataclass
class Caller:
    agent: Any
    answers: Answers

    async def call(self, tool: str, arguments: dict[str, Any], keep: bool = True) -> Any:
        result = await self.agent.client.call_tool(tool, arguments)
        assert isinstance(result, types.CallToolResult)
        if keep:
            self.answers.raw.append(orjson.dumps(result.model_dump(mode="json")).decode())
        assert result.structured_content is not None
        return bool(result.is_error), result.structured_content

    async def stats(self) -> dict[str, Any]:
        read = await self.agent.client.read_resource("writegate://stats")
        text = read.contents[0].text
        self.answers.raw.append(text)
        data: dict[str, Any] = json.loads(text)
        return data


@asynccontextmanager
async def caller(server: HttpServer, token: str) -> AsyncIterator[Caller]:
    async with http_agent(server.url, token) as agent:
        yield Caller(agent, Answers())


@dataclass
class Tokens:
    a: str
    b: str
    none: str
    every: str


def tokens_for(path: Path) -> Tokens:
    roles = ("writer", "auditor")
    return Tokens(
        a=create_token(path, "agent-a", roles, scopes=frozenset({"a"})),
        b=create_token(path, "agent-b", roles, scopes=frozenset({"b"})),
        none=create_token(path, "agent-none", roles),
        every=create_token(path, "operator", ("admin",), scopes=None),
    )


@pytest.fixture
def served(any_db: str | Path, tmp_path: Path) -> Iterator[tuple[HttpServer, Tokens]]:
    tokens = tokens_for(tmp_path / "tokens.json")
    db = scoped_log(any_db)
    every_tool = ("--tokens", str(tmp_path / "tokens.json"), "--tools", "all")
    with http_server(db, extra=every_tool) as server:
        yield server, tokens


def names(data: dict[str, Any]) -> set[str]:
    return {n["merge_keys"]["name"] for n in data["nodes"]}


async def test_a_caller_granted_a_reads_nothing_of_b_through_any_read(
    served: tuple[HttpServer, Tokens],
) -> None:
    server, tokens = served
    async with caller(server, tokens.a) as a:
        _, found = await a.call("search_nodes", {"query": "apple"})
        assert names(found) == {"apple one", "apple two"}
        assert found["withheld"] == {"b": 2}
        _, found = await a.call("search_nodes", {"query": "hedgerow thicket"})
        assert found["nodes"] == []
        assert found["edges"] == []
        _, opened = await a.call("open_nodes", {"nodes": [A1, A2]})
        assert names(opened) == {"apple one", "apple two"}
        assert opened["edges"] == []
        _, around = await a.call("neighbors", {"node": A1, "depth": 3})
        assert names(around) == {"apple one"}
        _, path = await a.call("find_path", {"from": A1, "to": A2})
        assert path["found"] is False
        _, asked = await a.call(
            "graph_query", {"query": "apple blackthorn", "neighborhoodDepth": 2}
        )
        assert asked["triplets"] == [] or all(
            "Orchard" in t["sourceEntity"]["label"] for t in asked["triplets"]
        )
        _, history = await a.call("node_history", {"node": A1})
        assert history["entries"]
        stats = await a.stats()
        assert stats["labels"] == {"Orchard": 2}
        assert stats["relationships"] == 0
        _, trail = await a.call("audit_events", {"node": A1})
        assert trail["events"]
        assert a.answers.leaked() == []


async def test_what_a_caller_cannot_see_is_answered_as_what_does_not_exist(
    served: tuple[HttpServer, Tokens],
) -> None:
    server, tokens = served
    missing = {"label": "Bramble", "merge_keys": {"name": "no such"}}
    async with caller(server, tokens.a) as a:
        for tool, hidden, absent in [
            ("neighbors", {"node": B1}, {"node": missing}),
            ("node_history", {"node": B1}, {"node": missing}),
            ("find_path", {"from": A1, "to": B1}, {"from": A1, "to": missing}),
            ("audit_events", {"node": B1}, {"node": missing}),
        ]:
            seen = await a.call(tool, hidden, keep=False)
            unseen = await a.call(tool, absent, keep=False)
            as_missing = orjson.dumps(unseen).decode().replace("no such", "blackthorn")
            assert orjson.dumps(seen).decode() == as_missing, tool
            assert seen[1]["error_code"] == "NODE_NOT_FOUND"
        _, opened = await a.call("open_nodes", {"nodes": [B1]})
        assert opened["nodes"] == []
        assert a.answers.leaked() == []


async def test_an_audit_of_the_whole_log_needs_every_scope(
    served: tuple[HttpServer, Tokens],
) -> None:
    server, tokens = served
    async with caller(server, tokens.a) as a:
        for tool in ("audit_events", "integrity_report", "audit_conflicts", "report"):
            error, refused = await a.call(tool, {})
            assert error, tool
            assert refused["error_code"] == "POLICY_DENIED", tool
        error, refused = await a.call("audit_feedback", {})
        assert error
        assert refused["error_code"] == "POLICY_DENIED"
        assert a.answers.leaked() == []
    async with caller(server, tokens.every) as operator:
        error, report = await operator.call("report", {})
        assert not error, report


async def test_a_write_into_b_by_a_is_denied_and_appends_nothing(
    served: tuple[HttpServer, Tokens],
) -> None:
    server, tokens = served
    with Gate.open(server.db, create=False) as gate:
        head = gate.log.head()
    bramble = {"label": "Bramble", "merge_keys": {"name": "blackthorn"}, **PROVENANCE}
    link_ab = {
        "type": "LINK", "from_label": "Orchard", "from_keys": {"name": "apple one"},
        "to_label": "Bramble", "to_keys": {"name": "blackthorn"}, **PROVENANCE,
    }  # fmt: skip
    async with caller(server, tokens.a) as a:
        attempts = [
            ("write_node", {**bramble, "properties": {"note": "x"}}),
            ("write_node", {**bramble, "label": ":Bramble", "properties": {"note": 1}}),
            ("write_relationship", link_ab),
            ("delete_node", {**bramble, "detach": True}),
            ("delete_relationship", link_ab),
            ("write_batch", {"items": [{"op": "write_node", **bramble, "properties": {}}]}),
            ("add_bramble", {"bramble": {"name": "thorn"}, **PROVENANCE}),
            ("update_bramble", {"bramble": {"name": "blackthorn", "note": "y"}, **PROVENANCE}),
            ("delete_bramble", {"bramble": {"name": "blackthorn"}, **PROVENANCE}),
            (
                "graph_improve",
                {
                    "sessionId": "s1",
                    "answerId": "q1",
                    "outcome": "accepted",
                    "usedNodeIds": ['Bramble{"name":"blackthorn"}'],
                },
            ),
            # an apple of a's with a relationship into b: deleting it would delete that too
            ("delete_node", {**A1, **PROVENANCE, "detach": True}),
        ]
        for tool, arguments in attempts:
            error, refused = await a.call(tool, arguments, keep=False)  # it names b itself
            assert error, tool
            assert refused["error_code"] == "POLICY_DENIED", (tool, refused)
            assert refused["details"] == {"agent": "agent-a", "tool": tool, "scopes": ["b"]}
            assert refused["message"] == f"agent 'agent-a' may not write in scope b with {tool}"
        error, refused = await a.call("delete_node", {**A1, **PROVENANCE})
        assert refused["error_code"] == "NODE_HAS_RELATIONSHIPS"
        assert refused["details"] == {"count": 1}  # counted, not listed: it leads into b
        error, wrote = await a.call(
            "write_node", {**A1, **PROVENANCE, "properties": {"note": "still mine"}}
        )
        assert not error, wrote
        assert a.answers.leaked() == []
    with Gate.open(server.db, create=False) as gate:
        assert gate.log.head()[0] == head[0] + 1  # only a's own write


async def test_a_token_without_grants_sees_nothing_of_the_declared_scopes(
    served: tuple[HttpServer, Tokens],
) -> None:
    server, tokens = served
    async with caller(server, tokens.none) as plain:
        _, found = await plain.call("search_nodes", {"query": "apple"})
        assert names(found) == {"plainly"}
        stats = await plain.stats()
        assert stats["labels"] == {"Plain": 1}
    async with caller(server, tokens.every) as operator:
        _, found = await operator.call("search_nodes", {"query": "apple"})
        assert names(found) == {"apple one", "apple two", "blackthorn", "plainly"}


async def test_b_sees_b_and_not_a(served: tuple[HttpServer, Tokens]) -> None:
    server, tokens = served
    async with caller(server, tokens.b) as b:
        _, found = await b.call("search_nodes", {"query": "apple"})
        assert names(found) == {"blackthorn"}
        assert found["withheld"] == {"a": 2}
        stats = await b.stats()
        assert stats["labels"] == {"Bramble": 1}
        assert not any("apple one" in r or "apple two" in r for r in b.answers.raw)


def test_a_token_made_without_grants_grants_the_implicit_scope_as_old_records_do(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens.json"
    some = create_token(path, "ada", ("writer",), scopes=frozenset({"a", "b"}))
    every = create_token(path, "root", ("admin",), scopes=None)
    plain = create_token(path, "bob", ("reader",))
    stored = json.loads(path.read_text())["tokens"]
    assert [r["scopes"] for r in stored] == [["a", "b"], "*", ["default"]]
    for record in stored:  # as written before grants existed
        del record["scopes"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"tokens": stored}))
    assert [r.scopes for r in list_tokens(old)] == [IMPLICIT] * 3
    store = TokenStore(path)
    assert [store.principal(t).scopes for t in (some, every, plain)] == [  # type: ignore[union-attr]
        frozenset({"a", "b"}),
        None,
        IMPLICIT,
    ]


async def test_a_node_of_a_shared_label_kept_in_b_is_refused_to_a_before_anything_is_compared(
    served: tuple[HttpServer, Tokens],
) -> None:
    server, tokens = served
    shared = {"label": "Shared", "merge_keys": {"name": "gate"}, **PROVENANCE}
    async with caller(server, tokens.every) as operator:
        error, wrote = await operator.call(
            "write_node", {**shared, "scope": "b", "properties": {"note": "thicket"}}
        )
        assert not error, wrote
    with Gate.open(server.db, create=False) as gate:
        head = gate.log.head()
    async with caller(server, tokens.a) as a:
        for arguments in (
            # answers that would say what is there: its version, that it exists
            {**shared, "if_version": 7, "properties": {"note": "mine"}},
            {**shared, "create_only": True, "properties": {"note": "mine"}},
            {**shared, "scope": "a", "properties": {"note": "mine"}},  # would move it into a
        ):
            error, refused = await a.call("write_node", arguments)
            assert error
            assert refused["error_code"] == "POLICY_DENIED", refused
            assert refused["details"]["scopes"] == ["b"]
        error, wrote = await a.call(
            "write_node", {**shared, "merge_keys": {"name": "door"}, "properties": {"note": "x"}}
        )
        assert not error, wrote  # a Shared of its own lands in a, the label's first scope
        assert a.answers.leaked() == []
    with Gate.open(server.db, create=False) as gate:
        assert gate.log.head()[0] == head[0] + 1


async def test_an_observation_kept_in_b_is_neither_found_nor_opened_by_a(
    served: tuple[HttpServer, Tokens],
) -> None:
    server, tokens = served
    said = {"source": "chat", "extraction_method": "manual", "reliability": 0.9}
    async with caller(server, tokens.every) as operator:
        error, kept = await operator.call(
            "record_observation", {"text": "the thicket by the hedgerow", "scope": "b", **said}
        )
        assert not error, kept
        error, found = await operator.call("search_observations", {"query": "thicket"})
        assert [o["observation_id"] for o in found["observations"]] == [kept["observation_id"]]
    async with caller(server, tokens.a) as a:
        _, found = await a.call("search_observations", {"query": "thicket hedgerow"})
        assert found["observations"] == []
        error, opened = await a.call(
            "open_observation", {"observation_id": kept["observation_id"]}, keep=False
        )
        assert error
        assert opened["error_code"] == "OBSERVATION_NOT_FOUND"
        never = "obs_" + "0" * 32
        answers = []
        for cited in (kept["observation_id"], never):
            error, refused = await a.call(
                "write_node", {**A1, **PROVENANCE, "observations": [cited]}, keep=False
            )
            assert error
            answers.append(orjson.dumps(refused).decode().replace(cited, "ID"))
        assert answers[0] == answers[1]  # citing it is answered as citing one never kept
        assert "OBSERVATION_NOT_FOUND" in answers[0]
        assert a.answers.leaked() == []


async def test_reviewing_needs_every_scope(any_db: str | Path, tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    some = create_token(path, "reviewer-a", ("reviewer",), scopes=frozenset({"a"}))
    every = create_token(path, "reviewer", ("reviewer",), scopes=None)
    db = scoped_log(any_db)
    merge = {
        "label": "Bramble", "survivor_keys": {"name": "blackthorn"},
        "duplicate_keys": {"name": "sloe"}, "reason": "same bush", **PROVENANCE,
    }  # fmt: skip
    with http_server(db, extra=("--tokens", str(path))) as server:
        async with caller(server, some) as a:
            for tool, arguments in (
                ("merge_nodes", merge),
                ("unmerge_nodes", {"merge": "m1", "reason": "undo", **PROVENANCE}),
                ("review_queue", {}),
            ):
                error, refused = await a.call(tool, arguments)
                assert error, tool
                assert refused["error_code"] == "POLICY_DENIED", (tool, refused)
            assert a.answers.leaked() == []
        async with caller(server, every) as operator:
            error, queue = await operator.call("review_queue", {})
            assert not error, queue


async def test_a_scope_named_only_as_a_labels_choice_is_still_withheld(
    any_db: str | Path, tmp_path: Path
) -> None:
    """No label is in b by default; b is only a choice a write may make. A caller granted
    every other scope still does not see the whole graph."""
    path = tmp_path / "tokens.json"
    a = create_token(path, "agent-a", ("writer",), scopes=frozenset({"a", "default"}))
    with Gate.open(any_db, default_actor=AGENT) as gate:
        schema = {
            "name": "choice",
            "nodes": {"Shared": {"merge_keys": ["name"], "scopes": ["a", "b"]}},
        }
        assert gate.publish_schema(schema).status == "published"
        for name, scope in (("apple one", "a"), ("blackthorn", "b")):
            written = gate.write_node(
                label="Shared", merge_keys={"name": name}, scope=scope,
                properties={"note": "hedgerow" if scope == "b" else "orchard"}, **PROVENANCE,
            )  # fmt: skip
            assert written.status == "written", written
    with http_server(any_db, extra=("--tokens", str(path))) as server:
        async with caller(server, a) as agent:
            _, found = await agent.call("search_nodes", {"query": "apple blackthorn hedgerow"})
            assert names(found) == {"apple one"}
            stats = await agent.stats()
            assert stats["labels"] == {"Shared": 1}
            assert agent.answers.leaked() == []


async def test_a_fact_of_a_citing_words_of_b_never_shows_them_to_a(
    served: tuple[HttpServer, Tokens],
) -> None:
    """An operator may cite b's words in a fact of a: a caller granted a reads the fact, and
    neither the words nor the id of what it cites (an id is the hash of the words)."""
    server, tokens = served
    said = {"source": "chat", "extraction_method": "manual", "reliability": 0.9}
    async with caller(server, tokens.every) as operator:
        error, kept = await operator.call(
            "record_observation", {"text": "the thicket by the hedgerow", "scope": "b", **said}
        )
        assert not error, kept
        hidden = kept["observation_id"]
        error, written = await operator.call(
            "write_node",
            {**A1, "properties": {"note": "seen from the lane"}, **PROVENANCE,
             "observations": [hidden]},
        )  # fmt: skip
        assert not error, written
    async with caller(server, tokens.a) as a:
        for tool, arguments in (
            ("open_nodes", {"nodes": [A1]}),
            ("search_nodes", {"query": "apple lane"}),
            ("node_history", {"node": A1}),
            ("audit_events", {"node": A1}),
            ("graph_query", {"query": "apple one lane"}),
        ):
            error, answer = await a.call(tool, arguments)
            assert not error, (tool, answer)
        assert a.answers.leaked() == []
        assert not [r for r in a.answers.raw if hidden in r]
        _, trail = await a.call("audit_events", {"node": A1})
        assert [e["seq"] for e in trail["events"]]  # the writes it may see are there
