"""Running jobs: claim the target, report progress by checkpoint, heed cancellation,
resume what a dead process left.

Every job runs the same way whoever started it: ``writegate rebuild`` runs one in the
foreground and waits (so Ctrl-C, a crash and a resumption behave as over MCP), a server
runs one an admin started on a worker thread (``start(..., detach=True)``). The work
itself belongs to its kind (``Kind``): the runner knows nothing of projections, so the
gate's dependency arrows hold; ``cli`` supplies the kinds it can run.

A job whose process died stays ``running`` in the table with a dead pid (or a stale
heartbeat), shown as ``interrupted``; it keeps its target, so nothing else rebuilds it
meanwhile. It is continued by ``writegate jobs resume ID`` or by the next request for the
same work on the same target; a request for other work on that target is refused until it
is resumed or cancelled.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from writegate.eventlog import Actor, Log, canonical_json
from writegate.eventlog.errors import one_line
from writegate.gate.jobs.records import HEARTBEAT_SECONDS, Job
from writegate.gate.jobs.table import JobTable, TargetBusy

REPORT_SECONDS = 0.2  # progress is recorded at most this often (each is a write transaction)


class JobCancelled(Exception):
    """Raised inside the work by ``Report`` once a cancellation was asked for; a kind may
    raise it again saying what the cancellation left (the job's outcome)."""


class JobFailed(Exception):
    """The work failed; the job is recorded ``failed`` with this message."""


class JobNotFound(Exception):
    """No such job, or not one the asker may see (the two are answered alike)."""


def visible(job: Job | None, agent: str, admin: bool) -> Job | None:
    """The job if the asker may see it — its owner, or an admin — else None: another
    agent's job is answered exactly as one that does not exist."""
    return job if job is not None and (admin or job.owner == agent) else None


class Report:
    """Handed to the work: call it with the events done and the total after each batch.

    Progress is recorded by a thread of the report's own, on its own connection: the
    work's may be inside a read transaction across its batches (a copy reads one snapshot
    of its source), where a write cannot begin."""

    def __init__(self, table: JobTable, job: Job) -> None:
        self.table, self.job = table, job
        self._last = 0.0
        self.done, self.total = job.done, job.total  # as last told
        self._writer = ThreadPoolExecutor(1, thread_name_prefix=f"job-{job.id}-report")

    def __call__(self, done: int, total: int, *, force: bool = False) -> None:
        """``force``: record it now, however recent the last (a last chance to heed a
        cancellation before the work is kept)."""
        self.done, self.total = done, total
        now = time.monotonic()
        if now - self._last < REPORT_SECONDS and not force:
            return
        self._last = now
        try:
            cancelled = self._writer.submit(self.table.progress, self.job.id, done, total).result()
        except Exception:  # a busy or lost log: the work goes on, the next report tells
            return
        if cancelled:
            raise JobCancelled(f"job {self.job.id} cancelled")

    def reached(self, done: int, total: int) -> None:
        """How far the work got as it ends, recorded with its outcome (the last report may
        have claimed less: only what a dead process would have kept)."""
        self.done, self.total = done, total

    def close(self) -> None:
        """The report's thread ends, letting go of its connection."""
        self._writer.submit(self.table.log.disconnect).result()
        self._writer.shutdown()

    @property
    def resuming(self) -> bool:
        """Whether this run continues an earlier one that got somewhere."""
        return self.job.attempts > 1 and self.job.done > 0


@dataclass(frozen=True)
class Kind:
    """One kind of job: the model of its options, ``total`` (events, items or pages to do)
    on claiming, then ``run``, which returns its outcome in one line and calls the report
    after each batch, with only what would outlive its process (a resumed job continues
    from the progress recorded). ``abandon`` removes what a dead process left half-made
    when its job is cancelled, and may say what it removed or left (added to the outcome);
    ``target``: the only one this kind works on (an import's: the log)."""

    options: type[BaseModel]
    total: Callable[[str, str], int]  # (target, options as stored) -> total
    run: Callable[[Job, Report], str]
    abandon: Callable[[Job], str | None] | None = None
    target: str | None = None


class Jobs:
    def __init__(self, log: Log, kinds: Mapping[str, Kind]) -> None:
        self.table = JobTable(log)
        self.kinds = dict(kinds)

    def start(
        self,
        actor: Actor,
        kind: str,
        target: str,
        options: Mapping[str, Any],
        told: Callable[[str], None] | None = None,
    ) -> Job:
        """Claim ``target`` for new work. An interrupted job holding it (its process died)
        is taken over: resumed if it is the same work, else ended as superseded — what it
        leaves is its kind's to say, as for a cancellation — and the target claimed for
        this work (``told`` hears that in one line), so a service restarted after a crash
        never waits on a job nobody runs. ``TargetBusy`` while a live job holds it,
        ``ValueError`` for work this process cannot do (an unknown kind or target, options
        the kind does not take)."""
        if (spec := self.kinds.get(kind)) is None:
            raise ValueError(f"no {kind!r} jobs here (only {', '.join(self.kinds) or 'none'})")
        stored = canonical_json(spec.options.model_validate(options).model_dump(mode="json"))
        options_text = stored.decode()
        try:
            total = spec.total(target, options_text)
        except ValueError:  # no such target, or options the kind does not take
            raise
        except Exception as exc:  # the target cannot be reached
            raise JobFailed(one_line(exc)) from exc
        try:
            return self.table.claim(kind, target, options_text, actor, total)
        except TargetBusy as busy:
            held = busy.job
            if held.alive():
                raise
            if (adopted := self.table.adopt(held)) is None:  # another resumer won
                raise TargetBusy(self.table.get(held.id) or held) from None
            if (held.kind, held.options) == (kind, options_text):
                return adopted
        self._abandon(adopted, f"superseded by a {kind} of {target}")
        if told is not None:
            told(
                f"job {held.id} ({held.kind} {held.target}) was interrupted; this {kind} "
                "supersedes it"
            )
        return self.table.claim(kind, target, options_text, actor, total)

    def resume(self, job_id: int) -> Job:
        """Take over an interrupted job; ``TargetBusy`` if it is still running somewhere."""
        job = self.table.get(job_id)
        if job is None:
            raise JobNotFound(f"no job {job_id}")
        if job.state != "running":
            raise JobFailed(f"job {job_id} is {job.state}; only an interrupted job resumes")
        if job.alive() or (adopted := self.table.adopt(job)) is None:
            raise TargetBusy(self.table.get(job_id) or job)
        return adopted

    def cancel(self, job_id: int) -> Job:
        """Ask a running job to stop at its next batch; an interrupted one (nobody runs
        it) is cancelled at once. What it leaves is its kind's to say (a rebuild into a
        staging projector: the old projection, as it was)."""
        job = self.table.get(job_id)
        if job is None:
            raise JobNotFound(f"no job {job_id}")
        if job.state == "running":
            if job.alive():
                self.table.request_cancel(job_id)
            else:
                self._abandon(job, "cancelled while interrupted")
        return self.table.get(job_id) or job

    def _abandon(self, job: Job, why: str) -> None:
        """End an interrupted job that will not run again, its kind cleaning up after it."""
        spec = self.kinds.get(job.kind)
        if spec is not None and spec.abandon is not None and (left := spec.abandon(job)):
            why = f"{why}; {left}"
        self.table.finish(job.id, "cancelled", why)

    def run(self, job: Job) -> Job:
        """Run a claimed job here until it ends; the ended record. ``JobFailed`` if the work
        failed, ``KeyboardInterrupt`` passes on after recording a cancellation."""
        stop = threading.Event()
        beating = threading.Thread(
            target=self._beat, args=(job.id, stop), name=f"job-{job.id}-heartbeat", daemon=True
        )
        beating.start()
        report = Report(self.table, job)
        try:
            outcome = self.kinds[job.kind].run(job, report)
        except JobCancelled as exc:
            self.table.finish(job.id, "cancelled", str(exc), (report.done, report.total))
        except KeyboardInterrupt:
            self.table.finish(job.id, "cancelled", "interrupted by the operator")
            raise
        except Exception as exc:
            message = one_line(exc) if not isinstance(exc, JobFailed) else str(exc)
            self.table.finish(job.id, "failed", message)
            raise JobFailed(message) from exc
        else:
            self.table.finish(job.id, "completed", outcome, (report.done, report.total))
        finally:
            report.close()
            stop.set()
            beating.join()
        return self.table.get(job.id) or job

    def resume_interrupted(self) -> list[Job]:
        """Take over, on worker threads, the interrupted jobs that agents started over MCP
        and this process can run (a server's, as it starts). Taking one over is a
        compare-and-set, so of several servers on one log each job goes to one. Jobs started
        from the command line are left to the operator (``writegate jobs resume``)."""
        taken = []
        for job in self.table.running():
            if job.transport == "cli" or job.kind not in self.kinds or job.alive():
                continue
            if (adopted := self.table.adopt(job)) is not None:
                self.detach(adopted)
                taken.append(adopted)
        return taken

    def detach(self, job: Job, on_end: Callable[[Job], None] | None = None) -> threading.Thread:
        """Run a claimed job on a daemon thread of this process (the server's)."""

        def work() -> None:
            try:
                ended = self.run(job)
            except JobFailed:
                ended = self.table.get(job.id) or job
            finally:
                self.table.log.disconnect()  # this thread ends here; the log lives on
            if on_end:
                on_end(ended)

        thread = threading.Thread(target=work, name=f"job-{job.id}", daemon=True)
        thread.start()
        return thread

    def _beat(self, job_id: int, stop: threading.Event) -> None:
        try:
            while not stop.wait(HEARTBEAT_SECONDS):
                try:
                    self.table.heartbeat(job_id)
                except Exception:  # a busy log: the next beat, or the progress, will do
                    continue
        finally:
            self.table.log.disconnect()
