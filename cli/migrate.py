"""``writegate migrate DEST``: the log written again with its personal values sealed — a face
over ``Gate.migrate``. What it made prints as one line and the new head (``--format json``:
the result), a refusal as one line."""

from __future__ import annotations

import click

from writegate.cli.common import Context, emit_result, opened, pass_ctx
from writegate.cli.written import write_format


@click.command()
@click.argument("dest")
@click.option("--batch", default=1000, show_default=True, type=click.IntRange(1, 100_000))
@write_format
@pass_ctx
def migrate(ctx: Context, /, dest: str, batch: int, fmt: str, as_json: bool) -> None:
    """Write the log again into DEST with its personal values sealed, as the schema declares.

    For a log written before a label or property was declared personal. DEST is a new
    SQLite file or an empty postgresql:// database; the log (--db) is left as it was. Each
    event keeps its seq, id and time; a log.migrated event names the old head, whose hashes
    DEST keeps, so `verify --expect-head` of an anchor taken before still holds. Refused if
    the log fails verify. Point --db at DEST, then delete the old log and its backups."""
    from writegate.gate import Rejected

    with opened(ctx) as gate:
        result = gate.migrate(dest, batch=batch, actor=ctx.actor)
    if isinstance(result, Rejected) or fmt == "json" or as_json:
        emit_result(result, text=not (fmt == "json" or as_json))
        return
    click.echo(
        f"migrated {result.source} to {result.dest}: {result.resealed} events sealed, "
        f"{result.subjects} personal nodes named by pseudonym"
    )
    click.echo(f"{result.head_seq}:{result.head_hash}")
