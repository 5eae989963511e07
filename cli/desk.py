"""``writegate desk``: the read-only desk on a log (a face over ``gate.desk.local.desk``)."""

from __future__ import annotations

import click

from writegate.cli.common import Context, fail, opened, pass_ctx


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Loopback port to listen on (0: any free one).",
)
@pass_ctx
def desk(ctx: Context, port: int) -> None:
    """Open a read-only desk on the log in a browser, on loopback (no action anywhere).

    For an auditor handed a copy: the overview, search, each node's facts, neighbourhood
    and history, the events and observations behind them, and the log, with the reads the
    MCP tools answer, as an auditor. Nobody signs in; it listens on 127.0.0.1 only."""
    from writegate.gate.desk.local import desk as serve_desk
    from writegate.gate.server.http import PortTaken

    def ready(url: str) -> None:
        click.echo(f"writegate desk on {url} (read-only)", err=True)

    with opened(ctx, readonly=True) as gate:
        try:
            serve_desk(gate, port, ready=ready)
        except PortTaken as exc:
            fail(str(exc))
