"""The ``writegate`` command: a thin face over the Python API.

Every command calls the ``Gate`` / ``EventLog`` method of the same name; the CLI
only parses arguments and prints. Errors are one line on stderr and a non-zero
exit: 1 for a rejected write or a failed check, 2 for usage mistakes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import click
import orjson

from writegate.cli.audit import audit, report, show
from writegate.cli.common import (
    DB_ENV,
    Context,
    emit_result,
    endpoint_options,
    fail,
    opened,
    parse_assignments,
    parse_time,
    pass_ctx,
)
from writegate.cli.config import GraphConfig
from writegate.cli.imports import import_group, schema_import_memorymesh
from writegate.cli.projections import (
    export_group,
    follow_command,
    projection_checkpoints,
    rebuild_command,
    replay_command,
    status_command,
)
from writegate.cli.serve import serve, token
from writegate.eventlog import Event
from writegate.gate.schema import SchemaDocumentError, SchemaSourceUnavailable, load_document
from writegate.gate.schema.graph import GraphSchemaSource
from writegate.gate.schema.registry import relationship_types
from writegate.projections.vocabulary import node_identity, node_stream


def provenance_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The provenance every write declares (the gate computes the rest)."""
    for option in reversed(
        [
            click.option("--source", required=True, help="Where the claim came from."),
            click.option(
                "--method",
                "extraction_method",
                required=True,
                help="Extraction method (default formula: api, parsed, manual, llm).",
            ),
            click.option("--reliability", type=float, default=0.5, show_default=True),
            click.option(
                "--if-version", type=int, help="Reject unless the target is at this version."
            ),
            click.option("--idempotency-key", help="Retrying with the same key appends nothing."),
        ]
    ):
        f = option(f)
    return f


def _endpoints(from_label: str, from_keys: Any, to_label: str, to_keys: Any) -> dict[str, Any]:
    return {
        "from_label": from_label,
        "from_keys": parse_assignments(from_keys, "--from-key"),
        "to_label": to_label,
        "to_keys": parse_assignments(to_keys, "--to-key"),
    }


def _write_args(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


# -- the command tree --------------------------------------------------------------------


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="writegate")
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar=DB_ENV,
    default="writegate.db",
    show_default=True,
    help=f"The log file (env {DB_ENV}).",
)
@click.option(
    "--schema-file",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="WRITEGATE_SCHEMA_FILE",
    help="Check writes against this file instead of the schema published in the log.",
)
@click.option("--as", "operator", help="Operator name recorded as the actor (default: OS user).")
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="WRITEGATE_CONFIG",
    help="Projections and schema source (default: ./writegate.toml if present).",
)
@click.pass_context
def cli(
    click_ctx: click.Context,
    db: Path,
    schema_file: Path | None,
    operator: str | None,
    config: Path | None,
) -> None:
    """writegate: schema-checked, provenance-stamped writes to a shared graph memory."""
    click_ctx.obj = Context(db, schema_file, operator, config)


@cli.command()
@click.option("--schema", "schema_path", type=click.Path(dir_okay=False, path_type=Path))
@pass_ctx
def init(ctx: Context, schema_path: Path | None) -> None:
    """Create the log (if missing) and optionally publish a schema to it."""
    with opened(ctx, create=True) as gate:
        click.echo(f"log ready at {ctx.db} (head seq {gate.log.head()[0]})")
        if schema_path is not None:
            emit_result(gate.publish_schema(schema_path, actor=ctx.actor))


@cli.group()
def schema() -> None:
    """Publish and inspect schemas."""


@schema.command("publish")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@pass_ctx
def schema_publish(ctx: Context, path: Path) -> None:
    """Validate a YAML/JSON schema and append it to the log."""
    with opened(ctx) as gate:
        emit_result(gate.publish_schema(path, actor=ctx.actor))


@schema.command("push-graph")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--projection",
    default="graph",
    show_default=True,
    help="The graph projection whose server holds the registry.",
)
@pass_ctx
def schema_push_graph(ctx: Context, path: Path, projection: str) -> None:
    """Write a schema document into the graph as seed 000's (:Schema) registry nodes."""
    settings = ctx.settings()
    config = settings.projections.get(projection)
    if not isinstance(config, GraphConfig):
        fail(f"{projection!r} is not a configured graph projection", 2)
    try:
        document = load_document(path)
        GraphSchemaSource(config.target()).publish(document)
    except SchemaDocumentError as exc:
        fail(str(exc))
    except Exception as exc:  # the driver's connection errors
        fail(f"cannot write to {config.describe()}: {exc}")
    click.echo(
        f"{len(document.nodes)} labels, {len(document.relationships)} relationship types "
        f"written to {config.describe()}"
    )


