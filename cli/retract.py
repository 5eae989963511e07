"""``writegate retract`` and ``writegate unretract``: take back what a source, agent, method
or observation said, and put it back — faces over ``Gate.retract`` / ``Gate.unretract`` (the
reviewers' MCP tools ``retract_source`` / ``unretract_source``), as the operator.

``--dry-run`` prints the impact report and appends nothing. A retraction runs as a job on
the log (``writegate jobs`` lists it; its progress is the facts taken back), its total the
report's count; then every configured projection is brought to the head, as after a
forgetting. The outcome prints as a summary (``--json``: the result, one line), a refusal
as one line and exit 1.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import click
from pydantic import BaseModel, ConfigDict

from writegate.cli.common import (
    Context,
    emit_result,
    fail,
    opened,
    parse_time,
    pass_ctx,
    refusal_line,
)
from writegate.cli.jobs import bring_along
from writegate.cli.render import counted
from writegate.cli.written import write_format
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected
from writegate.gate.jobs import Job, JobFailed, Kind, Report
from writegate.gate.retraction import RetractResult

_SHOWN = 20  # facts listed by name in a summary; the rest counted


class RetractOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str | None = None
    agent: str | None = None
    method: str | None = None
    observation: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    reason: str = ""


@click.command()
@click.option("--source", help="Take back what this source said.")
@click.option("--agent", help="Take back what this agent wrote.")
@click.option("--method", help="Take back what this extraction method found.")
@click.option("--observation", help="Take back what cites this observation (or its passages).")
@click.option(
    "--since", callback=parse_time, help="Only writes from this ISO 8601 time (UTC if no offset)."
)
@click.option(
    "--until", callback=parse_time, help="Only writes before this ISO 8601 time (UTC if no offset)."
)
@click.option("--reason", default="", help="Why: kept in the retraction's events.")
@click.option("--dry-run", is_flag=True, help="Print the impact report; change nothing.")
@write_format
@pass_ctx
def retract(
    ctx: Context,
    /,
    source: str | None,
    agent: str | None,
    method: str | None,
    observation: str | None,
    since: datetime | None,
    until: datetime | None,
    reason: str,
    dry_run: bool,
    fmt: str,
    as_json: bool,
) -> None:
    """Take back what a source, agent, method or observation said (undo with unretract).

    A fact with other support stays, at the confidence its remaining supports give; one with
    none goes back to the version before it, or is retracted if it has none; a merge decided
    on that evidence is proposed for undoing in the review queue. --dry-run prints the
    report: the facts each way, the merges, the observations. Without it, a --reason is
    needed; the retraction runs as a job and prints its id."""
    options = RetractOptions(
        source=source,
        agent=agent,
        method=method,
        observation=observation,
        since=since,
        until=until,
        reason=reason,
    )
    with opened(ctx) as gate:
        if dry_run:
            result: RetractResult | Rejected = _retracted(gate, options, ctx.actor, dry_run=True)
        else:
            result = _as_job(ctx, gate, options)
        if isinstance(result, Rejected) or fmt == "json" or as_json:
            emit_result(result, text=not (fmt == "json" or as_json))
        else:
            for line in retracted_lines(result):
                click.echo(line)
        if isinstance(result, RetractResult):
            bring_along(ctx, gate, result.seq)


@click.command()
@click.argument("retraction", metavar="ID")
@click.option("--reason", default="", help="Why: kept in the events.")
@write_format
@pass_ctx
def unretract(ctx: Context, /, retraction: str, reason: str, fmt: str, as_json: bool) -> None:
    """Undo a retraction: each fact it changed put back, values, supports and confidences.

    A fact written since the retraction is left as it is and named. ID is the retraction's
    (r-…), as retract printed it."""
    with opened(ctx) as gate:
        result = gate.unretract(retraction, reason=reason, actor=ctx.actor)
        if isinstance(result, Rejected) or fmt == "json" or as_json:
            emit_result(result, text=not (fmt == "json" or as_json))
            return
        click.echo(
            f"unretracted {result.retraction}: {len(result.restored):,} facts put back"
            f" in {result.batches} batches" + (f", seq {result.seq}" if result.seq else "")
        )
        for identity in result.changed:
            click.echo(f"  left as it is (written since): {identity}")
        bring_along(ctx, gate, result.seq)


def _retracted(
    gate: Gate,
    options: RetractOptions,
    actor: Actor,
    *,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> RetractResult | Rejected:
    return gate.retract(
        source=options.source,
        agent=options.agent,
        method=options.method,
        observation=options.observation,
        since=options.since,
        until=options.until,
        reason=options.reason,
        dry_run=dry_run,
        actor=actor,
        progress=progress,
    )


def retract_kind(gate: Gate, made: Callable[[RetractResult], None] | None = None) -> Kind:
    """``retract`` on ``gate``'s log as a job: its total the impact report's facts, its
    progress the facts taken back; what a cancelled or killed job appended stays (each batch
    is a whole event; ``unretract`` the id to undo it)."""

    def total(_target: str, stored: str) -> int:
        planned = _retracted(
            gate, RetractOptions.model_validate_json(stored), gate.default_actor, dry_run=True
        )
        if isinstance(planned, Rejected):
            raise JobFailed(refusal_line(planned))
        return planned.facts

    def run(job: Job, report: Report) -> str:
        report(0, job.total, force=True)
        owner = Actor(agent=job.owner, session=job.session, transport=job.transport)
        options = RetractOptions.model_validate(job.options_of())
        result = _retracted(
            gate, options, owner, progress=lambda done, _: report(done, max(job.total, done))
        )
        if isinstance(result, Rejected):
            raise JobFailed(refusal_line(result))
        report.reached(result.facts, result.facts)
        if made:
            made(result)
        return retracted_lines(result)[0]

    return Kind(options=RetractOptions, total=total, run=run, target=gate.log.describe())


def _as_job(ctx: Context, gate: Gate, options: RetractOptions) -> RetractResult | Rejected:
    from writegate.cli.jobs import Bar, run_kind
    from writegate.gate.jobs import Jobs

    if not options.reason.strip():  # refused before a job is claimed
        return _retracted(gate, options, ctx.actor)
    made: list[RetractResult] = []
    jobs = Jobs(gate.log, {"retract": retract_kind(gate, made.append)})
    run_kind(jobs, Bar(), ctx, "retract", gate.log.describe(), options, echo=False)
    if not made:
        fail("the retraction ended without a result")
    return made[0]


def retracted_lines(result: RetractResult) -> list[str]:
    """A retraction's summary: the first line its job's outcome."""
    counts = (
        f"{len(result.reverted):,} reverted, {len(result.retracted):,} retracted, "
        f"{len(result.kept):,} kept at their other support"
    )
    if result.dry_run:
        head = f"would take back {counted(result.facts, 'fact')}: {counts}"
    elif result.retraction is None:
        head = "nothing to take back"
    else:
        head = (
            f"retraction {result.retraction}: {counted(result.facts, 'fact')} in "
            f"{counted(result.batches, 'batch', 'batches')}: {counts}; seq {result.seq}"
        )
    lines = [head]
    for identity in result.reverted[:_SHOWN]:
        lines.append(f"  reverted: {identity}")
    for identity in result.retracted[:_SHOWN]:
        lines.append(f"  retracted: {identity}")
    for kept in result.kept[:_SHOWN]:
        was = f"{kept.confidence_before:.3f}" if kept.confidence_before is not None else "-"
        now = f"{kept.confidence:.3f}" if kept.confidence is not None else "-"
        lines.append(f"  kept: {kept.identity} at {now} (was {was}; {', '.join(kept.sources)})")
    if result.facts > 3 * _SHOWN:
        lines.append(f"  … (--json lists all {result.facts:,})")
    for merge in result.merges:
        lines.append(f"  merge proposed for undoing: {merge} (writegate review list)")
    for observation in result.observations:
        lines.append(f"  observation taken back: {observation}")
    return lines
