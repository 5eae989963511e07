"""``writegate audit …`` and ``report``: faces over ``gate.audit.auditor`` (``show`` is in
``cli.audit_show``).

``--format json`` prints the model as one JSON document, ``jsonl`` one JSON object per
entry, ``table`` rich tables as wide as the terminal. Every command opens the log
read-only, so an auditor's read-only copy is enough.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click
from rich.markdown import Markdown
from rich.table import Table

from writegate.cli.audit_show import identity_of, relationship_of
from writegate.cli.common import Context, fail, opened, parse_time, pass_ctx
from writegate.cli.nodes import NodeName, node_or_old, relationship, relationship_arguments
from writegate.cli.render import (
    console,
    counted,
    emit_json,
    emit_jsonl,
    format_option,
    json_line,
    plain,
)
from writegate.cli.stores import projection_checkpoints
from writegate.cli.tables import Rows
from writegate.gate.audit.auditor import Auditor, Facet, Summary
from writegate.gate.audit.report import ProjectionLag, Report, gate_report
from writegate.gate.audit.trail import Change, Trail


def _change(name: str, change: Change) -> str:
    if change.before is None:
        return f"{name}: + {plain(change.after)}"
    if change.after is None:
        return f"{name}: - {plain(change.before)}"
    return f"{name}: {plain(change.before)} → {plain(change.after)}"


def _trail(trail: Trail, fmt: str) -> None:
    if fmt == "json":
        emit_json(trail)
        return
    if fmt == "jsonl":
        emit_jsonl([*trail.entries, *trail.relationships])
        return
    if not trail.entries:
        fail(f"no history for {trail.identity}")
    table = Rows(
        f"{trail.identity} ({'exists' if trail.exists else 'deleted'})",
        ("seq", "time", "agent", "source / method", "conf", "changes"),
        whole={"seq", "time", "agent", "source / method", "conf"},
    )
    for e in trail.entries:
        changes = ", ".join(_change(k, c) for k, c in e.changes.items())
        if e.remapped_from:
            changes = f"(as {e.remapped_from}) {changes}"
        for cited in e.observations:
            changes += f"\ncites {cited.observation_id}: {cited.excerpt}"
        table.add_row(
            str(e.seq),
            e.occurred_at[:19],
            e.agent,
            f"{plain(e.source)} / {plain(e.extraction_method)}",
            plain(e.confidence),
            changes or e.type,
        )
    console().print(table)
    if len(trail.supported_by) > 1:  # corroborated: each write supporting it now
        console().print(_support_table(trail))
    if trail.relationships:
        console().print(_relationships_table(trail))


def _support_table(trail: Trail) -> Rows:
    last = trail.supported_by[-1]
    table = Rows(
        f"supported by (confidence {plain(last.corroborated_confidence)})",
        ("seq", "time", "how", "agent", "source / method", "conf"),
        whole={"seq", "time", "how", "agent", "source / method", "conf"},
    )
    for s in trail.supported_by:
        table.add_row(
            str(s.seq),
            s.occurred_at[:19],
            s.kind,
            s.agent,
            f"{s.source} / {s.extraction_method}",
            plain(s.confidence),
        )
    return table


def _relationships_table(trail: Trail) -> Rows:
    table = Rows(
        f"its relationships: {counted(len(trail.relationships), 'event')}",
        ("seq", "time", "relationship", "event", "agent", "conf", "changes"),
        whole={"seq", "time", "relationship", "event", "agent", "conf"},
    )
    for e in trail.relationships:
        arrow = (
            f"-[{e.relationship_type}]-> {e.other}"
            if e.direction == "out"
            else (f"<-[{e.relationship_type}]- {e.other}")
        )
        what = ", ".join(_change(k, c) for k, c in e.changes.items() if k)
        if e.superseded_by:
            what = f"replaced by {e.superseded_by}"
        table.add_row(
            str(e.seq), e.occurred_at[:19], arrow, e.type, e.agent, plain(e.confidence), what
        )
    return table


@click.group()
def audit() -> None:
    """The provenance trail: who wrote what, when, from which source, how trusted."""


@audit.command("node")
@click.argument("node", nargs=-1, required=True, metavar="NODE")
@format_option()
@pass_ctx
def audit_node(ctx: Context, node: tuple[str, ...], fmt: str) -> None:
    """Every event in the life of one node (Label:key=value or Label{json keys}), with what
    each changed."""
    name = node_or_old(node, "audit node")
    with opened(ctx, readonly=True, whole_log="audit node") as gate:
        trail = Auditor(gate.log).trail(identity_of(gate, name), "node")
    _trail(trail, fmt)


@audit.command("relationship")
@relationship_arguments
@format_option()
@pass_ctx
def audit_relationship(
    ctx: Context,
    rtype: str,
    start: NodeName | None,
    end: NodeName | None,
    from_label: str | None,
    from_keys: tuple[str, ...],
    to_label: str | None,
    to_keys: tuple[str, ...],
    fmt: str,
) -> None:
    """Every event in the life of one relationship TYPE FROM TO (a synonym type reads its
    canonical one)."""
    rtype, first, last = relationship(
        "audit relationship", rtype, start, end, (from_label, from_keys, to_label, to_keys)
    )
    with opened(ctx, readonly=True, whole_log="audit relationship") as gate:
        identity = relationship_of(gate, rtype, first, last)
        trail = Auditor(gate.log).trail(identity, "relationship")
    _trail(trail, fmt)


def _summary(ctx: Context, facet: Facet, value: str, fmt: str, since: Any, until: Any) -> None:
    with opened(ctx, readonly=True, whole_log=f"audit {facet}") as gate:
        summary = Auditor(gate.log).summary(facet, value, since=since, until=until)
    if fmt in ("json", "jsonl"):
        emit_json(summary)
        return
    _summary_table(summary)


def _summary_table(summary: Summary) -> None:
    out = console()
    out.print(
        f"[bold]{summary.facet} {summary.value}[/]: {counted(summary.events, 'event')} "
        f"({summary.written} written, {summary.deleted} deleted), "
        f"seq {plain(summary.first_seq)}–{plain(summary.last_seq)}, "
        f"{plain(summary.first_at)} – {plain(summary.last_at)}"
    )
    table = Table("label / type", "events", title="by label")
    for label, count in summary.by_label.items():
        table.add_row(label, str(count))
    out.print(table)
    out.print(_histogram_table(summary.confidence.buckets))
    if summary.decisions:
        decided = Table("seq", "time", "decision", "proposal", "writer", title="review decisions")
        for d in summary.decisions:
            decided.add_row(str(d.seq), d.occurred_at[:19], d.decision, d.proposal, plain(d.writer))
        out.print(decided)


BAR = 30  # characters of the longest bar


def _bar(count: int, peak: int) -> str:
    return "█" * round(BAR * count / (peak or 1))


def _bucket(i: int) -> str:
    return f"{i / 10:.1f}–{(i + 1) / 10:.1f}"


def _histogram_table(buckets: list[int]) -> Table:
    table = Table("confidence", "writes", "", title="confidence distribution")
    for i, count in enumerate(buckets):
        table.add_row(_bucket(i), str(count), _bar(count, max(buckets)))
    return table


def _facet_command(facet: Facet, help_text: str) -> click.Command:
    @click.argument("value")
    @format_option()
    @click.option("--since", callback=parse_time, help="ISO 8601 time (UTC if no offset).")
    @click.option("--until", callback=parse_time)
    @pass_ctx
    def command(
        ctx: Context, value: str, fmt: str, since: datetime | None, until: datetime | None
    ) -> None:
        _summary(ctx, facet, value, fmt, since, until)

    command.__doc__ = help_text
    return click.command(facet)(command)


audit.add_command(_facet_command("agent", "What one agent wrote: counts by label, confidence."))
audit.add_command(_facet_command("source", "What came from one source."))
audit.add_command(_facet_command("method", "What one extraction method produced."))


REPORT_FORMATS = ("table", "json", "markdown")


@click.command()
@format_option(*REPORT_FORMATS)
@click.option("--markdown", is_flag=True, help="The same as --format markdown.")
@pass_ctx
def report(ctx: Context, fmt: str, markdown: bool) -> None:
    """One page an auditor can hand on: size, chain, who wrote and who was refused, drift."""
    if markdown and fmt != "table":
        fail("give --markdown or another format, not both", 2)
    fmt = "markdown" if markdown else fmt
    settings = ctx.settings()
    with opened(ctx, readonly=True, whole_log="report") as gate:
        lags = [
            ProjectionLag(name=r.name, checkpoint=r.checkpoint, lag=r.lag, error=r.error)
            for r in projection_checkpoints(settings, gate.log)
        ]
        data = gate_report(gate, lags)
    if fmt == "json":
        click.echo(json_line(data))
    elif fmt == "markdown":
        click.echo(render_markdown(data), nl=False)
    else:
        _show_report(data)


def _show_report(data: Report) -> None:
    """The markdown page rendered, its review queue a table whose ids and confidences are
    never cut (a markdown table's cells end in "…" when the terminal is narrow)."""
    out = console()
    out.print(Markdown("\n".join(_before_queue(data))))
    if data.review_queue:
        table = Table("proposed at", "agent", "operation", "target", "conf", "reason")
        table.add_column("proposal", no_wrap=True, min_width=len(data.review_queue[0].proposal))
        for column in table.columns[:-1]:
            column.overflow = "fold"
        for p in data.review_queue:
            table.add_row(
                p.proposed_at[:19],
                p.agent,
                p.operation,
                p.target,
                plain(p.confidence),
                p.reason,
                p.proposal,
            )
        out.print(table)
    else:
        out.print("none")
    if (more := data.pending_reviews - len(data.review_queue)) > 0:
        out.print(f"and {more} more (review list)")
    out.print(Markdown("\n".join(_after_queue(data))))


def _counts(title: str, counts: dict[str, int], what: str = "count") -> list[str]:
    lines = [f"### {title}", ""]
    if not counts:
        return [*lines, "none", ""]
    lines += [f"| {title.split(' ', maxsplit=1)[0].lower()} | {what} |", "|---|---:|"]
    lines += [f"| {key} | {value} |" for key, value in counts.items()]
    return [*lines, ""]


def _queue(data: Report) -> list[str]:
    """The writes held for review, oldest first: when, who, what, why."""
    if not data.review_queue:
        return ["none", ""]
    lines = [
        "| proposed at | agent | operation | target | conf | reason | proposal |",
        "|---|---|---|---|---:|---|---|",
    ]
    lines += [
        "| "
        + " | ".join(
            cell.replace("|", "\\|")
            for cell in (
                p.proposed_at[:19],
                p.agent,
                p.operation,
                f"`{p.target}`",
                plain(p.confidence),
                p.reason,
                f"`{p.proposal}`",
            )
        )
        + " |"
        for p in data.review_queue
    ]
    more = data.pending_reviews - len(data.review_queue)
    return [*lines, "", *([f"and {more} more (`review list`)", ""] if more > 0 else [])]


def render_markdown(data: Report) -> str:
    return "\n".join([*_before_queue(data), *_queue(data), *_after_queue(data)]) + "\n"


def _before_queue(data: Report) -> list[str]:
    chain = "verified" if data.chain_ok else "**FAILED**"
    buckets = data.confidence.buckets
    return [
        "# writegate audit report",
        "",
        f"- events: {data.events} (seq 1–{data.head_seq}), "
        f"{plain(data.first_at)} – {plain(data.last_at)}",
        f"- head hash: `{data.head_hash}`",
        f"- hash chain: {chain} ({data.chain_detail})",
        f"- unresolved stubs: {data.unresolved_stubs}",
        f"- values superseded (kept in the log, `audit conflicts`): {data.superseded}",
        f"- writes held for review (`review list`): {data.pending_reviews}",
        "",
        "## Writes",
        "",
        *_counts("Agent writes", data.writes_by_agent, "events"),
        *_counts("Method writes", data.writes_by_method, "events"),
        *_counts("Label writes", data.writes_by_label, "events"),
        "## Rejections",
        "",
        *_counts("Agent rejections", data.rejections_by_agent, "rejected"),
        *_counts("Code rejections", data.rejections_by_code, "rejected"),
        "## Schema drift caught (remaps)",
        "",
        *_counts("Remap", data.remaps, "writes"),
        "## Confidence",
        "",
        "| confidence | writes | |",
        "|---|---:|---|",
        *(
            f"| {_bucket(i)} | {count} | {_bar(count, max(buckets))} |"
            for i, count in enumerate(buckets)
        ),
        "",
        f"{counted(data.confidence.count, 'write')}, mean {plain(data.confidence.mean)}, "
        f"min {plain(data.confidence.minimum)}, max {plain(data.confidence.maximum)}",
        "",
        "## Review queue",
        "",
    ]


def _after_queue(data: Report) -> list[str]:
    lines = ["## Projections", ""]
    if data.projections:
        lines += ["| projection | checkpoint | lag |", "|---|---:|---:|"]
        lines += [
            f"| {p.name} | {p.checkpoint if p.checkpoint is not None else '?'} | "
            f"{p.lag if p.lag is not None else plain(p.error)} |"
            for p in data.projections
        ]
    else:
        lines.append("none configured")
    return lines


from writegate.cli.audit_feedback import audit_feedback  # noqa: E402
from writegate.cli.audit_truth import audit_conflicts, audit_duplicates  # noqa: E402

audit.add_command(audit_conflicts)
audit.add_command(audit_duplicates)
audit.add_command(audit_feedback)
__all__ = ["audit", "report"]