@schema.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print the whole document as JSON.")
@pass_ctx
def schema_show(ctx: Context, as_json: bool) -> None:
    """Show the schema writes are checked against."""
    with opened(ctx) as gate:
        try:
            snapshot = gate.current_schema()
        except (SchemaSourceUnavailable, SchemaDocumentError) as exc:
            fail(f"SCHEMA_SOURCE_UNAVAILABLE: {exc}")
        registry = snapshot.registry
        document = getattr(registry, "document", None)
        if as_json and document is not None:
            body = document.model_dump(mode="json", by_alias=True)
            click.echo(json.dumps({"version": snapshot.version, "document": body}, indent=2))
            return
        click.echo(f"schema {snapshot.version} from {gate.schema.source.describe()}")
        click.echo(f"unknown-label policy: {gate.unknown_label_policy(snapshot)}")
        click.echo(f"fallback label: {registry.fallback_label() or '(none)'}")
        for label in registry.all_canonical_labels():
            entry = registry.get_entry(label)
            assert entry is not None
            keys = ",".join(entry.merge_keys) or "-"
            aliases = ",".join(entry.remaps_from) or "-"
            click.echo(
                f"  :{label}  keys={keys}  required={','.join(entry.required_properties) or '-'}"
                f"  remaps_from={aliases}"
            )
        for rtype in relationship_types(registry):
            rel = registry.get_relationship_type(rtype)
            assert rel is not None
            ends = f"{'|'.join(rel.from_labels) or '*'} -> {'|'.join(rel.to_labels) or '*'}"
            click.echo(f"  [{rtype}]  {ends}  remaps_from={','.join(rel.remaps_from) or '-'}")


@cli.group()
def write() -> None:
    """Write through the gate as the operator."""


@write.command("node")
@click.argument("label")
@click.option("-k", "--key", "keys", multiple=True, help="Merge key NAME=VALUE (repeatable).")
@click.option("-p", "--prop", "props", multiple=True, help="Property NAME=VALUE (repeatable).")
@provenance_options
@pass_ctx
def write_node(
    ctx: Context, /, label: str, keys: tuple[str, ...], props: tuple[str, ...], **prov: Any
) -> None:
    """Write (merge) one node. Values parse as JSON when they can: age=30, tags='["a"]'."""
    with opened(ctx) as gate:
        emit_result(
            gate.write_node(
                actor=ctx.actor,
                label=label,
                merge_keys=parse_assignments(keys, "--key"),
                properties=parse_assignments(props, "--prop"),
                **_write_args(**prov),
            )
        )


@write.command("relationship")
@click.argument("rtype", metavar="TYPE")
@endpoint_options
@click.option("-p", "--prop", "props", multiple=True, help="Property NAME=VALUE (repeatable).")
@click.option("--merge-endpoints", is_flag=True, help="Create missing endpoints as stubs.")
@provenance_options
@pass_ctx
def write_relationship(
    ctx: Context,
    /,
    rtype: str,
    from_label: str,
    from_keys: tuple[str, ...],
    to_label: str,
    to_keys: tuple[str, ...],
    props: tuple[str, ...],
    merge_endpoints: bool,
    **prov: Any,
) -> None:
    """Write (merge) one relationship between two nodes."""
    with opened(ctx) as gate:
        emit_result(
            gate.write_relationship(
                actor=ctx.actor,
                type=rtype,
                **_endpoints(from_label, from_keys, to_label, to_keys),
                properties=parse_assignments(props, "--prop"),
                endpoint_policy="merge_endpoints" if merge_endpoints else "fail_if_missing",
                **_write_args(**prov),
            )
        )


@write.command("batch")
@click.argument("path", type=click.File("rb"))
@click.option("--idempotency-key", help="Retrying with the same key appends nothing.")
@pass_ctx
def write_batch(ctx: Context, path: Any, idempotency_key: str | None) -> None:
    """Write a JSON array (or JSON Lines) of {"op": ..., ...} items as one atomic batch."""
    text = path.read()
    try:
        stripped = text.lstrip()
        if stripped.startswith(b"["):
            items = orjson.loads(text)
        else:
            items = [orjson.loads(line) for line in text.splitlines() if line.strip()]
    except orjson.JSONDecodeError as exc:
        fail(f"{path.name}: not JSON or JSON Lines: {exc}", 2)
    with opened(ctx) as gate:
        emit_result(gate.write_batch(items=items, idempotency_key=idempotency_key, actor=ctx.actor))


@cli.group()
def delete() -> None:
    """Delete through the gate (deletions are events too; history keeps everything)."""


@delete.command("node")
@click.argument("label")
@click.option("-k", "--key", "keys", multiple=True, help="Merge key NAME=VALUE (repeatable).")
@click.option("--detach", is_flag=True, help="Also delete the node's relationships.")
@provenance_options
@pass_ctx
def delete_node(
    ctx: Context, /, label: str, keys: tuple[str, ...], detach: bool, **prov: Any
) -> None:
    """Delete one node."""
    with opened(ctx) as gate:
        emit_result(
            gate.delete_node(
                actor=ctx.actor,
                label=label,
                merge_keys=parse_assignments(keys, "--key"),
                detach=detach,
                **_write_args(**prov),
            )
        )


