"""``writegate export …``: pictures of the graph, and the PROV-O projection re-serialized.

``dot``, ``graphml`` and ``mermaid`` draw what the reads return (``gate.reads.pictures``):
around a node, the ``neighbors`` tool's answer; without ``--around``, the whole graph,
refused (not cut) beyond ``--max-nodes``. All of them read the log read-only.
"""

from __future__ import annotations

from pathlib import Path

import click

from writegate.cli.common import Context, fail, pass_ctx
from writegate.cli.config import ProvConfig
from writegate.cli.read import node_ref, reading, schema_or_none
from writegate.gate.errors import GateRejection
from writegate.gate.reads.pictures import Picture, render
from writegate.gate.reads.reader import (
    MAX_DEPTH,
    MAX_LIMIT,
    WHOLE_GRAPH_NODES,
    GraphReader,
    Subgraph,
)
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
    _write(export(config.path, fmt), output, fmt)  # type: ignore[arg-type]


def _whole(reader: GraphReader, max_nodes: int) -> Subgraph:
    try:
        return reader.whole_graph(max_nodes)
    except GateRejection as exc:
        fail(
            f"{exc.message}: draw part of it with --around LABEL KEY=VALUE --depth N, "
            "or raise --max-nodes"
        )


def _picture_command(picture: Picture, help_text: str) -> click.Command:
    @click.option(
        "--around",
        nargs=2,
        metavar="LABEL KEY=VALUE",
        help="Draw the neighbourhood of this node (more keys: -k).",
    )
    @click.option("-k", "--key", "keys", multiple=True, help="Another merge key of --around.")
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
        around: tuple[str, str] | None,
        keys: tuple[str, ...],
        depth: int,
        rtype: str | None,
        max_nodes: int,
        output: Path | None,
    ) -> None:
        if around is None and (keys or rtype):
            fail("-k and --type go with --around LABEL KEY=VALUE", 2)
        with reading(ctx) as (gate, reader):
            if around is None:
                subgraph = _whole(reader, max_nodes)
            else:
                subgraph = reader.neighbors(
                    node_ref(around[0], (around[1], *keys)),
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
    return click.command(picture)(command)


export_group.add_command(
    _picture_command("dot", "The graph (or --around a node) in Graphviz DOT, through pydot.")
)
export_group.add_command(
    _picture_command("graphml", "The graph (or --around a node) as GraphML, through networkx.")
)
export_group.add_command(
    _picture_command("mermaid", "The graph (or --around a node) as a Mermaid flowchart.")
)
