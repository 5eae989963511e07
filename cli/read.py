"""``writegate search|open|neighbors|path``: the agents' read tools, for people without an MCP
client.

Each command calls the ``GraphReader`` function its MCP tool calls (``search_nodes``,
``open_nodes``, ``neighbors``, ``find_path``), on a log opened read-only, and ``--format
json`` prints the tool's structured result exactly: an operator and an agent asking the
same question get the same answer. Nodes are named as ``cli.nodes`` says.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import click

from writegate.cli.common import Context, fail, opened, parse_time, pass_ctx
from writegate.cli.grants import read_grant
from writegate.cli.nodes import NODE, NodeName, ends, node_or_old, old_endpoints
from writegate.cli.render import (
    assignments,
    believed,
    console,
    counted,
    emit_json,
    emit_jsonl,
    format_option,
    withheld_line,
)
from writegate.cli.tables import Rows
from writegate.gate import Gate
from writegate.gate.errors import GateRejection
from writegate.gate.models import NodeRef
from writegate.gate.reads.around import MAX_NEIGHBORS, NEIGHBORS
from writegate.gate.reads.reader import MAX_DEPTH, GraphReader, PathResult, Subgraph
from writegate.gate.reads.views import EdgeView, NodeView
from writegate.gate.schema import LoadedSchema, SchemaSourceUnavailable


def schema_or_none(gate: Gate) -> LoadedSchema | None:
    """Reads work without a schema: labels are then taken as given (as the MCP tools do)."""
    try:
        return gate.current_schema()
    except SchemaSourceUnavailable:
        return None


@contextmanager
def reading(ctx: Context) -> Iterator[tuple[Gate, GraphReader]]:
    """The log opened read-only and its reader; a refused read is one line and exit 1."""
    with opened(ctx, readonly=True) as gate:
        try:
            yield gate, gate.reader(scopes=read_grant(ctx, gate))
        except GateRejection as exc:
            fail(f"{exc.code}: {exc.message}")


@click.command()
@click.argument("text")
@click.option("--limit", type=click.IntRange(1, 500), default=25, show_default=True)
@click.option("--cursor", help="The next_cursor a previous page printed.")
@click.option(
    "--neighbors",
    type=click.IntRange(0, MAX_NEIGHBORS),
    default=NEIGHBORS,
    show_default=True,
    help="At most this many of each match's relationships (and their other nodes); each "
    "match's more_relationships counts the rest.",
)
@click.option(
    "--observations",
    "observations",
    is_flag=True,
    help="Search observations' text instead (search_observations).",
)
@format_option()
@pass_ctx
def search(
    ctx: Context,
    text: str,
    limit: int,
    cursor: str | None,
    neighbors: int,
    observations: bool,
    fmt: str,
) -> None:
    """Nodes whose words begin with TEXT's words, most relevant first, with a few neighbours.

    A node's words are its label, merge keys and string properties; any word of TEXT may
    match (the more and the rarer, the higher), and TEXT is never query syntax.
    --observations finds observations by their text the same way."""
    if observations:
        from writegate.cli.observe import search_observations

        search_observations(ctx, text, limit, cursor, fmt)
        return
    with reading(ctx) as (_, reader):
        found = reader.search_nodes(text, limit, cursor, neighbors)
    show_subgraph(found, fmt)
    if found.next_cursor is not None and fmt != "json":
        click.echo(f"… more: --cursor '{found.next_cursor}'", err=True)


@click.command("open")
@click.argument("nodes", nargs=-1, required=True, type=NODE, metavar="NODE...")
@click.option("--as-of", callback=parse_time, help="Record time: as the log knew them then.")
@click.option(
    "--valid-at", callback=parse_time, help="Valid time: what was true then, as known at --as-of."
)
@format_option()
@pass_ctx
def open_command(
    ctx: Context,
    nodes: tuple[NodeName, ...],
    as_of: datetime | None,
    valid_at: datetime | None,
    fmt: str,
) -> None:
    """The named nodes, their neighbours and the edges between, now or as they stood.

    Each NODE is Label:key=value[,key=value...] or Label{json keys}; --format json is the
    open_nodes tool's answer."""
    with reading(ctx) as (gate, reader):
        found = reader.open_nodes(
            [n.ref() for n in nodes], schema_or_none(gate), as_of=as_of, valid_at=valid_at
        )
    show_subgraph(found, fmt)


