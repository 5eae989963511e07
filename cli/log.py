"""``writegate log``: the events themselves, filtered, paged either way, or followed.

Forward pages (``--after``) and backward ones (``--reverse``, ``--to-seq``) read the same
filters; ``--follow`` polls the log (read-only, like every read command) and prints what
is appended until SIGINT or SIGTERM.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import textwrap
import threading
from datetime import datetime
from typing import Any

import click
from pydantic import BaseModel, ConfigDict

from writegate.cli.audit_show import identity_of
from writegate.cli.common import SEQ, Context, fail, opened, parse_time, pass_ctx
from writegate.cli.nodes import parse_node
from writegate.cli.render import did_you_mean, emit_json, format_option, json_line, plain
from writegate.eventlog import Event
from writegate.gate import Gate
from writegate.gate.audit.auditor import Auditor
from writegate.language import (
    EVENT_TYPES,
    node_stream,
    payload_of,
    provenance_of,
    said_of,
)

POLL_SECONDS = 0.2


class LogPage(BaseModel):
    """A forward page; continue with ``--after next_after``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    events: list[Event]
    next_after: int | None


def _event_types(_ctx: Any, _param: Any, values: tuple[str, ...]) -> tuple[str, ...]:
    for value in values:
        if value not in EVENT_TYPES:
            fail(
                f"--type {value!r} is not an event type ({', '.join(EVENT_TYPES)})"
                f"{did_you_mean(value, EVENT_TYPES)}",
                2,
            )
    return values


@click.command()
@click.option("--after", "after_seq", type=SEQ, default=0, help="Start after this seq.")
@click.option("--to-seq", type=SEQ, help="Stop at this seq (--reverse: start there).")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(1, 100_000),
    default=50,
    show_default=True,
    help="At most this many events.",
)
@click.option("--reverse", is_flag=True, help="Newest first (older ones: --to-seq).")
@click.option(
    "--follow", is_flag=True, help="Then print events as they are appended (Ctrl-C stops)."
)
@click.option("--agent", help="Only events by this agent.")
@click.option(
    "--type",
    "types",
    multiple=True,
    callback=_event_types,
    help=f"Only events of this type (repeatable): {', '.join(EVENT_TYPES)}.",
)
@click.option(
    "--node",
    help="Only events touching this node (its corroborations too): Label:key=value or "
    "Label{json keys} (a synonym label reads its canonical one).",
)
@click.option("--since", callback=parse_time, help="From this ISO 8601 time (UTC if no offset).")
@click.option(
    "--until", callback=parse_time, help="Up to this ISO 8601 time (UTC if no offset), or now."
)
@format_option()
@pass_ctx
def log(
    ctx: Context,
    after_seq: int,
    to_seq: int | None,
    limit: int,
    reverse: bool,
    follow: bool,
    agent: str | None,
    types: tuple[str, ...],
    node: str | None,
    since: datetime | None,
    until: datetime | None,
    fmt: str,
) -> None:
    """List events, oldest first, filtered and paginated (continue with --after)."""
    if follow and (reverse or fmt == "json" or to_seq is not None or until is not None):
        fail(
            "--follow prints events as they come: not with --reverse, --to-seq, --until "
            "or --format json",
            2,
        )
    if reverse and after_seq:
        fail("--after pages forward; with --reverse, page with --to-seq", 2)
    named = parse_node(node, "--node") if node else None
    with opened(ctx, readonly=True, whole_log="log") as gate:
        filters: dict[str, Any] = {
            "agent": agent,
            "types": list(types) or None,
            "stream": said_of(node_stream(identity_of(gate, named))) if named else None,
            "since": since,
        }
        if follow:
            _follow(gate, after_seq, limit, filters, fmt)
        elif reverse:
            _reverse(gate, limit, to_seq, until, filters, fmt)
        else:
            page = gate.log.read(
                after_seq=after_seq, to_seq=to_seq, limit=limit, until=until, **filters
            )
            if fmt == "json":
                emit_json(LogPage(events=page.events, next_after=page.next_after))
                return
            _print(page.events, fmt)
            if page.next_after is not None and fmt == "table":
                click.echo(f"… more: --after {page.next_after}", err=True)


def _reverse(
    gate: Gate,
    limit: int,
    to_seq: int | None,
    until: datetime | None,
    filters: dict[str, Any],
    fmt: str,
) -> None:
    newest = Auditor(gate.log).newest(limit=limit, to_seq=to_seq, until=until, **filters)
    if fmt == "json":
        emit_json(newest)
        return
    _print(newest.events, fmt)
    if newest.next_to_seq is not None and fmt == "table":
        click.echo(f"… more: --reverse --to-seq {newest.next_to_seq}", err=True)


def _follow(gate: Gate, after: int, limit: int, filters: dict[str, Any], fmt: str) -> None:
    """Print from ``after`` (or the newest ``limit`` events), then poll until a signal."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    if not after:
        newest = Auditor(gate.log).newest(limit=limit, **filters)
        _print(newest.events[::-1], fmt)
        after = newest.events[0].seq if newest.events else 0
    while not stop.is_set():
        with gate.log.snapshot():  # the head and the page from one commit: nothing skipped
            head = gate.log.head()[0]
            page = gate.log.read(after_seq=after, to_seq=head, limit=1000, **filters)
        _print(page.events, fmt)
        if page.next_after is not None:
            after = page.next_after
            continue
        after = head
        stop.wait(POLL_SECONDS)


def _print(events: list[Event], fmt: str) -> None:
    """An event a line; in a terminal, a line longer than it is wrapped, indented, never
    cut: a seq, an identity or a confidence cut short misleads."""
    width = _width()
    for event in events:
        if fmt != "table":
            click.echo(json_line(event))
            continue
        line = _line(event)
        if width is not None and len(line) > width:
            line = textwrap.fill(line, width, subsequent_indent=" " * 8, break_on_hyphens=False)
        click.echo(line)


def _width() -> int | None:
    """The terminal's width (COLUMNS overrides); None when the lines go to a pipe or a
    file and no width was asked for: they are kept on one line each."""
    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        return None
    return max(shutil.get_terminal_size().columns, 40)


def _line(event: Event) -> str:
    subject = payload_of(event).subject
    provenance = provenance_of(event)
    extra = f"  confidence={plain(provenance.confidence)}" if provenance else ""
    when = event.occurred_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{event.seq:>6}  {when}  {event.actor.agent:<20}  {event.type:<20}  {subject}{extra}"
