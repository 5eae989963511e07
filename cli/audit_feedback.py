"""``writegate audit feedback``: who moved which feedback weight, when, from what to what —
a face over ``gate.audit.feedback`` (the MCP tool ``audit_feedback``), reading the log
read-only."""

from __future__ import annotations

import click
from rich.table import Table

from writegate.cli.common import SEQ, Context, fail, opened, pass_ctx
from writegate.cli.nodes import NODE, NodeName
from writegate.cli.render import console, emit_json, emit_jsonl, format_option, plain


@click.command("feedback")
@click.option("--node", type=NODE, help="Only this node's weight (Label:key=value).")
@click.option(
    "--edge",
    type=(str, NODE, NODE),
    metavar="TYPE FROM TO",
    help="Only this relationship's weight, by its type and ends.",
)
@click.option("--after", "after_seq", type=SEQ, default=0, help="Continue after this seq.")
@click.option("--limit", type=click.IntRange(1, 5000), default=500, show_default=True)
@format_option()
@pass_ctx
def audit_feedback(
    ctx: Context,
    node: NodeName | None,
    edge: tuple[str, NodeName, NodeName] | None,
    after_seq: int,
    limit: int,
    fmt: str,
) -> None:
    """Who moved which feedback weight, when, and from what to what (graph_improve)."""
    from writegate.gate.audit.feedback import feedback_trail
    from writegate.language import node_identity, relationship_identity

    if node is not None and edge is not None:
        fail("audit feedback: --node or --edge, not both", 2)
    identity = node_identity(node.label, node.keys) if node is not None else None
    if edge is not None:
        rtype, start, end = edge
        identity = relationship_identity(
            rtype, node_identity(start.label, start.keys), node_identity(end.label, end.keys)
        )
    with opened(ctx, readonly=True, whole_log="audit feedback") as gate:
        trail = feedback_trail(gate.log, identity, after=after_seq, limit=limit)
    if fmt == "json":
        emit_json(trail)
        return
    if fmt == "jsonl":
        emit_jsonl(trail.moves)
        return
    if not trail.moves:
        fail(f"no feedback moved {identity}" if identity else "no feedback was given")
    table = Table(title=f"feedback weights: {identity or 'every fact'}")
    for column in ("seq", "time", "agent", "session / answer", "outcome", "fact", "weight"):
        table.add_column(column, overflow="fold")
    for m in trail.moves:
        table.add_row(
            str(m.seq),
            m.occurred_at[:19],
            m.agent,
            m.session_id + (f" / {m.answer_id}" if m.answer_id else ""),
            f"{m.outcome} (alpha {plain(m.alpha)})",
            m.identity,
            f"{m.before:.4g} → {m.after:.4g}",
        )
    console().print(table)
    if trail.next_cursor is not None:
        click.echo(f"more: writegate audit feedback --after {trail.next_cursor}")
