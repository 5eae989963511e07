"""The README's role setup, run as written, is all a server's database role needs: as that
role the CLI writes, refuses, merges, deletes and verifies, and ``serve --http`` starts and
takes an agent's writes over the official MCP SDK — and nothing it does creates a table.
A grant missing is one line naming it; a log that needs creating or migrating is one line
saying who may do it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.conftest import EXAMPLE_SCHEMA
from tests.console import run as writegate_run
from tests.postgres import create_app_role
from tests.server.harness import http_agent, http_server
from writegate.gate.server.tokens import create_token

pytestmark = pytest.mark.anyio
CLAIM = ("--source", "hr.csv", "--method", "parsed", "--reliability", "0.9")


def cli(dsn: str, *words: str) -> subprocess.CompletedProcess[str]:
    return writegate_run(["--db", dsn, "--as", "op", *words])


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """What a command that failed said: one ``error:`` line, no traceback."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: "), done.stderr
    return lines[0]


@pytest.fixture
def app_dsn(pg_dsn: str) -> str:
    """A log made by its owner (``init``), then the README's role created for the servers."""
    init = cli(pg_dsn, "init", "--schema", str(EXAMPLE_SCHEMA))
    assert init.returncode == 0, init.stderr
    return create_app_role(pg_dsn)


def tables(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return sorted(row[0] for row in rows)


def test_the_app_role_writes_merges_deletes_and_verifies(app_dsn: str, pg_dsn: str) -> None:
    made = tables(pg_dsn)
    for words in (
        ("write", "node", "Person", "-k", "name=Ada", "-p", "age=36", *CLAIM),
        ("write", "node", "Organization", "-k", "name=Initech", *CLAIM),
        ("write", "relationship", "WORKS_FOR", "--from", "Person", "-f", "name=Ada",
         "--to", "Organization", "-t", "name=Initech", *CLAIM),
        ("write", "node", "Person", "-k", "name=Ada Lovelace", "-p", "age=36", *CLAIM),
        ("merge", "Person", "-s", "name=Ada", "-d", "name=Ada Lovelace", "--reason", "same",
         *CLAIM),
        ("delete", "relationship", "WORKS_FOR", "--from", "Person", "-f", "name=Ada",
         "--to", "Organization", "-t", "name=Initech", *CLAIM),
    ):  # fmt: skip
        done = cli(app_dsn, *words)
        assert done.returncode == 0, (words, done.stderr)
    refused = cli(app_dsn, "write", "node", "Person:name=Mallory", "-p",
                  "confidence=1.0", *CLAIM)  # fmt: skip
    assert one_line_error(refused).startswith("error: SCHEMA_PROTECTED_FIELD")
    with psycopg.connect(pg_dsn) as owner:  # the refusal was recorded, by the app role
        codes = owner.execute("SELECT error_code FROM rejections").fetchall()
    assert codes == [("SCHEMA_PROTECTED_FIELD",)]
    verify = cli(app_dsn, "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "ok    state read model" in verify.stdout
    assert tables(pg_dsn) == made  # the role created nothing (it could not)


async def test_the_app_role_serves_http_to_an_sdk_client(app_dsn: str, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    token = create_token(tokens, "agent-a", ("writer",))
    with http_server(app_dsn, extra=("--tokens", str(tokens))) as server:
        async with http_agent(server.url, token) as agent:
            person = {"label": "Person", "merge_keys": {"name": "Grace"},
                      "properties": {"age": 85}, "source": "hr.csv", "extraction_method": "api"}  # fmt: skip
            written = await agent.call("write_node", person)
            assert not written.is_error, written.data
            again = await agent.call("write_node", {**person, "properties": {"age": 86}})
            assert not again.is_error, again.data
            refused = await agent.call("write_node", {**person, "properties": {"confidence": 1}})
            assert refused.data["error_code"] == "SCHEMA_PROTECTED_FIELD"
    assert "Traceback" not in server.last_said
    verify = cli(app_dsn, "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_grant_missing_is_one_line_naming_it(app_dsn: str, pg_dsn: str) -> None:
    role = app_dsn.split("://", 1)[1].split("@", 1)[0]
    with psycopg.connect(pg_dsn, autocommit=True) as owner:
        owner.execute(f"REVOKE INSERT, DELETE ON state_aliases FROM {role}".encode())
    line = one_line_error(cli(app_dsn, "write", "node", "Person:name=Ada", *CLAIM))
    assert f"role {role} lacks INSERT, DELETE on state_aliases" in line, line
    assert "postgres@" not in line
    with psycopg.connect(pg_dsn, autocommit=True) as owner:  # a table opening does not check
        owner.execute(f"GRANT INSERT, DELETE ON state_aliases TO {role}".encode())
        owner.execute(f"REVOKE INSERT ON rejections FROM {role}".encode())
    refused = cli(app_dsn, "write", "node", "Person:name=Ada", "-p", "confidence=1",
                  *CLAIM)  # fmt: skip
    assert "permission denied for table rejections" in one_line_error(refused)


def test_creating_or_migrating_the_log_is_the_owners_work(pg_dsn: str, tmp_path: Path) -> None:
    """An empty database, and a read model of an older layout, opened by a role that may
    create nothing: one line naming ``init`` as the owner. After the owner's ``init`` the
    same command works."""
    database = pg_dsn.rsplit("/", 1)[1]
    with psycopg.connect(pg_dsn, autocommit=True) as owner:  # before `init`: a bare role
        owner.execute(f"CREATE ROLE bare_{database} LOGIN".encode())
    bare = pg_dsn.replace("postgres@", f"bare_{database}@", 1)
    line = one_line_error(cli(bare, "serve", "--tokens", str(tmp_path / "tokens.json")))
    assert "no writegate log in" in line, line
    assert line.endswith("(run `writegate init`)"), line
    assert tables(pg_dsn) == []
    assert cli(pg_dsn, "init", "--schema", str(EXAMPLE_SCHEMA)).returncode == 0
    app = create_app_role(pg_dsn)
    with psycopg.connect(pg_dsn, autocommit=True) as owner:  # as a log of an older writegate
        owner.execute("UPDATE projection_checkpoints SET seq = 5 WHERE name = 'state.layout'")
    line = one_line_error(cli(app, "write", "node", "Person:name=Ada", *CLAIM))
    assert "run `writegate init` as its owner" in line, line
    assert cli(pg_dsn, "init").returncode == 0  # the owner migrates
    done = cli(app, "write", "node", "Person", "-k", "name=Ada", *CLAIM)
    assert done.returncode == 0, done.stderr
