"""``writegate query TEXT``: ask the graph a question, as the ``graph_query`` tool does.

It calls ``GraphReader.graph_query`` on a log opened read-only, and ``--format json`` prints
the tool's structured result exactly: an operator and an agent asking the same question
get the same answer.
"""

from __future__ import annotations

from datetime import datetime

import click

from writegate.cli.common import Context, parse_time, pass_ctx
from writegate.cli.nodes import NodeName
from writegate.cli.read import reading, schema_or_none
from writegate.cli.render import (
    believed,
    console,
    counted,
    emit_json,
    emit_jsonl,
    format_option,
    withheld_line,
)
from writegate.cli.tables import Rows
from writegate.gate.models import NodeRef
from writegate.gate.reads.answers import QueryResult
from writegate.gate.reads.query import DEFAULT, MAX_OBSERVATIONS, MAX_QUERY_DEPTH, MAX_TOP_K


@click.command()
@click.argument("text")
@click.option(
    "--top-k",
    type=click.IntRange(1, MAX_TOP_K),
    default=DEFAULT.top_k,
    show_default=True,
    help="At most this many seed nodes.",
)
@click.option(
    "--depth",
    type=click.IntRange(1, MAX_QUERY_DEPTH),
    default=DEFAULT.depth,
    show_default=True,
    help="Hops to expand from each seed.",
)
@click.option(
    "--observations",
    type=click.IntRange(1, MAX_OBSERVATIONS),
    default=DEFAULT.observations,
    show_default=True,
    help="At most this many observations in the answer.",
)
@click.option("--relationship", "rtype", help="Follow only relationships of this type.")
@click.option(
    "--as-of", callback=parse_time, help="Record time: the graph as the log knew it then."
)
@click.option("--valid-at", callback=parse_time, help="Valid time: what was true then.")
@format_option()
@pass_ctx
def query(
    ctx: Context,
    text: str,
    top_k: int,
    depth: int,
    observations: int,
    rtype: str | None,
    as_of: datetime | None,
    valid_at: datetime | None,
    fmt: str,
) -> None:
    """Ask the graph a question in words: ranked facts, their provenance and why.

    TEXT's words find seed nodes (and relationships) and observations; --depth hops around
    the seeds are ranked, and each (source, relationship, target) says which write set it
    and what it matched; each observation, what was said and what found it."""
    with reading(ctx) as (gate, reader):
        found = reader.graph_query(
            text,
            top_k=top_k,
            depth=depth,
            relationship_type=rtype,
            as_of=as_of,
            valid_at=valid_at,
            schema=schema_or_none(gate),
            observations=observations,
        )
    if fmt == "json":
        emit_json(found)
    elif fmt == "jsonl":
        emit_jsonl([*found.triplets, *found.seeds, *found.observations])
    else:
        _show(found)
    if found.truncated and fmt != "json":
        click.echo("… truncated: more than the bounds allow (--top-k, --depth)", err=True)


def _name(ref: NodeRef) -> str:
    """The node as the command line names it, so a cell pastes into the next command."""
    return NodeName(ref.label, dict(ref.merge_keys)).word


def _show(found: QueryResult) -> None:
    out = console()
    table = Rows(
        counted(len(found.triplets), "triplet"),
        ("score", "from", "type", "to", "matched", "hops", "written by", "conf"),
        whole={"score", "from", "type", "to", "hops", "conf"},
    )
    for t in found.triplets:
        p = t.provenance
        table.add_row(
            f"{t.relevance_score:.3f}",
            _name(t.source),
            t.relationship,
            _name(t.target),
            " ".join(t.why.terms),
            str(t.why.hops),
            f"{p.agent}, seq {p.seq}",
            believed(p),
        )
    out.print(table)
    seeds = Rows(
        counted(len(found.seeds), "seed"), ("node", "score", "terms"), whole={"node", "score"}
    )
    for s in found.seeds:
        seeds.add_row(_name(s.node), f"{s.score:.4f}", " ".join(s.terms))
    out.print(seeds)
    if found.observations:
        said = Rows(
            counted(len(found.observations), "observation"),
            ("score", "said", "text", "found"),
            whole={"score"},
        )
        for o in found.observations:
            how = ", ".join(o.found_by) or f"{o.places} from {o.context_of}"
            said.add_row(f"{o.score:.3f}", f"{o.said_at[:19]} {o.session or ''}", o.text, how)
        out.print(said)
    if line := withheld_line(found.withheld):
        click.echo(line)
