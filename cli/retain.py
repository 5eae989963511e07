"""``writegate retain``: forget the personal values the schema's retention periods have
passed — a face over ``Gate.retain``, as the operator. What went prints as one line
(``--format json``: the result), a refusal as one line."""

from __future__ import annotations

import click

from writegate.cli.common import Context, emit_result, opened, pass_ctx
from writegate.cli.jobs import bring_along
from writegate.cli.written import write_format
from writegate.gate import Gate, Rejected
from writegate.gate.retention import RetainResult


@click.command()
@click.option("--dry-run", is_flag=True, help="Say what would go; change nothing.")
@write_format
@pass_ctx
def retain(ctx: Context, /, dry_run: bool, fmt: str, as_json: bool) -> None:
    """Forget superseded personal values and personal observations' text past retention.

    The periods are the schema's (a personal property's retention, observation_retention).
    Their events stay and still verify, the expired values reading null; the subjects'
    current values stay readable; a values.expired event is the receipt. Every configured
    projection is then replayed to let go of them (one that cannot be is named; exit 1)."""
    from writegate.cli.log_jobs import retained

    with opened(ctx) as gate:
        if dry_run:
            result: RetainResult | Rejected = gate.retain(dry_run=True, actor=ctx.actor)
        else:
            result = _as_job(ctx, gate)
        if isinstance(result, Rejected) or fmt == "json" or as_json:
            emit_result(result, text=not (fmt == "json" or as_json))
        else:
            click.echo(retained(result))
        bring_along(ctx, gate, result.seq if isinstance(result, RetainResult) else None)


def _as_job(ctx: Context, gate: Gate) -> RetainResult:
    """The retention as a job on the log, waited for (``cli.log_jobs``), as a server runs
    one an admin started; refused (no schema, a retention already running) as one line."""
    from writegate.cli.jobs import Bar, run_kind
    from writegate.cli.log_jobs import RetainOptions, retain_kind
    from writegate.gate.jobs import Jobs

    made: list[RetainResult] = []  # what to go is planned once, as the job's total
    jobs = Jobs(gate.log, {"retain": retain_kind(gate, made.append)})
    run_kind(jobs, Bar(), ctx, "retain", gate.log.describe(), RetainOptions(), echo=False)
    return made[0]
