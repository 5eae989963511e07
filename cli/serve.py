"""``writegate serve`` and ``writegate token``: the MCP server and its credentials.

Thin faces over ``gate.server``: ``serve`` builds a ``WritegateServer`` over the
same ``Gate`` the other commands use; ``token create`` calls ``create_token``.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import click

from writegate.cli.common import Context, fail, opened, pass_ctx
from writegate.gate.identifiers import is_agent_id
from writegate.gate.server.app import HostPolicy, WritegateServer, serve_http
from writegate.gate.server.policy import ROLES, Policy, PolicyError, Principal
from writegate.gate.server.tokens import TokenFileError, TokenStore, create_token, revoke_agent

AGENT_ENV = "WRITEGATE_AGENT_ID"
ROLES_ENV = "WRITEGATE_AGENT_ROLES"
TOKENS_ENV = "WRITEGATE_TOKENS"


def tokens_path(ctx: Context, given: Path | None) -> Path:
    """The tokens file: ``--tokens``, env WRITEGATE_TOKENS, else beside the log."""
    if given is not None:
        return given
    if env := os.environ.get(TOKENS_ENV):
        return Path(env)
    return ctx.db.with_name(ctx.db.name + ".tokens.json")


tokens_option = click.option(
    "--tokens",
    "tokens_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"Tokens file (env {TOKENS_ENV}; default: <db>.tokens.json).",
)


@click.command()
@click.option("--http", "use_http", is_flag=True, help="Serve Streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
@click.option(
    "--public-host",
    "public_hosts",
    multiple=True,
    help="Host header value(s) clients use when binding a non-loopback address.",
)
@click.option(
    "--allow-origin", "origins", multiple=True, help="Browser Origin(s) allowed (default: none)."
)
@tokens_option
@click.option(
    "--agent-id",
    envvar=AGENT_ENV,
    default="stdio-agent",
    show_default=True,
    help=f"The agent a stdio client is (env {AGENT_ENV}); over HTTP the token says.",
)
@click.option(
    "--role",
    "roles",
    multiple=True,
    type=click.Choice(ROLES),
    help=f"Role(s) of the stdio agent (env {ROLES_ENV}, comma-separated; default writer).",
)
@click.option(
    "--policy",
    "policy_files",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Cedar policy file(s) replacing the default roles (repeatable; joined in order).",
)
@pass_ctx
def serve(
    ctx: Context,
    use_http: bool,
    host: str,
    port: int,
    public_hosts: tuple[str, ...],
    origins: tuple[str, ...],
    tokens_file: Path | None,
    agent_id: str,
    roles: tuple[str, ...],
    policy_files: tuple[Path, ...],
) -> None:
    """Serve the gate to agents over MCP (stdio by default, or --http with bearer tokens)."""
    if not is_agent_id(agent_id):
        fail(f"--agent-id {agent_id!r} must be 1-64 letters, digits, '_', '-' or '.'", 2)
    if not roles:
        env_roles = os.environ.get(ROLES_ENV, "")
        roles = tuple(r.strip() for r in env_roles.split(",") if r.strip()) or ("writer",)
        if unknown := [r for r in roles if r not in ROLES]:
            fail(f"{ROLES_ENV} names unknown role(s) {unknown}; use some of {list(ROLES)}", 2)
    try:
        policy = Policy.load(policy_files)
    except PolicyError as exc:
        fail(str(exc), 2)
    with opened(ctx, create=True) as gate:
        server = WritegateServer(
            gate, policy, stdio_principal=Principal(agent_id, roles, transport="stdio")
        )
        if not use_http:
            anyio.run(server.run_stdio)
            return
        path = tokens_path(ctx, tokens_file)
        try:
            tokens = TokenStore(path)
        except TokenFileError as exc:
            fail(str(exc))
        click.echo(f"writegate MCP on http://{host}:{port}/mcp (tokens: {path})", err=True)
        serve_http(server, tokens, HostPolicy(host, port, public_hosts, origins))


@click.group()
def token() -> None:
    """Bearer tokens for the HTTP transport (the file keeps only their SHA-256)."""


@token.command("create")
@click.argument("agent")
@click.option(
    "--role", "roles", multiple=True, type=click.Choice(ROLES), required=True, help="Repeatable."
)
@click.option("--note", default="", help="A reminder of what the token is for.")
@tokens_option
@pass_ctx
def token_create(
    ctx: Context, agent: str, roles: tuple[str, ...], note: str, tokens_file: Path | None
) -> None:
    """Create a token for AGENT and print it once (only its hash is stored)."""
    path = tokens_path(ctx, tokens_file)
    try:
        secret = create_token(path, agent, roles, note)
    except TokenFileError as exc:
        fail(str(exc), 2)
    click.echo(secret)
    click.echo(f"stored the hash in {path}; this token is not shown again", err=True)


@token.command("revoke")
@click.argument("agent")
@tokens_option
@pass_ctx
def token_revoke(ctx: Context, agent: str, tokens_file: Path | None) -> None:
    """Remove every token of AGENT."""
    path = tokens_path(ctx, tokens_file)
    try:
        removed = revoke_agent(path, agent)
    except TokenFileError as exc:
        fail(str(exc))
    if not removed:
        fail(f"no token for agent {agent!r} in {path}")
    click.echo(f"revoked {removed} token(s) of {agent}")
