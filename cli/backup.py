"""``writegate backup``: a verified copy of a live log, as a job you wait for (a face over
``gate.backup.backup``, run by ``cli.log_jobs``)."""

from __future__ import annotations

from pathlib import Path

import click

from writegate.cli.common import Context, fail, opened, pass_ctx


@click.command()
@click.argument("dest", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--tokens",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="WRITEGATE_TOKENS",
    help="The tokens file to copy beside it (env WRITEGATE_TOKENS; default: <db>.tokens.json).",
)
@pass_ctx
def backup(ctx: Context, dest: Path, tokens: Path | None) -> None:
    """Copy the log while agents write, verify the copy, and copy the tokens file beside it.

    DEST must not exist. The copy is the log as of one commit; restore it by copying it
    (and DEST.tokens.json) back while nothing serves the log, or point --db at it. It runs
    as a job on DEST (`writegate jobs`): cancelled or killed, it leaves nothing at DEST."""
    from writegate.cli.jobs import Bar, run_kind
    from writegate.cli.log_jobs import BackupOptions, backup_kind, destination
    from writegate.gate.backup import BackupReport
    from writegate.gate.jobs import Jobs

    if ctx.db_file is None:
        fail(
            "backup copies a SQLite log; a log on PostgreSQL is backed up by PostgreSQL "
            "(pg_dump), or copied to a file with `writegate copy`",
            2,
        )
    made: list[BackupReport] = []
    options = BackupOptions(tokens=str(tokens.resolve()) if tokens else None)
    with opened(ctx) as gate:  # the job is recorded in the log's database
        bar = Bar()
        jobs = Jobs(gate.log, {"backup": backup_kind(gate.log, bar.seen, made.append)})
        run_kind(jobs, bar, ctx, "backup", destination(str(dest)), options, echo=False)
    (report,) = made
    checked = ", ".join(check.name for check in report.integrity.checks)
    click.echo(f"backed up {ctx.where} to {report.path} ({report.size:,} bytes)")
    click.echo(f"the copy verifies ({checked}) up to seq {report.head_seq}")
    click.echo(f"tokens: copied to {report.tokens}" if report.tokens else "tokens: none to copy")
    if report.subjects:
        click.echo(
            f"it holds the personal values of {report.subjects} subject(s): a forgetting after "
            "this does not reach it; restored, bring it up to date with `writegate copy LOG "
            "BACKUP`, which applies the forgettings recorded since"
        )
    click.echo(f"{report.head_seq}:{report.head_hash}")
