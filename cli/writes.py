"""``writegate init``, ``write …`` and ``delete …``: the gate's write operations as the operator.

Each command calls the ``Gate`` method of the same name with the operator as the actor
(``--as`` or the OS user) and prints the result as JSON, or the rejection as one line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import orjson

from writegate.cli.common import (
    Context,
    emit_result,
    endpoint_options,
    fail,
    opened,
    parse_assignments,
    pass_ctx,
)


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


@click.command()
@click.option("--schema", "schema_path", type=click.Path(dir_okay=False, path_type=Path))
@pass_ctx
def init(ctx: Context, schema_path: Path | None) -> None:
    """Create the log (if missing) and optionally publish a schema to it."""
    with opened(ctx, create=True) as gate:
        click.echo(f"log ready at {ctx.db} (head seq {gate.log.head()[0]})")
        if schema_path is not None:
            emit_result(gate.publish_schema(schema_path, actor=ctx.actor))


@click.group()
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


@click.group()
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