@click.command()
@click.argument("node", nargs=-1, required=True, metavar="NODE")
@click.option("--depth", type=click.IntRange(1, MAX_DEPTH), default=1, show_default=True)
@click.option("--type", "rtype", help="Follow only relationships of this type.")
@click.option("--limit", type=click.IntRange(1, 500), default=100, show_default=True)
@format_option()
@pass_ctx
def neighbors(
    ctx: Context,
    node: tuple[str, ...],
    depth: int,
    rtype: str | None,
    limit: int,
    fmt: str,
) -> None:
    """The nodes within --depth hops of one node (both directions), and the edges between.

    NODE is Label:key=value[,key=value...] or Label{json keys}."""
    ref = node_or_old(node, "neighbors").ref()
    with reading(ctx) as (gate, reader):
        found = reader.neighbors(
            ref, depth=depth, relationship_type=rtype, limit=limit, schema=schema_or_none(gate)
        )
    show_subgraph(found, fmt)


@click.command()
@click.argument("start", metavar="FROM", type=NODE, required=False)
@click.argument("end", metavar="TO", type=NODE, required=False)
@old_endpoints
@click.option(
    "--max-depth", type=click.IntRange(1, MAX_DEPTH), default=MAX_DEPTH, show_default=True
)
@click.option("--type", "rtype", help="Follow only relationships of this type.")
@format_option("table", "json")
@pass_ctx
def path(
    ctx: Context,
    start: NodeName | None,
    end: NodeName | None,
    from_label: str | None,
    from_keys: tuple[str, ...],
    to_label: str | None,
    to_keys: tuple[str, ...],
    max_depth: int,
    rtype: str | None,
    fmt: str,
) -> None:
    """The shortest path between two nodes (edges taken in either direction).

    FROM and TO are nodes: Label:key=value[,key=value...] or Label{json keys}."""
    first, last = ends("path", start, end, (from_label, from_keys, to_label, to_keys))
    with reading(ctx) as (gate, reader):
        found = reader.find_path(
            first.ref(),
            last.ref(),
            max_depth=max_depth,
            relationship_type=rtype,
            schema=schema_or_none(gate),
        )
    if fmt == "json":
        emit_json(found)
        return
    _show_path(found)


# -- tables -------------------------------------------------------------------------------


def _name(label: str, merge_keys: dict[str, Any]) -> str:
    """The node as the command line names it, so a cell pastes into the next command."""
    return NodeName(label, dict(merge_keys)).word


def _ref_name(ref: NodeRef) -> str:
    return _name(ref.label, ref.merge_keys)


def _nodes_table(nodes: list[NodeView]) -> Rows:
    table = Rows(
        counted(len(nodes), "node"),
        ("node", "properties", "conf", "source / method", "written by"),
        whole={"node", "conf"},
    )
    for node in nodes:
        p = node.provenance
        table.add_row(
            _name(node.label, node.merge_keys)
            + (" (stub)" if node.stub else "")
            + (
                f" (+{counted(more, 'relationship')} not shown)"
                if (more := node.more_relationships)
                else ""
            ),
            assignments(node.properties),
            believed(p),
            f"{p.source} / {p.extraction_method}",
            f"{p.agent}, seq {p.seq}",
        )
    return table


def _edges_table(edges: list[EdgeView]) -> Rows:
    table = Rows(
        counted(len(edges), "relationship"),
        ("from", "type", "to", "properties", "conf", "source / method"),
        whole={"from", "type", "to", "conf"},
    )
    for edge in edges:
        p = edge.provenance
        table.add_row(
            _ref_name(edge.from_node),
            edge.type,
            _ref_name(edge.to_node),
            assignments(edge.properties),
            believed(p),
            f"{p.source} / {p.extraction_method}",
        )
    return table


def show_subgraph(subgraph: Subgraph, fmt: str) -> None:
    """A subgraph as the MCP tool returns it (json), a line per node then edge (jsonl), or
    two tables."""
    if fmt == "json":
        emit_json(subgraph)
        return
    if fmt == "jsonl":
        emit_jsonl([*subgraph.nodes, *subgraph.edges])
    else:
        out = console()
        out.print(_nodes_table(subgraph.nodes))
        if subgraph.edges:
            out.print(_edges_table(subgraph.edges))
        if line := withheld_line(subgraph.withheld):
            click.echo(line)
    if subgraph.truncated:
        click.echo("… truncated: more nodes or edges than the limits allow", err=True)


def _show_path(found: PathResult) -> None:
    out = console()
    if not found.found:
        out.print("no path within --max-depth")
        if line := withheld_line(found.withheld):
            click.echo(line)
        return
    steps = [_name(found.nodes[0].label, found.nodes[0].merge_keys)]
    for node, edge in zip(found.nodes[1:], found.edges, strict=True):
        forward = edge.to_node.label == node.label and edge.to_node.merge_keys == node.merge_keys
        steps.append(f"-[{edge.type}]->" if forward else f"<-[{edge.type}]-")
        steps.append(_name(node.label, node.merge_keys))
    out.print(f"path of {found.length}: " + " ".join(steps), highlight=False, markup=False)
    out.print(_nodes_table(found.nodes))
    out.print(_edges_table(found.edges))
    if line := withheld_line(found.withheld):
        click.echo(line)
