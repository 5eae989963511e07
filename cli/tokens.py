"""``writegate token``: bearer tokens for the HTTP transport, a face over
``gate.server.tokens``. The tokens file is the one ``serve`` reads (``cli.serve.tokens_path``):
beside the log unless told otherwise. It keeps each token's SHA-256, never the token, so
``create`` prints a token once and ``list`` shows ids (the digests), agents, roles and
grants. A token grants the scopes named with ``--scope``, every scope with
``--all-scopes``, else the implicit scope only (``gate.server.tokens`` says why)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from writegate.cli.common import Context, fail, pass_ctx
from writegate.cli.render import counted, format_option
from writegate.cli.serve import ROLES, TOKENS_ENV, tokens_option, tokens_path


@click.group()
def token() -> None:
    """Bearer tokens for the HTTP transport (the file keeps only their SHA-256)."""


def _token_file(ctx: Context, given: Path | None) -> Path:
    """The tokens file of the log at --db, which must exist (or --tokens, explicitly):
    a token made for a log nobody serves is a token nobody can use. The one ``serve``
    reads: ``[serve] tokens`` too."""
    configured = ctx.settings().serve.tokens if ctx.configured() else None
    if (
        given is None
        and not os.environ.get(TOKENS_ENV)
        and configured is None
        and ctx.db_file
        and not ctx.db_file.exists()
    ):
        fail(f"no writegate log at {ctx.db}: pass the --db you serve (or --tokens FILE)", 2)
    return tokens_path(ctx, given, configured)


@token.command("create")
@click.argument("agent")
@click.option(
    "--role", "roles", multiple=True, type=click.Choice(ROLES), required=True, help="Repeatable."
)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    help="A scope of the graph the token grants (repeatable; default: the implicit scope "
    "only, all a log that declares no scopes has).",
)
@click.option(
    "--all-scopes", is_flag=True, help="Grant every scope, those declared later too (operators)."
)
@click.option("--note", default="", help="A reminder of what the token is for.")
@tokens_option
@pass_ctx
def token_create(
    ctx: Context,
    agent: str,
    roles: tuple[str, ...],
    scopes: tuple[str, ...],
    all_scopes: bool,
    note: str,
    tokens_file: Path | None,
) -> None:
    """Create a token for AGENT and print it once (only its hash is stored)."""
    from writegate.gate.server.grants import IMPLICIT
    from writegate.gate.server.tokens import TokenFileError, create_token

    if all_scopes and scopes:
        fail("give --scope or --all-scopes, not both", 2)
    grant = None if all_scopes else frozenset(scopes) if scopes else IMPLICIT
    path = _token_file(ctx, tokens_file)
    if scopes:
        _declared(ctx, scopes)
    try:
        secret = create_token(path, agent, roles, note, grant)
    except TokenFileError as exc:
        fail(str(exc), 2)
    click.echo(secret)
    click.echo(f"stored the hash in {path}; this token is not shown again", err=True)


def _declared(ctx: Context, scopes: tuple[str, ...]) -> None:
    from writegate.cli.common import opened
    from writegate.cli.grants import declared_only

    with opened(ctx, readonly=True) as gate:
        declared_only(gate, scopes)


@token.command("list")
@tokens_option
@format_option("table", "json")
@pass_ctx
def token_list(ctx: Context, tokens_file: Path | None, fmt: str) -> None:
    """The tokens: each one's id (the SHA-256 the file keeps), agent, roles, the scopes it
    grants ("*": every one), when it was created and its note. The tokens themselves are
    not kept, so never shown."""
    from writegate.gate.server.tokens import TokenFileError, list_tokens

    path = _token_file(ctx, tokens_file)
    try:
        records = list_tokens(path)
    except TokenFileError as exc:
        fail(str(exc))
    if fmt == "json":
        click.echo(json.dumps({"tokens": [r.stored() for r in records]}))
        return
    click.echo(f"{counted(len(records), 'token')} in {path}")
    for r in records:  # lines, not a table: a 64-digit id leaves a table no room
        note = f"  ({r.note})" if r.note else ""
        grant = "*" if r.scopes is None else ", ".join(sorted(r.scopes))
        click.echo(
            f"{r.agent}  roles {', '.join(r.roles)}  scopes {grant}  created {r.created_at}{note}"
        )
        click.echo(f"  id {r.sha256}")


@token.command("revoke")
@click.argument("agent")
@tokens_option
@pass_ctx
def token_revoke(ctx: Context, agent: str, tokens_file: Path | None) -> None:
    """Remove every token of AGENT."""
    from writegate.gate.server.tokens import TokenFileError, revoke_agent

    path = _token_file(ctx, tokens_file)
    try:
        removed = revoke_agent(path, agent)
    except TokenFileError as exc:
        fail(str(exc))
    if not removed:
        fail(f"no token for agent {agent!r} in {path}")
    click.echo(f"revoked {counted(removed, 'token')} of {agent}")
