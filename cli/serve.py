"""``writegate serve``: the MCP server, and where its credentials live (``writegate token``,
in ``cli.tokens``, manages them).

A thin face over ``gate.server``: ``serve`` builds a ``WritegateServer`` over the same
``Gate`` the other commands use. Every ``serve``
option can also come from ``[serve]`` in ``writegate.toml`` or ``WRITEGATE_SERVE__<OPTION>``
(a flag given on the command line wins); the tokens file lives beside the log unless
told otherwise, and ``serve`` says which one it reads.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from writegate.cli.common import Context, Kind, fail, opened, pass_ctx, say_through
from writegate.cli.render import counted

if TYPE_CHECKING:
    from writegate.gate import Gate
    from writegate.gate.jobs import Jobs

AGENT_ENV = "WRITEGATE_AGENT_ID"
ROLES_ENV = "WRITEGATE_AGENT_ROLES"
TOKENS_ENV = "WRITEGATE_TOKENS"
ROLES = ("writer", "reader", "auditor", "reviewer", "admin")
_LEVELS: dict[Kind, int] = {"error": logging.ERROR, "note": logging.WARNING}


def tokens_path(ctx: Context, given: Path | None, configured: Path | None = None) -> Path:
    """The tokens file: ``--tokens``, env WRITEGATE_TOKENS, ``[serve] tokens``, else beside
    the log (``<db>.tokens.json``): one home per log, so tokens and log cannot drift apart."""
    if given is not None:
        return given
    if env := os.environ.get(TOKENS_ENV):
        return Path(env)
    if configured is not None:
        return configured
    if ctx.db_file is None:
        fail(
            f"a log on PostgreSQL has no file to keep tokens beside: pass --tokens FILE "
            f"(or env {TOKENS_ENV})",
            2,
        )
    return ctx.db_file.with_name(ctx.db_file.name + ".tokens.json")


tokens_option = click.option(
    "--tokens",
    "tokens_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"Tokens file (env {TOKENS_ENV}; default: <db>.tokens.json beside the log).",
)


@click.command()
@click.option(
    "--http/--stdio",
    "use_http",
    default=None,
    help="Serve Streamable HTTP with bearer tokens, or MCP over stdin/stdout (either wins "
    "over [serve] http) [default: stdio].",
)
@click.option("--host", help="HTTP bind address [default: 127.0.0.1].")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    help="The HTTP port to listen on; 0 takes a free one, named when serving [default: 8765].",
)
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
    help=f"The agent a stdio client is (env {AGENT_ENV}) [default: stdio-agent].",
)
@click.option(
    "--role",
    "roles",
    multiple=True,
    type=click.Choice(ROLES),
    help=f"Role(s) of the stdio agent (env {ROLES_ENV}, comma-separated) [default: writer].",
)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    help="A scope of the graph the stdio agent may use (repeatable) [default: every scope, "
    "as the operator's own process].",
)
@click.option(
    "--policy",
    "policy_files",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Cedar policy file(s) replacing the default roles (repeatable; joined in order).",
)
@click.option(
    "--tools",
    type=click.Choice(("all", "generic", "labels")),
    help="Which write tools agents see: generic (write_node, write_relationship, ...; each "
    "label's properties from get_schema), labels (add_/update_/delete_<label> for each "
    "schema label), or all; read and audit tools are always offered [default: generic].",
)
@click.option(
    "--output-schemas/--no-output-schemas",
    default=None,
    help="Publish each tool's outputSchema (its result's fields by type) for clients that "
    "validate results; every result is structured JSON either way [default: off].",
)
@click.option(
    "--log-level",
    type=click.Choice(("debug", "info", "warning", "error")),
    help="How much the server logs on stderr: error (internal failures, with their "
    "traceback), warning (and what needs an operator), info (and every refused write: agent "
    "and error code), debug [default: warning].",
)
@click.option(
    "--log-format",
    type=click.Choice(("plain", "json")),
    help="Log lines as text, or each a JSON object (for a log collector) [default: plain].",
)
@click.option("--access-log", is_flag=True, default=None, help="Log every HTTP request.")
@click.option("--metrics", is_flag=True, default=None, help="Serve Prometheus /metrics (HTTP).")
@click.option(
    "--session-idle-timeout",
    type=click.FloatRange(min=1),
    help="Seconds an HTTP session may go without a request before the server forgets it "
    "(its client must initialize again; one listening for notifications is never idle) "
    "[default: 300].",
)
@click.option(
    "--rejections-max-age",
    type=click.FloatRange(min=0, min_open=True),
    metavar="DAYS",
    help="Drop refused requests recorded for auditors once older than this many days "
    "[default: [rejections] max_age_days, else kept until the count cap].",
)
@pass_ctx
def serve(ctx: Context, /, **flags: Any) -> None:
    """Serve the gate to agents over MCP (stdio by default, or --http with bearer tokens)."""
    from writegate.gate.identifiers import is_agent_id
    from writegate.gate.server.grants import valid_scope
    from writegate.gate.server.observe import Metrics, configure_logging, say
    from writegate.gate.server.policy import Policy, PolicyError, Principal

    options = _options(ctx, flags)
    if not is_agent_id(options["agent_id"]):
        fail(f"--agent-id {options['agent_id']!r} must be 1-64 letters, digits, '_', '-' or '.'", 2)
    if bad := [s for s in options["scopes"] if not valid_scope(s)]:
        fail(f"--scope {bad[0]!r} is not a scope name (letters, digits and _)", 2)
    try:
        policy = Policy.load(options["policy"])
    except PolicyError as exc:
        fail(str(exc), 2)
    configure_logging(options["log_level"], options["log_format"])
    say_through(lambda message, kind: say(message, level=_LEVELS[kind]))
    _check_embedder(ctx)
    sock = _bind(options) if options["http"] else None  # a taken port: one line, no banner
    with opened(ctx) as gate:  # a mistyped --db is refused, never served as a new log
        from writegate.cli.grants import declared_only
        from writegate.gate.rejection_records import max_age_of

        declared_only(gate, options["scopes"])  # a mistyped --scope would grant nothing
        try:
            if (days := flags["rejections_max_age"]) is not None:
                gate.rejections.max_age = max_age_of(days, "--rejections-max-age")
        except ValueError as exc:
            fail(str(exc), 2)
        _warn_without_schema(gate, ctx)
        from writegate.gate.server.app import WritegateServer

        metrics = Metrics(_checkpoints(ctx, gate)) if options["metrics"] else None
        server = WritegateServer(
            gate,
            policy,
            stdio_principal=Principal(
                options["agent_id"],
                options["roles"],
                transport="stdio",
                scopes=frozenset(options["scopes"]) if options["scopes"] else None,
            ),
            tools=options["tools"],
            output_schemas=options["output_schemas"],
            metrics=metrics,
            jobs=_jobs(ctx, gate),
            disabled_scopes=options["disabled_scopes"],
        )
        if sock is None:
            _serve_stdio(server, options)
            return
        from writegate.gate.reads.when import warm

        # a server of many clients loads what a time in a question needs beside its first
        # calls (stdio serves one client on one thread: its first such question waits)
        threading.Thread(target=warm, name="writegate-warm", daemon=True).start()
        _serve_http(ctx, server, sock, options)


def _check_embedder(ctx: Context) -> None:
    """A configured embedder that cannot be had stops the server at start, one line naming
    it: found at a question instead, every ``graph_query`` would be refused. Its model still
    loads at the first question (seconds for ``minilm``), not here."""
    from writegate.projections.vectors.settings import EmbedderUnavailable

    embeddings = ctx.settings().embeddings if ctx.configured() else None
    if embeddings is not None:
        try:
            embeddings.embedder()
        except EmbedderUnavailable as exc:
            fail(f"[embeddings] {exc}", 2)


def _jobs(ctx: Context, gate: Gate) -> Jobs:
    """What job_start may run here: rebuild and replay of the configured projections,
    backup, copy and import of the served log."""
    from writegate.cli.job_kinds import kinds
    from writegate.cli.log_jobs import log_kinds
    from writegate.gate.jobs import Jobs
    from writegate.gate.server.observe import say

    projections = kinds(ctx.settings(), gate) if ctx.configured() else {}
    jobs = Jobs(gate.log, {**projections, **log_kinds(gate)})
    if not gate.log.readonly:  # agents' jobs a server that died left interrupted go on here
        for job in jobs.resume_interrupted():
            where = f"from {job.done:,} of {job.total:,}"
            say(f"resumed job {job.id} ({job.kind} {job.target}) {where}")
    return jobs


def _options(ctx: Context, flags: dict[str, Any]) -> dict[str, Any]:
    """Flags over ``[serve]`` settings over defaults (settings also read the environment)."""
    from writegate.cli.config import ServeSettings

    configured = ctx.settings().serve if ctx.configured() else ServeSettings()
    roles = flags["roles"] or _env_roles() or tuple(configured.roles)
    return {
        "http": flags["use_http"] if flags["use_http"] is not None else configured.http,
        "host": flags["host"] or configured.host,
        "port": configured.port if flags["port"] is None else flags["port"],
        "public_hosts": flags["public_hosts"] or tuple(configured.public_hosts),
        "origins": flags["origins"] or tuple(configured.allow_origins),
        "tokens": tokens_path(ctx, flags["tokens_file"], configured.tokens),
        "agent_id": flags["agent_id"] or configured.agent_id,
        "roles": roles,
        "scopes": flags["scopes"] or tuple(configured.scopes),
        "disabled_scopes": frozenset(ctx.settings().scopes.disabled if ctx.configured() else ()),
        "policy": flags["policy_files"] or tuple(configured.policy),
        "tools": flags["tools"] or configured.tools,
        "output_schemas": (
            configured.output_schemas
            if flags["output_schemas"] is None
            else flags["output_schemas"]
        ),
        "log_level": flags["log_level"] or configured.log_level,
        "log_format": flags["log_format"] or configured.log_format,
        "access_log": flags["access_log"] or configured.access_log,
        "metrics": flags["metrics"] or configured.metrics,
        "session_idle_timeout": flags["session_idle_timeout"] or configured.session_idle_timeout,
        "oauth": configured.oauth,
    }


def _env_roles() -> tuple[str, ...]:
    roles = tuple(r.strip() for r in os.environ.get(ROLES_ENV, "").split(",") if r.strip())
    if unknown := [r for r in roles if r not in ROLES]:
        fail(f"{ROLES_ENV} names unknown role(s) {unknown}; use some of {list(ROLES)}", 2)
    return roles


def _bind(options: dict[str, Any]) -> Any:
    from writegate.gate.server.http import PortTaken, bind

    try:
        sock = bind(options["host"], options["port"])
    except PortTaken as exc:
        fail(str(exc))
    options["port"] = sock.getsockname()[1]  # port 0: the one the system chose, announced
    return sock


def _warn_without_schema(gate: Any, ctx: Context) -> None:
    from writegate.gate.schema import SchemaSourceUnavailable
    from writegate.gate.server.observe import say

    try:
        gate.current_schema()
    except SchemaSourceUnavailable as exc:
        say(
            f"no schema to check writes against ({exc}); every write is refused until one "
            f"is published: writegate --db {ctx.where} schema publish FILE",
            level=logging.WARNING,
        )


def _checkpoints(ctx: Context, gate: Any) -> Any:
    """The projections' checkpoints for /metrics' lag (none configured: no lag shown)."""
    settings = ctx.settings() if ctx.configured() else None
    if settings is None or not settings.projections:
        return None
    from writegate.cli.stores import checkpoint_of
    from writegate.gate.server.observe import Checkpoints

    return Checkpoints(
        {name: checkpoint_of(settings, name, gate.log) for name in settings.projections}
    )


def _serve_stdio(server: Any, options: dict[str, Any]) -> None:
    """One client on stdin/stdout. Started by hand in a terminal, it says what it waits for
    (an MCP client would say nothing of it), and Ctrl-C stops it as a request to stop."""
    import anyio

    from writegate.gate.server.observe import say
    from writegate.gate.server.stdio import run_stdio, terminal_banner

    if sys.stdin.isatty():
        say(terminal_banner(options["agent_id"], options["roles"]))
    with suppress(KeyboardInterrupt):
        anyio.run(run_stdio, server.server)


def _serve_http(ctx: Context, server: Any, sock: Any, options: dict[str, Any]) -> None:
    from writegate.gate.desk import Desk, desk_routes
    from writegate.gate.desk.sessions import bearer
    from writegate.gate.server.http import (
        LOOPBACK,
        HostPolicy,
        Probes,
        http_app,
        oauth_resource,
        serve,
    )
    from writegate.gate.server.oauth import OAuthVerifier
    from writegate.gate.server.observe import say
    from writegate.gate.server.tokens import TokenFileError, TokenStore

    try:
        tokens = TokenStore(options["tokens"])
    except TokenFileError as exc:
        fail(str(exc))
    agents = tokens.agents()
    hosts = HostPolicy(
        options["host"], options["port"], options["public_hosts"], options["origins"]
    )
    metrics = server.metrics if options["metrics"] else None
    probes = Probes(
        health=server.health,
        metrics=(lambda: metrics.exposition(lambda: server.gate.log.head()[0]))
        if metrics
        else None,
    )
    oauth = options["oauth"]
    if oauth is not None and oauth.resource is None and options["host"] not in LOOPBACK:
        fail("[serve.oauth] needs resource (this server's public URL of /mcp) off loopback")
    try:
        verifier = (
            tokens if oauth is None else OAuthVerifier(oauth, oauth_resource(oauth, hosts), tokens)
        )
        app = http_app(
            server.server.streamable_http_app,
            tokens,
            hosts,
            probes,
            max_body=server.gate.limits().max_request_bytes,
            oauth=oauth,
            session_idle_timeout=options["session_idle_timeout"],
            desk=desk_routes(Desk.signed(server, bearer(verifier), _checkpoints(ctx, server.gate))),
        )
    except (OSError, ValueError) as exc:  # [serve.oauth]'s key file unreadable or too short
        fail(f"[serve.oauth]: {exc}")
    say(
        f"writegate MCP on http://{options['host']}:{options['port']}/mcp; tokens: "
        f"{options['tokens']} ({counted(len(agents), 'agent')})"
    )
    if oauth is not None:
        say(f"OAuth: JWTs from {oauth.issuer} for {oauth_resource(oauth, hosts)} accepted too")
    elif not agents:
        say(
            f"no agent holds a token, so every request is refused (401): "
            f"writegate --db {ctx.where} token create AGENT --role writer",
            level=logging.WARNING,
        )
    serve(app, sock, access_log=options["access_log"])
