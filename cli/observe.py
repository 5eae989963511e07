"""``writegate observe``, ``search --observations`` and ``show observation``: observations
for people without an MCP client.

``observe`` calls ``Gate.record_observation`` as the operator, with the arguments of the
``record_observation`` tool, and prints the observation's id (``--format json``: the
tool's result); the reads call what ``search_observations`` and ``open_observation`` call
(``gate.reads.observations``), so an operator and an agent get the same answer.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import click
from rich.table import Table

from writegate.cli.common import Context, emit_result, fail, opened, parse_time, pass_ctx
from writegate.cli.grants import read_grant
from writegate.cli.render import console, counted, emit_json, emit_jsonl, plain
from writegate.cli.tables import Rows
from writegate.cli.write_options import cites_option
from writegate.cli.written import write_format
from writegate.gate.reads.observations import ObservationPage, ObservationView

EXCERPT = 120  # characters of an observation's text a table shows


@click.command()
@click.argument("text", required=False)
@click.option(
    "--file",
    "path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read the text from this UTF-8 file instead (a document: kept whole, found by passage).",
)
@click.option("--source", required=True, help="Where the text came from.")
@click.option(
    "--method",
    "extraction_method",
    required=True,
    help="How it was obtained (default formula: api, parsed, manual, llm).",
)
@click.option(
    "--reliability",
    type=click.FloatRange(0, 1),
    help="How far the source is trusted, 0 to 1 (default 0.5).",
)
@click.option(
    "--said-at", callback=parse_time, help="When it was said or valid (default: when recorded)."
)
@click.option("--session", help="The conversation or session it belongs to.")
@click.option("--scope", help="The scope it is kept in (default: the implicit one).")
@click.option("--idempotency-key", help="Retrying with the same key appends nothing.")
@cites_option
@write_format
@pass_ctx
def observe(
    ctx: Context,
    text: str | None,
    path: Path | None,
    source: str,
    extraction_method: str,
    reliability: float | None,
    said_at: datetime | None,
    session: str | None,
    scope: str | None,
    idempotency_key: str | None,
    observations: tuple[str, ...],
    fmt: str,
    as_json: bool,
) -> None:
    """Keep TEXT (what was read or heard) as an observation and print its id.

    TEXT - reads it from stdin, --file FILE from a file. Writes cite the id (write node
    --observation ID); the same text from the same source and time is one observation,
    recorded once. A document (over 65,536 characters, up to [limits] max_document_bytes,
    4 MiB) is one too, cut into passages that search finds and writes cite as ID#START
    (--format json lists them). --observation ID names an observation it was taken from
    (a note from a transcript): its authority is then no higher than that one's."""
    from writegate.gate import ObservationResult

    text = _text(text, path)
    with opened(ctx) as gate:
        result = gate.record_observation(
            actor=ctx.actor,
            text=text,
            source=source,
            extraction_method=extraction_method,
            reliability=reliability,
            said_at=said_at,
            session=session,
            scope=scope,
            idempotency_key=idempotency_key,
            observations=observations,
        )
    wanted = fmt == "json" or as_json
    if wanted or not isinstance(result, ObservationResult):
        emit_result(result, text=not wanted)
        return
    click.echo(result.observation_id)
    if result.status == "unchanged":
        click.echo(f"(recorded before, at seq {result.seq})", err=True)
    if result.passages:
        click.echo(f"({len(result.passages)} passages: cite one as ID#START)", err=True)


def _text(text: str | None, path: Path | None) -> str:
    """The text to keep: TEXT, stdin for ``-``, or the file (exactly one of them)."""
    if (text is None) == (path is None):
        fail("observe: give TEXT (- for stdin) or --file FILE, one of them", 2)
    if path is not None:
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            fail(f"{path} is not UTF-8 text: {exc.reason} at byte {exc.start}")
    assert text is not None
    return sys.stdin.read() if text == "-" else text


def search_observations(ctx: Context, text: str, limit: int, cursor: str | None, fmt: str) -> None:
    """``search --observations``: the observations whose words begin with TEXT's words."""
    from writegate.gate.errors import GateRejection

    with opened(ctx, readonly=True) as gate:
        try:
            reader = gate.observation_reader(read_grant(ctx, gate))
            page = reader.search_observations(text, limit, cursor)
        except GateRejection as exc:
            fail(f"{exc.code}: {exc.message}")
    show_observations(page, fmt)
    if page.next_cursor is not None and fmt != "json":
        click.echo(f"… more: --cursor '{page.next_cursor}'", err=True)


def show_observations(page: ObservationPage, fmt: str) -> None:
    """A page as the tool returns it (json), one observation a line (jsonl), or a table."""
    if fmt == "json":
        emit_json(page)
        return
    if fmt == "jsonl":
        emit_jsonl(page.observations)
        return
    table = Rows(
        counted(len(page.observations), "observation"),
        ("observation", "said at", "source / method", "text", "facts"),
        whole={"observation", "said at", "facts"},
    )
    for o in page.observations:
        table.add_row(
            o.observation_id,
            o.said_at[:19],
            f"{o.source} / {o.extraction_method}",
            excerpt(o.text),
            str(len(o.facts)),
        )
    console().print(table)


def show_observation(view: ObservationView, fmt: str) -> None:
    """One observation as the tool returns it (json), or its fields and whole text."""
    if fmt == "json":
        emit_json(view)
        return
    table = Table(show_header=False, title=view.observation_id)
    table.add_column(overflow="fold")
    table.add_column(overflow="fold")
    rows = {
        "source": f"{view.source} / {view.extraction_method}",
        "confidence": view.confidence,
        "said at": view.said_at,
        "recorded": f"seq {view.seq} by {view.agent} at {view.recorded_at}",
        "session": view.session,
        "facts": "\n".join(view.facts),
        "text": view.text,
    }
    for name, value in rows.items():
        table.add_row(name, plain(value))
    console().print(table)


def excerpt(text: str, length: int = EXCERPT) -> str:
    """The start of a text, on one line."""
    line = " ".join(text.split())
    return line if len(line) <= length else line[: length - 1] + "…"
