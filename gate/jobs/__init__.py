"""Long work as jobs: recorded durably, resumable from their checkpoint, cancellable, one
per target at a time (``records``, ``table``, ``runner``)."""

from writegate.gate.jobs.records import Job, JobView
from writegate.gate.jobs.runner import (
    JobCancelled,
    JobFailed,
    JobNotFound,
    Jobs,
    Kind,
    Report,
    visible,
)
from writegate.gate.jobs.table import JobTable, TargetBusy

__all__ = [
    "Job",
    "JobCancelled",
    "JobFailed",
    "JobNotFound",
    "JobTable",
    "JobView",
    "Jobs",
    "Kind",
    "Report",
    "TargetBusy",
    "visible",
]
