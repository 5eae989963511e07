"""``writegate copy SRC DEST``: move a log between SQLite and PostgreSQL (a face over
``eventlog.copy_log``); the copy's head hash equals the source's, so it is the same history."""

from __future__ import annotations

import click

from writegate.cli.common import fail


@click.command()
@click.argument("source")
@click.argument("dest")
@click.option("--batch", default=1000, show_default=True, type=click.IntRange(1, 100_000))
def copy(source: str, dest: str, batch: int) -> None:
    """Copy a log into another database, event by event, each event checked.

    SOURCE and DEST are each a SQLite file or a postgresql:// address. DEST is created if
    missing; it must be empty or an earlier copy of SOURCE, which the copy then continues
    (an interrupted copy is resumed by running it again). Agents may keep writing to
    SOURCE: the copy is SOURCE as of the moment it started. DEST's read models are built
    as the events arrive; point --db at DEST to use it."""
    from writegate.eventlog import EventLogError, open_log
    from writegate.eventlog.copying import copy_log
    from writegate.projections.state import StateProjection

    try:
        with (
            open_log(source, create=False, readonly=True) as src,
            open_log(dest, inline=[StateProjection()]) as dst,
        ):
            if src.describe() == dst.describe():
                fail(f"{src.describe()} is both SOURCE and DEST", 2)

            def report(at: int, head: int) -> None:
                click.echo(f"\r{at:,} / {head:,} events", nl=False, err=True)

            seq, digest = copy_log(src, dst, batch=batch, progress=report)
            where = (src.describe(), dst.describe())
    except (EventLogError, OSError) as exc:
        fail(str(exc))
    click.echo("", err=True)
    click.echo(f"copied {where[0]} to {where[1]}: head {seq}")
    click.echo(f"{seq}:{digest}")
