"""``writegate log``: the events themselves, filtered and paged."""

from __future__ import annotations

from datetime import datetime

import click
import orjson

from writegate.cli.common import Context, fail, opened, parse_time, pass_ctx
from writegate.eventlog import Event
from writegate.language import node_identity, node_stream, payload_of, provenance_of


@click.command()
@click.option("--after", "after_seq", type=int, default=0, help="Start after this seq.")
@click.option("--to-seq", type=int, help="Stop at this seq.")
@click.option("--limit", type=click.IntRange(1, 100_000), default=50, show_default=True)
@click.option("--agent", help="Only events by this agent.")
@click.option("--type", "types", multiple=True, help="Only events of this type (repeatable).")
@click.option(
    "--node",
    nargs=1,
    help='Only events touching node LABEL{json keys}, e.g. \'Person{"name":"Alice"}\'.',
)
@click.option("--since", callback=parse_time, help="ISO 8601 time (UTC if no offset).")
@click.option("--until", callback=parse_time)
@click.option("--json", "as_json", is_flag=True, help="One JSON event per line.")
@pass_ctx
def log(
    ctx: Context,
    after_seq: int,
    to_seq: int | None,
    limit: int,
    agent: str | None,
    types: tuple[str, ...],
    node: str | None,
    since: datetime | None,
    until: datetime | None,
    as_json: bool,
) -> None:
    """List events, oldest first, filtered and paginated (continue with --after)."""
    stream = node_stream(_node_argument(node)) if node else None
    with opened(ctx, readonly=True) as gate:
        page = gate.log.read(
            after_seq=after_seq,
            to_seq=to_seq,
            limit=limit,
            agent=agent,
            types=list(types) or None,
            stream=stream,
            since=since,
            until=until,
        )
    for event in page.events:
        click.echo(
            orjson.dumps(event.model_dump(mode="json")).decode() if as_json else _line(event)
        )
    if page.next_after is not None and not as_json:
        click.echo(f"… more: --after {page.next_after}", err=True)


def _node_argument(text: str) -> str:
    label, brace, keys = text.partition("{")
    try:
        return node_identity(label.removeprefix(":"), orjson.loads(brace + keys))
    except orjson.JSONDecodeError:
        fail(f"--node {text!r} is not LABEL{{json keys}}", 2)


def _line(event: Event) -> str:
    subject = payload_of(event).subject
    provenance = provenance_of(event)
    extra = f"  confidence={provenance.confidence}" if provenance else ""
    when = event.occurred_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{event.seq:>6}  {when}  {event.actor.agent:<20}  {event.type:<20}  {subject}{extra}"
