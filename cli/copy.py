"""``writegate copy SRC DEST``: move a log between SQLite and PostgreSQL (a face over
``eventlog.copy_log``); the copy's head hash equals the source's, so it is the same history."""

from __future__ import annotations

import click

from writegate.cli.common import Context, fail, pass_ctx


@click.command()
@click.argument("source")
@click.argument("dest")
@click.option("--batch", default=1000, show_default=True, type=click.IntRange(1, 100_000))
@pass_ctx
def copy(ctx: Context, source: str, dest: str, batch: int) -> None:
    """Copy a log into another database, event by event, each event checked.

    SOURCE and DEST are each a SQLite file or a postgresql:// address. DEST is created if
    missing; it must be empty or an earlier copy of SOURCE, which the copy then continues
    (an interrupted copy is resumed by running it again). Agents may keep writing to
    SOURCE: the copy is SOURCE as of the moment it started. DEST's read models are built
    as the events arrive; point --db at DEST to use it. It runs as a job on DEST recorded
    in SOURCE's database (`writegate jobs`): a new file DEST appears only when complete."""
    from writegate.cli.jobs import Bar, run_kind
    from writegate.cli.log_jobs import CopyOptions, copy_kind, destination
    from writegate.eventlog import EventLogError, open_log
    from writegate.gate.jobs import Jobs

    made: list[tuple[int, str, int]] = []
    try:
        with open_log(source, create=False) as src:  # the job is recorded in SOURCE's database
            bar = Bar()
            jobs = Jobs(src, {"copy": copy_kind(src, bar.seen, dest, made.append)})
            options = CopyOptions(batch=batch)
            ended = run_kind(jobs, bar, ctx, "copy", destination(dest), options, echo=False)
            where = src.describe()
    except (EventLogError, OSError) as exc:
        fail(str(exc))
    ((seq, digest, applied),) = made
    click.echo(f"copied {where} to {ended.target}: head {seq}")
    if applied:  # values DEST held of subjects forgotten since its head: gone from it now
        click.echo(f"applied {applied} forgetting(s) recorded since DEST's head")
    click.echo(f"{seq}:{digest}")
