"""``writegate backup``: a verified copy of a live log (a face over ``gate.backup.backup``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click

from writegate.cli.common import Context, fail, pass_ctx


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
    (and DEST.tokens.json) back while nothing serves the log, or point --db at it."""
    from writegate.eventlog import EventLog, EventLogError
    from writegate.gate.backup import BackupFailed
    from writegate.gate.backup import backup as take_backup

    if ctx.db_file is None:
        fail(
            "backup copies a SQLite log; a log on PostgreSQL is backed up by PostgreSQL "
            "(pg_dump), or copied to a file with `writegate copy`",
            2,
        )

    try:
        with EventLog(ctx.db_file, readonly=True) as log:
            report = take_backup(log, dest, tokens=tokens)
    except (BackupFailed, EventLogError, OSError, sqlite3.DatabaseError) as exc:
        fail(str(exc))
    checked = ", ".join(check.name for check in report.integrity.checks)
    click.echo(f"backed up {ctx.where} to {report.path} ({report.size:,} bytes)")
    click.echo(f"the copy verifies ({checked}) up to seq {report.head_seq}")
    click.echo(f"tokens: copied to {report.tokens}" if report.tokens else "tokens: none to copy")
    click.echo(f"{report.head_seq}:{report.head_hash}")
