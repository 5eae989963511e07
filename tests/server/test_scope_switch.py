"""Where a grant comes from and what narrows it: ``token create --scope`` as an operator
types it, OAuth's ``writegate:scope:`` strings, a stdio server's ``--scope``, a Cedar
``forbid`` of ``use_scope``; and the switch ``[scopes] disabled``, under which the graph
tools answer ``{disabled: true}`` (seed 004's per-project gate) without error."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import jwt
import pytest

from tests.console import run as writegate_run
from tests.server.conftest import published
from tests.server.harness import http_agent, http_server, stdio_agent
from tests.server.test_scope_grants import A1, B1, scoped_log
from writegate.gate.server.grants import IMPLICIT, call_grant
from writegate.gate.server.oauth import OAuthVerifier
from writegate.gate.server.oauth_settings import OAuthSettings
from writegate.gate.server.policy import Policy, Principal
from writegate.gate.server.tokens import TokenStore, create_token, principal_from_access

pytestmark = pytest.mark.anyio
GRAPH_TOOLS: dict[str, dict[str, Any]] = {
    "graph_query": {"query": "apple"},
    "search_nodes": {"query": "apple"},
    "open_nodes": {"nodes": [A1]},
    "neighbors": {"node": A1},
    "find_path": {"from": A1, "to": B1},
    "graph_improve": {"sessionId": "s", "answerId": "q", "outcome": "accepted"},
}


def writegate(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return writegate_run(["--db", str(db), *args])


def test_token_create_records_the_grant_and_token_list_shows_it(tmp_path: Path) -> None:
    db = Path(scoped_log(tmp_path / "log.db"))
    assert (
        writegate(db, "token", "create", "ada", "--role", "writer", "--scope", "a").returncode == 0
    )
    assert (
        writegate(db, "token", "create", "root", "--role", "admin", "--all-scopes").returncode == 0
    )
    assert writegate(db, "token", "create", "bob", "--role", "reader").returncode == 0
    listed = json.loads(writegate(db, "token", "list", "--format", "json").stdout)
    assert [(t["agent"], t["scopes"]) for t in listed["tokens"]] == [
        ("ada", ["a"]),
        ("root", "*"),
        ("bob", ["default"]),
    ]
    table = writegate(db, "token", "list").stdout
    assert "ada  roles writer  scopes a  created" in table
    both = writegate(
        db, "token", "create", "eve", "--role", "writer", "--scope", "a", "--all-scopes"
    )
    assert both.returncode == 2
    assert "not both" in both.stderr
    bad = writegate(db, "token", "create", "eve", "--role", "writer", "--scope", "no good")
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1


async def test_oauth_scope_strings_grant_scopes(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s" * 40)
    checker = OAuthVerifier(
        OAuthSettings(issuer="https://as.example.org", secret_file=secret),
        "http://127.0.0.1:1/mcp",
        TokenStore(tmp_path / "tokens.json"),
    )

    async def granted(scope: str) -> frozenset[str] | None:
        claims: dict[str, Any] = {
            "iss": "https://as.example.org", "sub": "ada", "aud": "http://127.0.0.1:1/mcp",
            "exp": int(time.time()) + 60, "scope": scope,
        }  # fmt: skip
        access = await checker.verify_token(jwt.encode(claims, "s" * 40, algorithm="HS256"))
        principal = principal_from_access(access)
        assert principal is not None
        assert principal.roles == ("writer",)
        return principal.scopes

    assert await granted("writegate:writer writegate:scope:a writegate:scope:b") == frozenset(
        {"a", "b"}
    )
    assert await granted("writegate:writer writegate:scope:*") is None
    assert await granted("writegate:writer") == IMPLICIT
    assert await granted("writegate:writer writegate:scope:no-good") == frozenset()


def test_a_cedar_forbid_of_use_scope_narrows_a_grant(tmp_path: Path) -> None:
    forbid = (
        'forbid (principal == Agent::"ada", action == Action::"use_scope", resource == Scope::"b");'
    )
    policy = Policy(Policy.load().text + "\n" + forbid)
    ada, bob = Principal("ada", scopes=None), Principal("bob", scopes=None)
    assert policy.grant(ada, {"a", "b"}) == frozenset({"a", "default"})
    assert policy.grant(bob, {"a", "b"}) is None  # every scope, those declared later too
    assert policy.grant(Principal("ada", scopes=frozenset({"b"})), {"a", "b"}) == frozenset()
    assert policy.grant(ada, {"a", "b", "c"}) == frozenset({"a", "c", "default"})  # asked
    own = tmp_path / "own.cedar"  # an operator's file that says nothing of scopes
    own.write_text('permit (principal, action, resource) when { principal == Agent::"ada" };')
    assert Policy.load([own]).grant(ada, {"a", "b"}) is None


def test_a_switched_off_scope_leaves_the_grant_and_an_empty_one_is_disabled() -> None:
    assert call_grant(None, frozenset({"a", "b"}), frozenset({"b"})).writes == frozenset(
        {"a", "default"}
    )
    assert call_grant(frozenset({"b"}), frozenset({"a", "b"}), frozenset({"b"})).disabled
    assert not call_grant(frozenset(), frozenset({"a"}), frozenset({"b"})).disabled
    assert call_grant(None, frozenset(), frozenset({"default"})).disabled  # no scopes declared
    assert call_grant(IMPLICIT, frozenset(), frozenset()).reads is None  # reads as before


async def test_a_stdio_server_restricted_to_a_scope_reads_only_inside_it(tmp_path: Path) -> None:
    db = Path(scoped_log(tmp_path / "log.db"))
    async with stdio_agent(db, extra=("--scope", "b")) as agent:
        found = await agent.call("search_nodes", {"query": "apple"})
        assert [n["merge_keys"]["name"] for n in found.data["nodes"]] == ["blackthorn"]
    async with stdio_agent(db) as agent:  # the operator's own process: every scope
        found = await agent.call("search_nodes", {"query": "apple"})
        assert len(found.data["nodes"]) == 4


async def test_a_disabled_scope_answers_disabled_to_whom_it_leaves_nothing(tmp_path: Path) -> None:
    db = scoped_log(tmp_path / "log.db")
    config = tmp_path / "writegate.toml"
    config.write_text('[scopes]\ndisabled = ["b"]\n')
    tokens = tmp_path / "tokens.json"
    b = create_token(tokens, "agent-b", ("writer",), scopes=frozenset({"b"}))
    a = create_token(tokens, "agent-a", ("writer",), scopes=frozenset({"a"}))
    every = create_token(tokens, "operator", ("admin",), scopes=None)
    env = {"WRITEGATE_CONFIG": str(config)}
    served = ("--tokens", str(tokens), "--output-schemas")  # a client that checks results
    with http_server(db, env=env, extra=served) as server:
        async with http_agent(server.url, b) as agent:
            for tool, arguments in GRAPH_TOOLS.items():
                answer = await agent.call(tool, arguments)
                assert (answer.is_error, answer.data) == (False, {"disabled": True}), tool
            listed = {t.name: t for t in (await agent.client.list_tools()).tools}
            published = listed["search_nodes"].output_schema
            assert published is not None
            assert published["properties"]["disabled"] == {"type": "boolean"}
        async with http_agent(server.url, a) as agent:
            found = await agent.call("search_nodes", {"query": "apple"})
            assert len(found.data["nodes"]) == 2
        async with http_agent(server.url, every) as agent:  # b is off for everyone
            found = await agent.call("search_nodes", {"query": "apple"})
            names = {n["merge_keys"]["name"] for n in found.data["nodes"]}
            assert names == {"apple one", "apple two", "plainly"}


async def test_disabling_the_implicit_scope_switches_a_log_without_scopes_off(
    db_path: Path, tmp_path: Path
) -> None:
    config = tmp_path / "writegate.toml"
    config.write_text('[scopes]\ndisabled = ["default"]\n')
    token = create_token(tmp_path / "tokens.json", "ada", ("writer",))
    env = {"WRITEGATE_CONFIG": str(config)}
    extra = ("--tokens", str(tmp_path / "tokens.json"))
    with http_server(published(db_path), env=env, extra=extra) as server:
        async with http_agent(server.url, token) as agent:
            answer = await agent.call("graph_query", {"query": "anything"})
            assert (answer.is_error, answer.data) == (False, {"disabled": True})
            schema = await agent.call("get_schema", {})
            assert not schema.is_error  # only the graph tools are switched off
