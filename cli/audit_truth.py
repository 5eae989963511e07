"""``writegate audit conflicts`` and ``audit duplicates``: the truth of the graph over
time — what writes superseded or were refused for, what entity resolution merged or
proposed. Faces over ``gate.audit.conflicts`` and ``gate.audit.duplicates``."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from writegate.cli.common import Context, opened, parse_time, pass_ctx
from writegate.cli.render import console, emit_json, emit_jsonl, format_option, plain


@click.command("conflicts")
@click.option("--since", callback=parse_time, help="From this ISO 8601 time.")
@click.option("--until", callback=parse_time, help="Up to this ISO 8601 time.")
@format_option()
@pass_ctx
def audit_conflicts(ctx: Context, since: Any, until: Any, fmt: str) -> None:
    """What writes superseded (held value, who had set it, at what confidence) and which
    writes a conflict policy refused."""
    from writegate.gate.audit.conflicts import audit_conflicts as conflicts_of

    with opened(ctx, readonly=True, whole_log="audit conflicts") as gate:
        found = conflicts_of(gate.log, since=since, until=until)
    if fmt == "json":
        emit_json(found)
        return
    if fmt == "jsonl":
        emit_jsonl(found.entries)
        return
    table = Table(title=f"conflicts: {found.superseded} superseded, {found.refused} refused")
    for column in ("time", "outcome", "subject", "by (conf)", "held (by, conf)"):
        table.add_column(column, overflow="fold")
    for e in found.entries:
        what = f"{e.subject}.{e.property}" if e.property else e.subject
        held = (  # a refusal recorded without its details: what it said
            f"{plain(e.held_value)} ({e.held_by}, {plain(e.held_confidence)})"
            if e.held_by is not None
            else f"{e.error_code}: {e.message}"
        )
        by = e.agent if e.confidence is None else f"{e.agent} ({plain(e.confidence)})"
        table.add_row(e.at[:19], e.outcome, what, by, held)
    console().print(table)


@click.command("duplicates")
@click.option("--since", callback=parse_time, help="From this ISO 8601 time.")
@click.option("--until", callback=parse_time, help="Up to this ISO 8601 time.")
@format_option()
@pass_ctx
def audit_duplicates(ctx: Context, since: Any, until: Any, fmt: str) -> None:
    """What entity resolution landed on existing nodes, which writes it refused as probable
    duplicates, and which nodes reviewers merged or unmerged."""
    from writegate.gate.audit.duplicates import audit_duplicates as duplicates_of

    with opened(ctx, readonly=True, whole_log="audit duplicates") as gate:
        found = duplicates_of(gate.log, since=since, until=until)
    if fmt == "json":
        emit_json(found)
        return
    if fmt == "jsonl":
        emit_jsonl(found.entries)
        return
    table = Table(
        title=f"duplicates: {found.resolved} resolved, {found.proposed} proposed, "
        f"{found.merged} merged, {found.unmerged} unmerged"
    )
    for column in ("time", "outcome", "agent", "what"):
        table.add_column(column, overflow="fold")
    for e in found.entries:
        what = e.message if e.outcome == "proposed" else f"{e.written_as} -> {e.landed_on}"
        table.add_row(e.at[:19], e.outcome, e.agent, plain(what))
    console().print(table)
