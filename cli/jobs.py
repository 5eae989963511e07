"""``writegate jobs``: long work (rebuilds, replays, backups, copies, imports) as durable
jobs, and running one in the foreground (``writegate rebuild|replay|backup|copy|import``
are jobs you wait for).

The operator holds the log itself, so this command sees every agent's jobs; over MCP an
agent sees only its own unless it is an admin (``gate.server.job_tools``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import click
from pydantic import BaseModel

from writegate.cli.common import SEQ, Context, fail, fail_each, note, opened, pass_ctx
from writegate.cli.job_kinds import kinds
from writegate.cli.log_jobs import log_kinds
from writegate.cli.render import (
    console,
    counted,
    emit_json,
    emit_jsonl,
    format_option,
    plain,
)
from writegate.cli.tables import Rows
from writegate.gate import Gate
from writegate.gate.jobs import Job, JobFailed, JobNotFound, Jobs, JobView, TargetBusy

UNITS = {
    "backup": "pages",
    "import": "items",
    "retain": "values",
    "optimize": "parts",
    "retract": "facts",
}  # what a job's done and total count

JOB_ID = click.IntRange(1, SEQ.max)  # a job's id, as the log can hold it


class Bar:
    """The progress bar a foreground job moves, once its total is known (on claiming)."""

    def __init__(self) -> None:
        self.advance: Callable[[int], None] | None = None
        self.shown = 0

    def seen(self, done: int, _total: int) -> None:
        if self.advance is not None and done > self.shown:
            self.advance(done - self.shown)
            self.shown = done


def run_job(ctx: Context, gate: Gate, kind: str, target: str, options: BaseModel) -> None:
    """Run a rebuild or replay of the projection ``target`` here as a job (``run_kind``)."""
    bar = Bar()
    run_kind(Jobs(gate.log, kinds(ctx.settings(), gate, bar.seen)), bar, ctx, kind, target, options)


def bring_along(ctx: Context, gate: Gate, receipt: int | None) -> None:
    """After a forgetting's or retention's ``receipt`` (None: nothing went), replay every
    configured projection to the head (a job each, as ``replay`` runs it) so that no copy is
    left behind; fail naming, one line each, those that could not be brought along."""
    from writegate.cli.job_kinds import ReplayOptions

    if receipt is None:
        return
    settings = ctx.settings()
    jobs = Jobs(gate.log, kinds(settings, gate))
    failures = []
    for name in settings.projections:
        try:
            started = jobs.start(ctx.actor, "replay", name, ReplayOptions().model_dump(), note)
            ended = jobs.run(started)
        except (ValueError, JobFailed) as exc:
            failures.append(f"{name}: {exc}")
        except TargetBusy as busy:
            failures.append(_busy("replay", name, busy.job))
        else:
            if ended.state != "completed":
                failures.append(f"{name}: replay {ended.state}: {ended.outcome}")
    if failures:
        fail_each([f"{line}; it may still hold the forgotten values" for line in failures])


def run_kind(
    jobs: Jobs,
    bar: Bar,
    ctx: Context,
    kind: str,
    target: str,
    options: BaseModel,
    *,
    echo: bool = True,
) -> Job:
    """Claim ``target`` for ``kind`` (or resume the interrupted job doing the same work on
    it), run it here behind a progress bar, print its outcome (unless the command says
    more itself: ``echo=False``); fail in one line."""
    try:
        job = jobs.start(ctx.actor, kind, target, options.model_dump(), told=note)
    except ValueError as exc:
        fail(str(exc), 2)
    except JobFailed as exc:
        fail(str(exc))
    except TargetBusy as busy:
        fail(_busy(kind, target, busy.job))
    return _run_here(jobs, job, bar, echo)


def _run_here(jobs: Jobs, job: Job, bar: Bar, echo: bool = True) -> Job:
    from writegate.cli.stores import progress_bar

    if job.attempts > 1:
        note(f"resuming job {job.id} ({job.kind} {job.target}) from {job.done:,} of {job.total:,}")
    label, unit = f"{job.kind} {job.target}", UNITS.get(job.kind, "events")
    try:
        with progress_bar(max(job.total, 0), label, unit, shown=sys.stderr.isatty()) as advance:
            bar.advance = advance
            ended = jobs.run(job)
    except JobFailed as exc:
        fail(str(exc))
    if ended.state == "cancelled":
        fail(f"job {job.id} was cancelled; {ended.outcome}")
    if echo:
        click.echo(ended.outcome)
    return ended


def _busy(kind: str, target: str, holder: Job) -> str:
    said = f"{kind} {target}: job {holder.id} ({holder.kind} {holder.target}, {holder.owner})"
    if holder.shown() == "interrupted":
        return (
            f"{said} was interrupted; resume it (writegate jobs resume {holder.id}) "
            f"or cancel it (writegate jobs cancel {holder.id})"
        )
    return f"{said} is running; wait for it or cancel it (writegate jobs cancel {holder.id})"


_limit = click.option(
    "--limit",
    type=click.IntRange(1, 10_000),
    default=50,
    show_default=True,
    help="At most this many jobs, newest first.",
)


@click.group(invoke_without_command=True)
@format_option("table", "json", "jsonl")
@_limit
@click.pass_context
def jobs(click_ctx: click.Context, fmt: str, limit: int) -> None:
    """Long work (rebuild, replay, backup, copy, import) as jobs: list, show, cancel, resume."""
    if click_ctx.invoked_subcommand is None:
        click_ctx.invoke(jobs_list, fmt=fmt, limit=limit)


@jobs.command("list")
@format_option("table", "json", "jsonl")
@_limit
@pass_ctx
def jobs_list(ctx: Context, fmt: str, limit: int) -> None:
    """Every agent's jobs, newest first: what, on which target, who asked, how far it got
    and how it ended (interrupted: its process died; resume or cancel it)."""
    with opened(ctx, readonly=True) as gate:
        views = [JobView.of(job) for job in Jobs(gate.log, {}).table.listed(limit=limit)]
    if fmt == "jsonl":
        emit_jsonl(views)
        return
    if fmt == "json":
        click.echo("[" + ",".join(view.model_dump_json() for view in views) + "]")
        return
    table = Rows(
        counted(len(views), "job"),
        ("id", "kind", "target", "owner", "requested", "state", "progress", "outcome"),
        whole={"id", "kind", "target", "owner", "requested", "progress"},
    )
    for v in views:
        table.add_row(
            str(v.id),
            v.kind,
            v.target,
            v.owner,
            v.requested_at[:19].replace("T", " "),
            v.state + (" (cancelling)" if v.cancel_requested and v.state == "running" else ""),
            f"{v.done:,}/{v.total:,}",
            plain(v.outcome),
        )
    console().print(table)


@jobs.command("show")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@pass_ctx
def jobs_show(ctx: Context, job_id: int) -> None:
    """One job as JSON."""
    with opened(ctx, readonly=True) as gate:
        job = Jobs(gate.log, {}).table.get(job_id)
    if job is None:
        fail(f"no job {job_id}")
    emit_json(JobView.of(job))


@jobs.command("cancel")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@pass_ctx
def jobs_cancel(ctx: Context, job_id: int) -> None:
    """Stop a job: a running one stops at its next batch, an interrupted one at once. A
    rebuilt projection, a backup or a new copy is left as it was before the job, and what
    it staged is removed (said for an interrupted rebuild); an import keeps what it
    imported."""
    with opened(ctx) as gate:
        projections = kinds(ctx.settings(), gate) if ctx.configured() else {}
        jobs = Jobs(gate.log, {**projections, **log_kinds(gate)})
        was = jobs.table.get(job_id)
        try:
            job = jobs.cancel(job_id)
        except JobNotFound as exc:
            fail(str(exc))
    if job.state == "running":
        click.echo(f"job {job_id}: cancellation asked; it stops at its next batch")
    elif was is not None and was.state == "running":  # interrupted: ended here, cleaned up
        click.echo(f"job {job_id}: {job.outcome}")
    else:
        click.echo(f"job {job_id}: {job.state}")


@jobs.command("resume")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@pass_ctx
def jobs_resume(ctx: Context, job_id: int) -> None:
    """Continue an interrupted job here, from its last checkpoint, and wait for it."""
    bar = Bar()
    with opened(ctx) as gate:
        every = {**kinds(ctx.settings(), gate, bar.seen), **log_kinds(gate, bar.seen)}
        jobs = Jobs(gate.log, every)
        try:
            job = jobs.resume(job_id)
        except (JobNotFound, JobFailed) as exc:
            fail(str(exc))
        except TargetBusy as busy:
            fail(_busy(busy.job.kind, busy.job.target, busy.job))
        if job.kind not in jobs.kinds:
            fail(f"job {job_id} is a {job.kind}, which this command cannot run")
        _run_here(jobs, job, bar)
