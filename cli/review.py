"""``writegate review …``: the review lane from the command line, a face over
``gate.review.Reviews`` (the same calls as the reviewer's MCP tools). The operator decides
as ``--as`` (default ``operator:<user>``); the decision is an event naming them. A
proposal is named by its id or any prefix naming one (``cli.ids``), and printed whole."""

from __future__ import annotations

import click
from rich.table import Table

from writegate.cli.common import Context, fail, opened, pass_ctx
from writegate.cli.ids import resolve_id
from writegate.cli.render import assignments, console, emit_json, format_option, plain
from writegate.cli.tables import Rows
from writegate.cli.written import emit_written, write_format
from writegate.gate.review import Decision, ReviewQueue


@click.group()
def review() -> None:
    """Writes held for review: list, show, approve, reject."""


@review.command("list")
@click.option("--all", "everything", is_flag=True, help="Decided proposals too.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@format_option("table", "json")
@pass_ctx
def review_list(ctx: Context, everything: bool, limit: int, fmt: str) -> None:
    """The held writes, oldest first (pending ones unless --all)."""
    with opened(ctx, readonly=True, whole_log="review list") as gate:
        queue = gate.reviews.queue(limit=limit, pending=not everything)
    if fmt == "json":
        emit_json(queue)
        return
    table = Rows(
        f"{queue.pending} pending",
        ("proposal", "status", "agent", "operation", "target", "conf", "reason"),
        whole={"proposal", "status", "agent", "operation", "target", "conf"},
    )
    for p in queue.proposals:
        table.add_row(
            p.proposal, p.status, p.agent, p.operation, p.target, plain(p.confidence), p.reason
        )
    console().print(table)


def _ids(queue: ReviewQueue) -> list[str]:
    return [p.proposal for p in queue.proposals]


@review.command("show")
@click.argument("proposal")
@format_option("table", "json")
@pass_ctx
def review_show(ctx: Context, proposal: str, fmt: str) -> None:
    """One held write: who sent it, from what, why it was held, what it would write.
    PROPOSAL is its id, or a prefix naming one."""
    with opened(ctx, readonly=True, whole_log="review show") as gate:
        proposal = resolve_id(gate.log, "proposal", proposal)
        found = gate.reviews.show(proposal)
    if found is None:
        fail(f"no proposal {proposal}")
    if fmt == "json":
        emit_json(found)
        return
    table = Table(show_header=False, title=f"proposal {found.proposal} ({found.status})")
    table.add_column(overflow="fold")
    table.add_column(overflow="fold")
    for name, value in {
        "proposed": f"seq {found.seq} at {found.proposed_at} by {found.agent}",
        "operation": f"{found.operation} {found.target}",
        "arguments": assignments(found.arguments),
        "source / method": f"{plain(found.source)} / {plain(found.extraction_method)}",
        "confidence": plain(found.confidence),
        "reason": found.reason,
    }.items():
        table.add_row(name, value)
    console().print(table)


def _decide(
    ctx: Context, proposal: str, decision: Decision, note: str, fmt: str, as_json: bool
) -> None:
    with opened(ctx) as gate:
        proposal = resolve_id(gate.log, "proposal", proposal)
        result = gate.reviews.decide(proposal, decision, ctx.actor, note)
    emit_written(result, fmt, as_json)


@review.command("approve")
@click.argument("proposal")
@click.option("--note", default="", help="Why, for the audit trail.")
@write_format
@pass_ctx
def review_approve(ctx: Context, proposal: str, note: str, fmt: str, as_json: bool) -> None:
    """Apply a held write now, as its writer's, under today's checks. PROPOSAL is its id,
    or a prefix naming one."""
    _decide(ctx, proposal, "approve", note, fmt, as_json)


@review.command("reject")
@click.argument("proposal")
@click.option("--note", default="", help="Why, for the audit trail.")
@write_format
@pass_ctx
def review_reject(ctx: Context, proposal: str, note: str, fmt: str, as_json: bool) -> None:
    """Refuse a held write: the graph never sees it; the trail keeps it. PROPOSAL is its
    id, or a prefix naming one."""
    _decide(ctx, proposal, "reject", note, fmt, as_json)
