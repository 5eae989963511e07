"""``writegate prove``: is a saved answer true of this log at the seq it was answered at?
(a face over ``writegate.gate.audit.proof.prove``)"""

from __future__ import annotations

from pathlib import Path

import click
import orjson

from writegate.cli.common import Context, fail, opened, pass_ctx
from writegate.cli.render import format_option


@click.command()
@click.argument("answer", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@format_option("table", "json")
@pass_ctx
def prove(ctx: Context, answer: Path, fmt: str) -> None:
    """Prove a saved graph_query ANSWER against this log (a backup taken later will do).

    The chain is checked up to the answer's seq and its head hash, each cited event must
    say what the answer shows, and each fact is reported current or named with the later
    event that replaced it; exit non-zero with the reason when the proof fails."""
    from writegate.gate.audit.proof import prove as proving

    try:
        said = orjson.loads(answer.read_bytes())
    except orjson.JSONDecodeError as exc:
        fail(f"{answer} is not JSON: {exc}")
    if not isinstance(said, dict):
        fail(f"{answer} is not a graph_query answer")
    with opened(ctx, readonly=True) as gate:
        report = proving(gate.log, said)
    if fmt == "json":
        click.echo(orjson.dumps(report.as_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(report.describe())
    if not report.ok:
        fail(report.describe())
