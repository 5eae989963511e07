"""``writegate optimize``: the text index's structures merged, as a job on the log.

Every write adds its words to the index as a small structure of their own (FTS5 a segment,
PostgreSQL's GIN its pending list), merged with others only as they accumulate, and a
search seeks each of them: a gate-built log's node table held 24 segments at 100k nodes,
and merging them (under a second there) made ``graph_query`` 7% and ``search_nodes`` 6%
faster. The merge belongs to maintenance, not to a write. It holds the log's write lock
while it merges one part (SQLite: a kind's FTS5 table), so appends wait for it; answers
are the same before and after. The same kind serves a server's ``job_start``.
"""

from __future__ import annotations

import time
from functools import partial

import click
from pydantic import BaseModel, ConfigDict

from writegate.cli.common import Context, opened, pass_ctx
from writegate.cli.render import counted
from writegate.eventlog import EventLogError
from writegate.eventlog.sql import Sql
from writegate.gate import Gate
from writegate.gate.jobs import Job, JobFailed, Kind, Report
from writegate.projections.search import text_index_for


class OptimizeOptions(BaseModel):
    """An optimization takes no options: it merges every part of the index."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def optimize_kind(gate: Gate) -> Kind:
    """``optimize`` on ``gate``'s log: progress in parts of the index (each merged in a
    transaction of its own, so a cancellation or a resumption keeps the parts done)."""
    log = gate.log

    def parts() -> list[str]:
        conn = log.connection()
        return text_index_for(conn).parts(conn)

    def total(_target: str, _options: str) -> int:
        if log.readonly:
            raise ValueError(f"{log.describe()} is open read-only")
        return len(parts())

    def run(job: Job, report: Report) -> str:
        every = parts()
        started = time.perf_counter()
        for done, part in enumerate(every):
            if done < job.done:
                continue  # merged before the process that ran it died
            report(done, len(every), force=True)  # a cancellation is heard between parts
            try:
                log.maintain(partial(_merged, part=part))
            except EventLogError as exc:
                raise JobFailed(str(exc)) from exc
        report.done = report.total = len(every)
        return (
            f"optimized the text index of {log.describe()}: "
            f"{counted(len(every), 'part')} merged in {time.perf_counter() - started:.2f}s"
        )

    return Kind(options=OptimizeOptions, total=total, run=run, target=log.describe())


def _merged(conn: Sql, part: str) -> None:
    text_index_for(conn).optimize(conn, part)


@click.command()
@pass_ctx
def optimize(ctx: Context) -> None:
    """Merge the text index's structures so that searches seek fewer of them.

    Maintenance, run now and then (after a large import, or nightly): the index answers
    the same before and after. It holds the log's write lock while it merges each part,
    so writes wait meanwhile."""
    from writegate.cli.jobs import Bar, run_kind
    from writegate.gate.jobs import Jobs

    with opened(ctx) as gate:
        jobs = Jobs(gate.log, {"optimize": optimize_kind(gate)})
        run_kind(jobs, Bar(), ctx, "optimize", gate.log.describe(), OptimizeOptions())
