"""``writegate export …``: pictures of the graph, the PROV-O projection re-serialized, and
everything held about one subject (``export subject``, the ``export_subject`` tool's answer).

``dot``, ``graphml`` and ``mermaid`` draw what the reads return (``gate.reads.pictures``):
around a node, the ``neighbors`` tool's answer; without ``--around``, the whole graph,
refused (not cut) beyond ``--max-nodes``. All of them read the log read-only.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from writegate.cli.audit_show import identity_of
from writegate.cli.common import Context, fail, opened, pass_ctx
from writegate.cli.config import ProvConfig
from writegate.cli.nodes import NodeName, node_or_old, old_name, parse_node
from writegate.cli.read import reading, schema_or_none
from writegate.cli.render import json_line
from writegate.gate import dump
from writegate.gate.audit.auditor import Auditor
from writegate.gate.errors import GateRejection
from writegate.gate.reads.pictures import Picture, render
from writegate.gate.reads.reader import (
    MAX_DEPTH,
    MAX_LIMIT,
    WHOLE_GRAPH_NODES,
    GraphReader,
    Subgraph,
)
from writegate.projections.contract import ProjectionError
from writegate.projections.files import write_atomically
from writegate.projections.prov import FORMATS as PROV_FORMATS
from writegate.projections.prov import export

output_option = click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here (atomically) instead of standard output.",
)


def _write(data: bytes, output: Path | None, what: str) -> None:
    if output is None:
        click.echo(data.decode(), nl=False)
    else:
        write_atomically(output, [data])
        click.echo(f"wrote {len(data):,} bytes of {what} to {output}", err=True)


@click.group("export")
def export_group() -> None:
    """Pictures of the graph (dot, graphml, mermaid) and the PROV-O projection."""


@export_group.command("prov")
@click.argument("name")
@click.option(
    "--format", "fmt", type=click.Choice(PROV_FORMATS), default="turtle", show_default=True
)
@output_option
@pass_ctx
def export_prov(ctx: Context, name: str, fmt: str, output: Path | None) -> None:
    """The PROV-O projection NAME as Turtle, JSON-LD or N-Triples."""
    config = ctx.settings().projections.get(name)
    if not isinstance(config, ProvConfig):
        fail(f"{name!r} is not a configured prov projection", 2)
    if not config.path.exists():
        fail(f"{config.path} does not exist yet: run `writegate replay {name}` first")
    try:
        data = export(config.path, fmt)  # type: ignore[arg-type]
    except ProjectionError as exc:  # a file cut short, or one that does not parse
        fail(f"{name}: {exc}")
    _write(data, output, fmt)


def _whole(reader: GraphReader, max_nodes: int) -> Subgraph:
    try:
        return reader.whole_graph(max_nodes)
    except GateRejection as exc:
        fail(
            f"{exc.message}: draw part of it with --around Label:key=value --depth N, "
            "or raise --max-nodes"
        )


def _picture_command(picture: Picture, help_text: str) -> click.Command:
    @click.option(
        "--around",
        metavar="NODE",
        help="Draw the neighbourhood of this node: Label:key=value or Label{json keys}.",
    )
    @click.option("-k", "--key", "keys", multiple=True, hidden=True)
    @click.option("--depth", type=click.IntRange(1, MAX_DEPTH), default=1, show_default=True)
    @click.option("--type", "rtype", help="Follow only relationships of this type (--around).")
    @click.option(
        "--max-nodes",
        type=click.IntRange(1, 10 * WHOLE_GRAPH_NODES),
        default=WHOLE_GRAPH_NODES,
        show_default=True,
        help=f"Refuse a whole graph larger than this (--around draws at most {MAX_LIMIT}).",
    )
    @output_option
    @pass_ctx
    def command(
        ctx: Context,
        around: str | None,
        keys: tuple[str, ...],
        depth: int,
        rtype: str | None,
        max_nodes: int,
        output: Path | None,
    ) -> None:
        center = _around(around, keys, picture)
        if center is None and rtype:
            fail("--type goes with --around NODE", 2)
        with reading(ctx) as (gate, reader):
            if center is None:
                subgraph = _whole(reader, max_nodes)
            else:
                subgraph = reader.neighbors(
                    center.ref(),
                    depth=depth,
                    relationship_type=rtype,
                    limit=min(max_nodes, MAX_LIMIT),
                    schema=schema_or_none(gate),
                )
        if subgraph.truncated:
            click.echo(
                f"note: the picture stops at {min(max_nodes, MAX_LIMIT)} nodes "
                "(the neighbourhood is larger)",
                err=True,
            )
        _write(render(subgraph, picture).encode(), output, picture)

    command.__doc__ = help_text
    # the old ``--around LABEL KEY=VALUE`` leaves its KEY=VALUE as an extra argument
    return click.command(picture, context_settings={"allow_extra_args": True})(command)


def _around(around: str | None, keys: tuple[str, ...], picture: str) -> NodeName | None:
    """``--around NODE``, or the old ``--around LABEL KEY=VALUE [-k KEY=VALUE…]``."""
    extra = tuple(click.get_current_context().args)
    if around is None:
        if keys or extra:
            fail(f"{' '.join(extra) or '-k'}: name the node with --around NODE", 2)
        return None
    return node_or_old((around, *extra, *keys), f"export {picture} --around")


export_group.add_command(
    _picture_command("dot", "The graph (or --around a node) in Graphviz DOT, through pydot.")
)
export_group.add_command(
    _picture_command("graphml", "The graph (or --around a node) as GraphML, through networkx.")
)
export_group.add_command(
    _picture_command("mermaid", "The graph (or --around a node) as a Mermaid flowchart.")
)


@export_group.command("subject")
@click.argument("node", nargs=-1, required=True, metavar="NODE")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "prov"]),
    default="json",
    show_default=True,
    help="json: the export_subject tool's document; prov: its events as PROV-O (Turtle).",
)
@click.option(
    "--out",
    "--output",
    "-o",
    "output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here (atomically) instead of standard output.",
)
@pass_ctx
def export_subject(ctx: Context, node: tuple[str, ...], fmt: str, output: Path | None) -> None:
    """Everything held about one node (Label:key=value, or LABEL KEY=VALUE...), with its
    provenance: for a subject access or portability request."""
    name = parse_node(node[0]) if len(node) == 1 else old_name(node[0], node[1:], "KEY=VALUE")
    with opened(ctx, readonly=True, whole_log="export subject") as gate:
        try:
            held = Auditor(gate.log, gate.state).export_subject(identity_of(gate, name))
        except GateRejection as exc:
            fail(f"{exc.code}: {exc.message}")
        if fmt == "prov":
            from writegate.projections.prov_subject import prov_turtle

            data = prov_turtle(gate.log.read_seqs(held.event_seqs).values())
        elif output is None and sys.stdout.isatty():  # a person reads it: indented
            data = (
                orjson.dumps(dump(held), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
            )
        else:  # a file or a pipe: one JSON value on one line
            data = (json_line(held) + "\n").encode()
    _write(data, output, "the subject's PROV-O" if fmt == "prov" else "the subject's export")
