"""``writegate show node|relationship``: one node (with its relationships) or one
relationship as it stands, as the log knew it at ``--as-of`` (record time), or as it was
true at ``--valid-at`` (valid time). Faces over ``gate.reads.past``."""

from __future__ import annotations

from datetime import UTC, datetime

import click
from rich.table import Table

from writegate.cli.common import Context, fail, opened, parse_time, pass_ctx
from writegate.cli.grants import read_grant
from writegate.cli.nodes import NodeName, node_or_old, relationship, relationship_arguments
from writegate.cli.read import schema_or_none
from writegate.cli.render import (
    assignments,
    console,
    counted,
    emit_json,
    format_option,
    plain,
)
from writegate.gate import Gate
from writegate.gate.errors import GateRejection
from writegate.gate.reads.past import NodeAsOf, RelationshipAsOf
from writegate.gate.reads.reader import GraphReader
from writegate.gate.schema import LoadedSchema
from writegate.language import relationship_identity

AS_OF = "Record time: as the log knew it then (default: now)."
VALID_AT = "Valid time: what was true then, as known at --as-of (default: as recorded)."


def identity_of(gate: Gate, node: NodeName) -> str:
    """The node identity named on the command line (a synonym reads its canonical label),
    resolved as the MCP reads resolve it."""
    return _identity(node, schema_or_none(gate), gate)


def relationship_of(gate: Gate, rtype: str, start: NodeName, end: NodeName) -> str:
    """The relationship identity named on the command line (a synonym type reads its
    canonical one)."""
    schema = schema_or_none(gate)
    try:
        canonical = GraphReader.relationship_type(rtype, schema)
    except GateRejection as exc:
        fail(f"{exc.code}: {exc.message}", 2)
    return relationship_identity(
        canonical, _identity(start, schema, gate), _identity(end, schema, gate)
    )


def _identity(node: NodeName, schema: LoadedSchema | None, gate: Gate) -> str:
    try:
        return GraphReader.identity(node.ref(), schema, gate.log)
    except GateRejection as exc:
        fail(f"{exc.code}: {exc.message}", 2)


@click.group()
def show() -> None:
    """A node or relationship as it stands, or stood; an observation as kept."""


@show.command("observation")
@click.argument("observation_id", metavar="ID")
@format_option("table", "json")
@pass_ctx
def show_observation(ctx: Context, observation_id: str, fmt: str) -> None:
    """One observation by its id (what writegate observe printed): its text, source, time,
    and the facts extracted from it that stand now."""
    from writegate.cli import observe

    with opened(ctx, readonly=True) as gate:
        try:
            found = gate.observation_reader(read_grant(ctx, gate)).open_observation(observation_id)
        except GateRejection as exc:
            fail(f"{exc.code}: {exc.message}")
    observe.show_observation(found, fmt)


@show.command("node")
@click.argument("node", nargs=-1, required=True, metavar="NODE")
@click.option("--as-of", callback=parse_time, help=AS_OF)
@click.option("--valid-at", callback=parse_time, help=VALID_AT)
@format_option("table", "json")
@pass_ctx
def show_node(
    ctx: Context,
    node: tuple[str, ...],
    as_of: datetime | None,
    valid_at: datetime | None,
    fmt: str,
) -> None:
    """The node and its relationships as they stand now, or stood at --as-of (record time)
    or --valid-at (valid time): absent, present (maybe a stub), deleted. NODE is
    Label:key=value[,key=value...] or Label{json keys}."""
    from writegate.gate.reads.past import node_then

    name = node_or_old(node, "show node")
    with opened(ctx, readonly=True, whole_log="show node") as gate:
        identity = identity_of(gate, name)
        moment = as_of or datetime.now(UTC)
        found = node_then(gate.log, identity, as_of=moment, valid_at=valid_at, state=gate.state)
    if fmt == "json":
        emit_json(found)
        return
    _node_table(found)


@show.command("relationship")
@relationship_arguments
@click.option("--as-of", callback=parse_time, help=AS_OF)
@click.option("--valid-at", callback=parse_time, help=VALID_AT)
@format_option("table", "json")
@pass_ctx
def show_relationship(
    ctx: Context,
    rtype: str,
    start: NodeName | None,
    end: NodeName | None,
    from_label: str | None,
    from_keys: tuple[str, ...],
    to_label: str | None,
    to_keys: tuple[str, ...],
    as_of: datetime | None,
    valid_at: datetime | None,
    fmt: str,
) -> None:
    """The relationship with its valid time, as it stands now, or stood at --as-of or
    --valid-at: absent, present, or deleted (ended, maybe by the one that replaced it)."""
    from writegate.gate.reads.past import relationship_then

    rtype, first, last = relationship(
        "show relationship", rtype, start, end, (from_label, from_keys, to_label, to_keys)
    )
    with opened(ctx, readonly=True, whole_log="show relationship") as gate:
        identity = relationship_of(gate, rtype, first, last)
        found = relationship_then(
            gate.log, identity, as_of=as_of or datetime.now(UTC), valid_at=valid_at
        )
    if fmt == "json":
        emit_json(found)
        return
    console().print(_fields_table(found.identity, _relationship_rows(found)))


def _fields_table(title: str, rows: dict[str, object]) -> Table:
    table = Table(show_header=False, title=title)
    table.add_column(overflow="fold")
    table.add_column(overflow="fold")
    for name, value in rows.items():
        table.add_row(name, plain(value))
    return table


def _relationship_rows(found: RelationshipAsOf) -> dict[str, object]:
    return {
        "state": found.state,
        "valid": _valid(found),
        "superseded by": found.superseded_by,
        "properties": assignments(found.properties),
        "last written": _written(found),
        "source": found.last_source,
        "confidence": found.confidence,
    }


def _valid(found: RelationshipAsOf) -> str:
    return f"{plain(found.valid_from)} to {plain(found.valid_to) or 'open'}"


def _written(found: NodeAsOf | RelationshipAsOf) -> str:
    """``seq 12 by ada-bot``: the last write (nothing for what the log never held)."""
    return f"seq {found.last_seq} by {found.last_agent}" if found.last_seq else ""


def _node_table(node: NodeAsOf) -> None:
    state = f"{node.state} (a stub)" if node.stub else node.state
    valid = f", valid at {node.valid_at}" if node.valid_at else ""
    rows = {
        "state": state,
        "version": node.version,
        "properties": assignments(node.properties),
        "last written": _written(node),
        "source": node.last_source,
        "confidence": node.confidence,
    }
    if node.authority is not None:  # the schema ranks it (``gate.authority``)
        rows["authority"] = f"{node.authority.rank} ({node.authority.by})"
    if node.corroborated_confidence is not None:  # as open, search and query show it
        rows["corroborated confidence"] = node.corroborated_confidence
        rows["sources"] = ", ".join(node.sources or ())
    out = console()
    out.print(_fields_table(f"{node.identity} as of {node.as_of}{valid}", rows))
    if not node.relationships:
        return
    table = Table(title=counted(len(node.relationships), "relationship"))
    for column in ("relationship", "valid", "properties", "conf", "last written"):
        table.add_column(column, overflow="fold")
    for r in node.relationships:
        conf = plain(r.confidence)
        if r.corroborated_confidence is not None:
            conf += f" (corroborated {plain(r.corroborated_confidence)})"
        table.add_row(r.identity, _valid(r), assignments(r.properties), conf, _written(r))
    out.print(table)
