"""``writegate audit …``, ``show node --as-of`` and ``report``: faces over ``gate.audit``.

``--format json`` prints the model as one JSON document, ``jsonl`` one JSON object per
entry, ``table`` a rich table that fits 80 columns.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click
from pydantic import BaseModel
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from writegate.cli.common import (
    Context,
    endpoint_options,
    fail,
    opened,
    parse_assignments,
    parse_time,
    pass_ctx,
)
from writegate.cli.stores import projection_checkpoints
from writegate.gate import Gate
from writegate.gate.audit import Auditor, Facet, Summary, Trail
from writegate.gate.report import ProjectionLag, Report, build_report
from writegate.language import node_identity, relationship_identity

FORMATS = ("table", "json", "jsonl")


def _console() -> Console:
    return Console(width=80)


def _emit_json(model: BaseModel) -> None:
    click.echo(json.dumps(model.model_dump(mode="json"), sort_keys=True))


format_option = click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True
)


def _identity(gate: Gate, label: str, keys: tuple[str, ...]) -> str:
    """The node identity named on the command line (a synonym reads its canonical label)."""
    merge_keys = parse_assignments(keys, "KEY=VALUE")
    if not merge_keys:
        fail("name the node by its keys: LABEL KEY=VALUE...", 2)
    label = label.removeprefix(":")
    try:
        registry = gate.current_schema().registry
        if registry.get_entry(label) is None:
            label = registry.remap_target(label) or label
    except Exception:  # no schema: take the label as given
        pass
    return node_identity(label, merge_keys)


def _trail(trail: Trail, fmt: str) -> None:
    if fmt == "json":
        _emit_json(trail)
        return
    if fmt == "jsonl":
        for entry in trail.entries:
            click.echo(json.dumps(entry.model_dump(mode="json"), sort_keys=True))
        return
    if not trail.entries:
        fail(f"no history for {trail.identity}")
    table = Table(title=f"{trail.identity} ({'exists' if trail.exists else 'deleted'})")
    for column in ("seq", "time", "agent", "source / method", "conf", "changes"):
        table.add_column(column, overflow="fold")
    for e in trail.entries:
        changes = ", ".join(f"{k}: {c.before!r}→{c.after!r}" for k, c in e.changes.items())
        if e.remapped_from:
            changes = f"(as {e.remapped_from}) {changes}"
        table.add_row(
            str(e.seq),
            e.occurred_at[:19],
            e.agent,
            f"{e.source} / {e.extraction_method}",
            "" if e.confidence is None else f"{e.confidence:g}",
            changes or e.type,
        )
    _console().print(table)


@click.group()
def audit() -> None:
    """The provenance trail: who wrote what, when, from which source, how trusted."""


@audit.command("node")
@click.argument("label")
@click.argument("keys", nargs=-1, required=True, metavar="KEY=VALUE...")
@format_option
@pass_ctx
def audit_node(ctx: Context, label: str, keys: tuple[str, ...], fmt: str) -> None:
    """Every event in the life of one node, with what each changed."""
    with opened(ctx, readonly=True) as gate:
        trail = Auditor(gate.log).trail(_identity(gate, label, keys), "node")
    _trail(trail, fmt)


@audit.command("relationship")
@click.argument("rtype", metavar="TYPE")
@endpoint_options
@format_option
@pass_ctx
def audit_relationship(
    ctx: Context,
    rtype: str,
    from_label: str,
    from_keys: tuple[str, ...],
    to_label: str,
    to_keys: tuple[str, ...],
    fmt: str,
) -> None:
    """Every event in the life of one relationship."""
    with opened(ctx, readonly=True) as gate:
        identity = relationship_identity(
            rtype, _identity(gate, from_label, from_keys), _identity(gate, to_label, to_keys)
        )
        trail = Auditor(gate.log).trail(identity, "relationship")
    _trail(trail, fmt)


def _summary(ctx: Context, facet: Facet, value: str, fmt: str, since: Any, until: Any) -> None:
    with opened(ctx, readonly=True) as gate:
        summary = Auditor(gate.log).summary(facet, value, since=since, until=until)
    if fmt in ("json", "jsonl"):
        _emit_json(summary)
        return
    _summary_table(summary)


def _summary_table(summary: Summary) -> None:
    console = _console()
    console.print(
        f"[bold]{summary.facet} {summary.value}[/]: {summary.events} events "
        f"({summary.written} written, {summary.deleted} deleted), "
        f"seq {summary.first_seq}–{summary.last_seq}, {summary.first_at} – {summary.last_at}"
    )
    table = Table("label / type", "events", title="by label")
    for label, count in summary.by_label.items():
        table.add_row(label, str(count))
    console.print(table)
    console.print(_histogram_table(summary.confidence.buckets))


def _histogram_table(buckets: list[int]) -> Table:
    table = Table("confidence", "writes", "", title="confidence distribution")
    peak = max(buckets) or 1
    for i, count in enumerate(buckets):
        table.add_row(
            f"{i / 10:.1f}–{(i + 1) / 10:.1f}", str(count), "█" * round(30 * count / peak)
        )
    return table


def _facet_command(facet: Facet, help_text: str) -> click.Command:
    @click.argument("value")
    @format_option
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


@click.group()
def show() -> None:
    """A node as it stands, or stood."""


@show.command("node")
@click.argument("label")
@click.argument("keys", nargs=-1, required=True, metavar="KEY=VALUE...")
@click.option("--as-of", callback=parse_time, required=True, help="ISO 8601 time.")
@pass_ctx
def show_node(ctx: Context, label: str, keys: tuple[str, ...], as_of: datetime) -> None:
    """The node as it stood at --as-of (JSON)."""
    with opened(ctx, readonly=True) as gate:
        _emit_json(Auditor(gate.log).node_as_of(_identity(gate, label, keys), as_of))


@click.command()
@click.option("--markdown", is_flag=True, help="Markdown instead of the terminal rendering.")
@click.option("--json", "as_json", is_flag=True, help="The report's data as JSON.")
@pass_ctx
def report(ctx: Context, markdown: bool, as_json: bool) -> None:
    """One page an auditor can hand on: size, chain, who wrote and who was refused, drift."""
    settings = ctx.settings()
    with opened(ctx, readonly=True) as gate:
        lags = [
            ProjectionLag(name=r.name, checkpoint=r.checkpoint, lag=r.lag, error=r.error)
            for r in projection_checkpoints(settings, gate.log)
        ]
        stubs = gate.state.counts(gate.log.connection()).stubs
        data = build_report(Auditor(gate.log), stubs, lags)
    if as_json:
        _emit_json(data)
    elif markdown:
        click.echo(render_markdown(data), nl=False)
    else:
        _render_terminal(data)


def _counts(title: str, counts: dict[str, int], what: str = "count") -> list[str]:
    lines = [f"### {title}", ""]
    if not counts:
        return [*lines, "none", ""]
    lines += [f"| {title.split(' ', maxsplit=1)[0].lower()} | {what} |", "|---|---:|"]
    lines += [f"| {key} | {value} |" for key, value in counts.items()]
    return [*lines, ""]


def render_markdown(data: Report) -> str:
    chain = "verified" if data.chain_ok else "**FAILED**"
    lines = [
        "# writegate audit report",
        "",
        f"- events: {data.events} (seq 1–{data.head_seq}), {data.first_at} – {data.last_at}",
        f"- head hash: `{data.head_hash}`",
        f"- hash chain: {chain} ({data.chain_detail})",
        f"- unresolved stubs: {data.unresolved_stubs}",
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
        "| confidence | writes |",
        "|---|---:|",
        *(
            f"| {i / 10:.1f}–{(i + 1) / 10:.1f} | {count} |"
            for i, count in enumerate(data.confidence.buckets)
        ),
        "",
        f"{data.confidence.count} writes, mean {data.confidence.mean}, "
        f"min {data.confidence.minimum}, max {data.confidence.maximum}",
        "",
        "## Projections",
        "",
    ]
    if data.projections:
        lines += ["| projection | checkpoint | lag |", "|---|---:|---:|"]
        lines += [
            f"| {p.name} | {p.checkpoint if p.checkpoint is not None else '?'} | "
            f"{p.lag if p.lag is not None else p.error} |"
            for p in data.projections
        ]
    else:
        lines.append("none configured")
    return "\n".join(lines) + "\n"


def _render_terminal(data: Report) -> None:
    _console().print(Markdown(render_markdown(data)))
