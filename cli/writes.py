"""``writegate init``, ``write …`` and ``delete …``: the gate's write operations as the operator.

Each command calls the ``Gate`` method of the same name with the operator as the actor
(``--as`` or the OS user), its arguments those of the MCP tool of the same name, and
prints what was written (``cli.written``: a summary, or ``--format json``), or the
rejection as one line. Nodes are named as ``cli.nodes`` says: ``Person:name=Ada``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from writegate.cli.common import (
    Context,
    emit_result,
    fail,
    opened,
    parse_assignments,
    pass_ctx,
)
from writegate.cli.declared import node_types, relationship_types
from writegate.cli.nodes import NodeName, labelled, parse_node, relationship, relationship_arguments
from writegate.cli.render import counted, did_you_mean
from writegate.cli.write_options import cites_option, provenance_options, valid_time_options
from writegate.cli.written import emit_written, write_format

if TYPE_CHECKING:
    from writegate.gate import BatchResult, Gate, Rejected


def _endpoints(start: NodeName, end: NodeName) -> dict[str, Any]:
    return {
        "from_label": start.label,
        "from_keys": start.keys,
        "to_label": end.label,
        "to_keys": end.keys,
    }


def _node(node: str, keys: tuple[str, ...], command: str) -> NodeName:
    """NODE, or the old ``LABEL -k KEY=VALUE`` (with a deprecation line)."""
    return labelled(node, keys, command, "-k") if keys else parse_node(node)


node_argument = click.argument("node", metavar="NODE")
old_keys_option = click.option("-k", "--key", "keys", multiple=True, hidden=True)


def _write_args(**values: Any) -> dict[str, Any]:
    """The options given (none left out; no --observation: no observations)."""
    return {k: v for k, v in values.items() if v is not None and v != ()}


def _fallback_note(gate: Gate, given: str, written: str) -> None:
    """Say so when a label the schema does not know was written as the fallback label:
    the write is accepted (remap mode), but a typo should not pass in silence."""
    from writegate.gate.schema import SchemaSourceUnavailable

    try:
        registry = gate.current_schema().registry
    except SchemaSourceUnavailable:
        return
    name, fallback = given.removeprefix(":"), registry.fallback_label()
    if written != fallback or name == fallback:
        return
    if registry.get_entry(name) is not None or registry.remap_target(name) is not None:
        return  # a declared label, or a synonym that happens to map to the fallback
    names: dict[str, str] = {}
    for label in registry.all_canonical_labels():
        names[label] = label
        entry = registry.get_entry(label)
        for alias in entry.remaps_from if entry else ():
            names.setdefault(alias.removeprefix(":"), label)
    click.echo(
        f"note: {name} is not a label of the schema, so it was written as {fallback} "
        f"(the fallback label){did_you_mean(name, names)}",
        err=True,
    )


@click.command()
@click.option(
    "--schema",
    "schema_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A schema file (YAML or JSON) to publish to the log once it is ready.",
)
@write_format
@pass_ctx
def init(ctx: Context, schema_path: Path | None, fmt: str, as_json: bool) -> None:
    """Create the log (if missing) and optionally publish a schema to it."""
    from writegate.cli.schema import publish, read_document
    from writegate.gate import Rejected, dump

    document = read_document(schema_path, "SCHEMA_INVALID: ") if schema_path else None
    machine = fmt == "json" or as_json
    with opened(ctx, create=True) as gate:
        gate.rejections.install()  # now, so a server's database role needs no CREATE right
        head = gate.log.head()[0]
        if not machine:
            click.echo(f"log ready at {ctx.where} (head seq {head})")
        published = gate.publish_schema(document, actor=ctx.actor) if document else None
    if not machine:
        if published is not None:
            publish(published, fmt)
        return
    if isinstance(published, Rejected):
        emit_result(published)  # the tool's shape, and exit 1
    schema = None if published is None else dump(published)
    ready = {"log": ctx.where, "head_seq": head, "schema": schema}
    click.echo(orjson.dumps(ready).decode())  # one value, one line


@click.group()
def write() -> None:
    """Write through the gate as the operator."""


@write.command("node")
@node_argument
@old_keys_option
@click.option("-p", "--prop", "props", multiple=True, help="Property NAME=VALUE (repeatable).")
@click.option(
    "--create-only", is_flag=True, default=None, help="Refuse (NODE_ALREADY_EXISTS), never merge."
)
@click.option(
    "--resolution",
    type=click.Choice(("new", "same")),
    help="new: not any of the POSSIBLE_DUPLICATE candidates a refusal named; create it. "
    "same: the node named, though an identity field disagrees (IDENTITY_CONFLICT).",
)
@click.option("--scope", help="The scope to put it in, one its label allows (another moves it).")
@provenance_options
@valid_time_options
@cites_option
@write_format
@pass_ctx
def write_node(
    ctx: Context,
    /,
    node: str,
    keys: tuple[str, ...],
    props: tuple[str, ...],
    fmt: str,
    as_json: bool,
    **prov: Any,
) -> None:
    """Write (merge) one node, NODE being Label:key=value[,key=value...] (Person:name=Ada)
    or Label{json keys}. Values parse as JSON when they can: -p age=30 -p tags='["a"]', and
    as typed where the schema declares a string: -p title=1984. A property the schema
    declares as a relationship (Service owner: OWNED_BY) also writes that edge, as
    add_service does, moving it from a value it replaces."""
    from writegate.gate import WriteNodeResult

    name = _node(node, keys, "write node")
    properties = parse_assignments(props, "--prop", lambda: node_types(name.label))
    with opened(ctx) as gate:
        linked = _with_edges(gate, ctx, name, properties, _write_args(**prov))
        if linked is not None:  # as add_/update_<label> do, in one batch
            emit_written(linked, fmt, as_json)
            return
        result = gate.write_node(
            actor=ctx.actor,
            label=name.label,
            merge_keys=name.keys,
            properties=properties,
            **_write_args(**prov),
        )
        if isinstance(result, WriteNodeResult):
            _fallback_note(gate, name.label, result.label)
    emit_written(result, fmt, as_json)


def _with_edges(
    gate: Gate, ctx: Context, name: NodeName, properties: dict[str, Any], given: dict[str, Any]
) -> BatchResult | Rejected | None:
    """A write naming other nodes through relationship properties, written with the edges
    they make as every face writes it (``gate.relationship_properties``); None when it
    names none (a plain ``write_node``)."""
    from writegate.eventlog.events import format_timestamp
    from writegate.gate.relationship_properties import written_with_edges

    for moment in ("valid_from", "valid_to"):
        if moment in given:
            given[moment] = format_timestamp(given[moment])
    if "observations" in given:
        given["observations"] = list(given["observations"])
    request = {"label": name.label, "merge_keys": name.keys, "properties": properties, **given}
    return written_with_edges(gate, request, ctx.actor, None)


@write.command("relationship")
@relationship_arguments
@click.option("-p", "--prop", "props", multiple=True, help="Property NAME=VALUE (repeatable).")
@click.option("--merge-endpoints", is_flag=True, help="Create missing endpoints as stubs.")
@provenance_options
@valid_time_options
@cites_option
@write_format
@pass_ctx
def write_relationship(
    ctx: Context,
    /,
    rtype: str,
    start: NodeName | None,
    end: NodeName | None,
    from_label: str | None,
    from_keys: tuple[str, ...],
    to_label: str | None,
    to_keys: tuple[str, ...],
    props: tuple[str, ...],
    merge_endpoints: bool,
    fmt: str,
    as_json: bool,
    **prov: Any,
) -> None:
    """Write (merge) one relationship TYPE between two nodes, FROM and TO each a node:
    WORKS_FOR Person:name=Ada Organization:name=Initech."""
    from writegate.gate import ErrorCode, Rejected, WriteRelationshipResult

    rtype, first, second = relationship(
        "write relationship", rtype, start, end, (from_label, from_keys, to_label, to_keys)
    )
    properties = parse_assignments(props, "--prop", lambda: relationship_types(rtype))
    with opened(ctx) as gate:
        result = gate.write_relationship(
            actor=ctx.actor,
            type=rtype,
            **_endpoints(first, second),
            properties=properties,
            endpoint_policy="merge_endpoints" if merge_endpoints else "fail_if_missing",
            **_write_args(**prov),
        )
        if isinstance(result, WriteRelationshipResult):
            _fallback_note(gate, first.label, result.from_node.label)
            _fallback_note(gate, second.label, result.to_node.label)
    if isinstance(result, Rejected) and result.error_code == ErrorCode.ENDPOINT_NOT_FOUND:
        from writegate.language import node_identity

        missing = node_identity(result.details["label"], result.details["keys"])
        fail(
            f"{result.error_code}: {result.details['end']} node {missing} does not exist (write "
            "it first, or create it as a stub: --merge-endpoints)"
        )
    emit_written(result, fmt, as_json)


_BAR_FROM = 1_000  # items: a smaller batch is written before a bar would be read


@write.command("batch")
@click.argument("path", type=click.File("rb"))
@click.option("--idempotency-key", help="Retrying with the same key appends nothing.")
@write_format
@pass_ctx
def write_batch(
    ctx: Context, path: Any, idempotency_key: str | None, fmt: str, as_json: bool
) -> None:
    """Write a JSON array (or JSON Lines) of {"op": ..., ...} items as one atomic batch;
    the summary counts what was written (--format json: every item's result)."""
    text = path.read()
    try:
        stripped = text.lstrip()
        if stripped.startswith(b"["):
            items = orjson.loads(text)
        else:
            items = [orjson.loads(line) for line in text.splitlines() if line.strip()]
    except orjson.JSONDecodeError as exc:
        fail(f"{path.name}: not JSON or JSON Lines: {exc}", 2)
    from writegate.cli.stores import progress_bar

    shown = sys.stderr.isatty() and isinstance(items, list) and len(items) >= _BAR_FROM
    label = Path(path.name).name
    with opened(ctx) as gate, progress_bar(len(items), label, "items", shown=shown) as bar:
        told = [0]

        def progress(done: int, _total: int) -> None:  # a retried transaction starts again
            bar(max(done - told[0], 0))
            told[0] = max(told[0], done)

        result = gate.write_batch(
            items=items, idempotency_key=idempotency_key, actor=ctx.actor, progress=progress
        )
    emit_written(result, fmt, as_json)


@click.group()
def delete() -> None:
    """Delete through the gate (deletions are events too; history keeps everything)."""


@delete.command("node")
@node_argument
@old_keys_option
@click.option("--detach", is_flag=True, help="Also delete the node's relationships.")
@provenance_options
@write_format
@pass_ctx
def delete_node(
    ctx: Context,
    /,
    node: str,
    keys: tuple[str, ...],
    detach: bool,
    fmt: str,
    as_json: bool,
    **prov: Any,
) -> None:
    """Delete one node, NODE being Label:key=value[,key=value...] (Person:name=Ada) or
    Label{json keys}."""
    from writegate.gate import ErrorCode, Rejected

    name = _node(node, keys, "delete node")
    with opened(ctx) as gate:
        result = gate.delete_node(
            actor=ctx.actor,
            label=name.label,
            merge_keys=name.keys,
            detach=detach,
            **_write_args(**prov),
        )
    if isinstance(result, Rejected) and result.error_code == ErrorCode.NODE_HAS_RELATIONSHIPS:
        count = result.details.get("count")
        held = counted(count, "relationship") if isinstance(count, int) else "relationships"
        fail(
            f"{result.error_code}: {name.word} has {held}; "
            "delete them first, or delete them with the node: --detach"
        )
    emit_written(result, fmt, as_json)


@delete.command("relationship")
@relationship_arguments
@provenance_options
@write_format
@pass_ctx
def delete_relationship(
    ctx: Context,
    /,
    rtype: str,
    start: NodeName | None,
    end: NodeName | None,
    from_label: str | None,
    from_keys: tuple[str, ...],
    to_label: str | None,
    to_keys: tuple[str, ...],
    fmt: str,
    as_json: bool,
    **prov: Any,
) -> None:
    """Delete one relationship TYPE FROM TO."""
    rtype, first, second = relationship(
        "delete relationship", rtype, start, end, (from_label, from_keys, to_label, to_keys)
    )
    with opened(ctx) as gate:
        result = gate.delete_relationship(
            actor=ctx.actor, type=rtype, **_endpoints(first, second), **_write_args(**prov)
        )
    emit_written(result, fmt, as_json)
