"""``writegate token`` and ``writegate serve`` as an operator runs them, and the host policy."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import click

from tests.cli.test_cli import run
from tests.server.harness import WRITEGATE, free_port
from writegate.cli.serve import serve
from writegate.gate.server.http import HostPolicy
from writegate.gate.server.tokens import TokenStore


def test_token_create_prints_once_and_stores_only_the_hash(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    run(db, "init")
    created = run(db, "token", "create", "alice", "--role", "writer", "--role", "reader")
    token = created.stdout.strip()
    assert token.startswith("wg_")
    assert "not shown again" in created.stderr
    stored = (tmp_path / "t.db.tokens.json").read_text()
    assert token not in stored
    [record] = json.loads(stored)["tokens"]
    assert record["sha256"] == hashlib.sha256(token.encode()).hexdigest()
    assert (record["agent"], record["roles"]) == ("alice", ["writer", "reader"])
    principal = TokenStore(tmp_path / "t.db.tokens.json").principal(token)
    assert principal is not None
    assert (principal.agent, principal.roles) == ("alice", ("writer", "reader"))

    revoked = run(db, "token", "revoke", "alice")
    assert "revoked 1" in revoked.stdout
    assert TokenStore(tmp_path / "t.db.tokens.json").principal(token) is None
    again = run(db, "token", "revoke", "alice", ok=False)
    assert again.returncode == 1
    assert again.stderr.startswith("error: no token for agent 'alice'")


def test_token_create_keeps_the_token_in_the_file_serve_reads(tmp_path: Path) -> None:
    """``[serve] tokens`` was read by ``serve`` only: ``token create`` kept the token beside
    the log, and the server refused it (401) from the file it was told to read."""
    db, agents = tmp_path / "t.db", tmp_path / "agents.json"
    run(db, "init")
    config = tmp_path / "writegate.toml"
    config.write_text(f'[serve]\ntokens = "{agents}"\n')
    token = run(db, "--config", str(config), "token", "create", "bot", "--role", "writer")
    assert TokenStore(agents).principal(token.stdout.strip()) is not None
    assert not (tmp_path / "t.db.tokens.json").exists()
    listed = run(db, "--config", str(config), "token", "list", "--format", "json")
    assert [t["agent"] for t in json.loads(listed.stdout)["tokens"]] == ["bot"]


def test_a_token_for_a_log_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    """Issue 10, newcomer 1: a token made beside the wrong log would give 401 forever."""
    missing = run(tmp_path / "writegate.db", "token", "create", "a", "--role", "writer", ok=False)
    assert missing.returncode == 2
    assert (
        missing.stderr
        == f"error: no writegate log at {tmp_path / 'writegate.db'}: pass the --db you serve (or --tokens FILE)\n"
    )
    assert not (tmp_path / "writegate.db.tokens.json").exists()


def test_token_create_refuses_bad_agents_and_roles(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    run(db, "init")
    bad_agent = run(db, "token", "create", "al ice", "--role", "writer", ok=False)
    assert bad_agent.returncode == 2
    assert bad_agent.stderr.count("\n") == 1
    bad_role = run(db, "token", "create", "alice", "--role", "root", ok=False)
    assert bad_role.returncode == 2


def test_serve_refuses_a_policy_that_does_not_parse(tmp_path: Path) -> None:
    policy = tmp_path / "bad.cedar"
    policy.write_text("permit(principal, action, resource")
    out = run(tmp_path / "s.db", "serve", "--policy", str(policy), ok=False)
    assert out.returncode == 2
    assert out.stderr.startswith("error: policy does not parse")


def test_serve_refuses_a_bad_agent_id(tmp_path: Path) -> None:
    out = run(tmp_path / "s.db", "serve", "--agent-id", "mallory; rm -rf", ok=False)
    assert out.returncode == 2


def test_host_policy_follows_the_bind_address() -> None:
    loopback = HostPolicy("127.0.0.1", 8765).hosts()
    assert loopback is not None
    assert "127.0.0.1:8765" in loopback
    assert "evil.example:8765" not in loopback

    public = HostPolicy("0.0.0.0", 443, ("memory.example.org",), ("https://app.example",))
    assert public.hosts() == {"memory.example.org"}

    anywhere = HostPolicy("0.0.0.0", 8765)
    assert anywhere.hosts() is None  # bearer auth is the control
    assert not anywhere.checks_hosts


def test_serve_refuses_a_log_that_does_not_exist(tmp_path: Path) -> None:
    """A mistyped --db is refused as every other command refuses it, and nothing is made:
    under an MCP client a server on an empty new file looked like a lost graph."""
    mistyped = tmp_path / "memroy.db"
    for transport in ("--stdio", "--http"):
        done = run(mistyped, "serve", transport, "--port", str(free_port()), ok=False)
        assert done.returncode == 1
        assert done.stderr == f"error: no writegate log at {mistyped} (run `writegate init`)\n"
    assert list(tmp_path.iterdir()) == []


def test_stdio_is_forced_over_a_configured_http(tmp_path: Path) -> None:
    """``--stdio`` wins over ``[serve] http = true``, as every flag wins over the file."""
    db = tmp_path / "s.db"
    run(db, "init")
    config = tmp_path / "writegate.toml"
    config.write_text(f"[serve]\nhttp = true\nport = {free_port()}\n")
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    done = subprocess.run(
        [WRITEGATE, "--db", str(db), "--config", str(config), "serve", "--stdio"],
        input=json.dumps(hello) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [answer] = [json.loads(line) for line in done.stdout.splitlines()]
    assert answer["id"] == 1
    assert answer["result"]["serverInfo"]["name"] == "writegate"


def test_every_serve_option_says_what_it_does() -> None:
    """``serve --help`` is the operator's reference: no option is only a default."""
    for option in serve.params:
        if isinstance(option, click.Option):
            words = re.findall(r"[A-Za-z]+", re.sub(r"\[[^]]*\]", "", option.help or ""))
            assert len(words) >= 3, (option.name, option.help)
