"""``writegate improve``: feedback on an answer, as the operator — a face over
``Gate.graph_improve`` (the MCP tool ``graph_improve``). ``--format json`` prints the
tool's result; a refusal is one line and exit 1."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import click

from writegate.cli.common import Context, fail, opened, pass_ctx
from writegate.cli.nodes import NODE, NodeName
from writegate.cli.render import counted
from writegate.cli.written import write_format

if TYPE_CHECKING:
    from writegate.language import Outcome

OUTCOMES = ("accepted", "rework", "rejected")  # language.OUTCOMES, without loading it for --help


@click.command()
@click.argument("session")
@click.option(
    "--outcome",
    type=click.Choice(OUTCOMES),
    required=True,
    help="accepted (weights move toward 1), rework (toward 0.5), rejected (toward 0).",
)
@click.option(
    "--node",
    "nodes",
    type=NODE,
    multiple=True,
    help="A node the answer used: Label:key=value or Label{json keys} (repeat for more).",
)
@click.option(
    "--edge",
    "edges",
    type=(str, NODE, NODE),
    multiple=True,
    metavar="TYPE FROM TO",
    help="A relationship the answer used, its type and ends (repeat for more).",
)
@click.option("--answer", help="Which answer of the session, when it had several.")
@click.option("--source", help="Where the judgement came from (default: session:SESSION).")
@click.option("--method", "extraction_method", help="How it was obtained (default: api).")
@click.option("--reliability", type=click.FloatRange(0, 1), help="How far it is trusted, 0 to 1.")
@write_format
@pass_ctx
def improve(
    ctx: Context,
    /,
    session: str,
    outcome: str,
    nodes: tuple[NodeName, ...],
    edges: tuple[tuple[str, NodeName, NodeName], ...],
    answer: str | None,
    source: str | None,
    extraction_method: str | None,
    reliability: float | None,
    fmt: str,
    as_json: bool,
) -> None:
    """Feedback on an answer: the nodes and relationships it used move their weight.

    SESSION names the answer (with --answer when a session had several); the feedback
    counts once per SESSION and answer: sent again, it is unchanged. Weights move by
    [recall] feedback_alpha toward the outcome's target."""
    from writegate.gate import EdgeKey
    from writegate.language import node_identity

    if not nodes and not edges:
        fail("improve: name what the answer used with --node or --edge", 2)
    edge_keys = [
        EdgeKey(
            sourceId=node_identity(start.label, start.keys),
            targetId=node_identity(end.label, end.keys),
            relationshipName=rtype,
        )
        for rtype, start, end in edges
    ]
    given: dict[str, Any] = {
        "answer_id": answer,
        "source": source,
        "extraction_method": extraction_method,
        "reliability": reliability,
    }
    with opened(ctx) as gate:
        result = gate.graph_improve(
            actor=ctx.actor,
            session_id=session,
            outcome=cast("Outcome", outcome),
            used_node_ids=[node_identity(n.label, n.keys) for n in nodes],
            used_edge_keys=edge_keys,
            **{k: v for k, v in given.items() if v is not None},
        )
    emit_improved(result, fmt, as_json)


def emit_improved(result: Any, fmt: str, as_json: bool) -> None:
    """The result as ``--format`` asks: a line saying what moved, or the tool's JSON."""
    from writegate.cli.common import emit_result
    from writegate.gate import ImproveResult

    if not isinstance(result, ImproveResult) or fmt == "json" or as_json:
        emit_result(result, text=not (fmt == "json" or as_json))
        return
    if result.status == "unchanged":
        click.echo(f"unchanged: this feedback was given at seq {result.seq}")
        return
    click.echo(
        f"moved the weights of {counted(result.node_updates, 'node')} and "
        f"{counted(result.edge_updates, 'relationship')} at seq {result.seq} "
        f"(event {result.event_id})"
    )