@delete.command("relationship")
@click.argument("rtype", metavar="TYPE")
@endpoint_options
@provenance_options
@pass_ctx
def delete_relationship(
    ctx: Context,
    /,
    rtype: str,
    from_label: str,
    from_keys: tuple[str, ...],
    to_label: str,
    to_keys: tuple[str, ...],
    **prov: Any,
) -> None:
    """Delete one relationship."""
    with opened(ctx) as gate:
        emit_result(
            gate.delete_relationship(
                actor=ctx.actor,
                type=rtype,
                **_endpoints(from_label, from_keys, to_label, to_keys),
                **_write_args(**prov),
            )
        )


@cli.command()
@click.option("--after", "after_seq", type=int, default=0, help="Start after this seq.")
@click.option("--to-seq", type=int, help="Stop at this seq.")
@click.option("--limit", type=click.IntRange(1, 100_000), default=50, show_default=True)
@click.option("--agent", help="Only events by this agent.")
@click.option("--type", "types", multiple=True, help="Only events of this type (repeatable).")
@click.option(
    "--node",
    nargs=1,
    help='Only events touching node LABEL{json keys}, e.g. \'Person{"name":"Alice"}\'.',
)
@click.option("--since", callback=parse_time, help="ISO 8601 time (UTC if no offset).")
@click.option("--until", callback=parse_time)
@click.option("--json", "as_json", is_flag=True, help="One JSON event per line.")
@pass_ctx
def log(
    ctx: Context,
    after_seq: int,
    to_seq: int | None,
    limit: int,
    agent: str | None,
    types: tuple[str, ...],
    node: str | None,
    since: datetime | None,
    until: datetime | None,
    as_json: bool,
) -> None:
    """List events, oldest first, filtered and paginated (continue with --after)."""
    stream = node_stream(_node_argument(node)) if node else None
    with opened(ctx) as gate:
        page = gate.log.read(
            after_seq=after_seq,
            to_seq=to_seq,
            limit=limit,
            agent=agent,
            types=list(types) or None,
            stream=stream,
            since=since,
            until=until,
        )
    for event in page.events:
        click.echo(
            orjson.dumps(event.model_dump(mode="json")).decode() if as_json else _line(event)
        )
    if page.next_after is not None and not as_json:
        click.echo(f"… more: --after {page.next_after}", err=True)


def _node_argument(text: str) -> str:
    label, brace, keys = text.partition("{")
    try:
        return node_identity(label.removeprefix(":"), orjson.loads(brace + keys))
    except orjson.JSONDecodeError:
        fail(f"--node {text!r} is not LABEL{{json keys}}", 2)


def _line(event: Event) -> str:
    payload = event.payload
    subject = (
        payload.get("node", {}).get("identity")
        or payload.get("identity")
        or payload.get("version")
        or ""
    )
    confidence = (event.provenance or {}).get("confidence")
    extra = f"  confidence={confidence}" if confidence is not None else ""
    when = event.occurred_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{event.seq:>6}  {when}  {event.actor.agent:<20}  {event.type:<20}  {subject}{extra}"


@cli.command()
@click.option("--anchor", is_flag=True, help="Print the head as SEQ:HASH to record elsewhere.")
@click.option(
    "--expect-head", metavar="SEQ:HASH", help="Fail unless history up to SEQ is unchanged."
)
@pass_ctx
def verify(ctx: Context, anchor: bool, expect_head: str | None) -> None:
    """Check the hash chain, the append-only triggers, the state read model against a replay
    and every configured projection's checkpoint; exit non-zero naming the first failure."""
    expected = _anchor_argument(expect_head) if expect_head else None
    settings = ctx.settings()
    with opened(ctx) as gate:
        checkpoints: dict[str, int] = {}
        for row in projection_checkpoints(settings, gate.log):
            if row.checkpoint is None:
                fail(f"projection {row.name} could not be read: {row.error}")
            checkpoints[row.name] = row.checkpoint
        report = gate.verify(checkpoints=checkpoints, expect_head=expected)
        head = gate.log.head()
    for check in report.checks:
        click.echo(f"{'ok  ' if check.ok else 'FAIL'}  {check.name}: {check.detail}")
    if (failure := report.first_failure) is not None:
        fail(f"{failure.name}: {failure.detail}")
    if anchor:
        click.echo(f"{head[0]}:{head[1]}")


def _anchor_argument(text: str) -> tuple[int, str]:
    seq, sep, digest = text.partition(":")
    if not sep or not seq.isdigit() or len(digest) != 64:
        fail(f"--expect-head {text!r} is not SEQ:HASH (as printed by verify --anchor)", 2)
    return int(seq), digest


cli.add_command(serve)
cli.add_command(token)
cli.add_command(audit)
cli.add_command(show)
cli.add_command(report)
cli.add_command(import_group)
schema.add_command(schema_import_memorymesh)
for command in (status_command, replay_command, rebuild_command, follow_command, export_group):
    cli.add_command(command)


def main() -> None:
    try:
        cli(standalone_mode=True)
    except sqlite3.DatabaseError as exc:  # a locked, corrupt or foreign file, said plainly
        fail(f"database error: {exc}")
