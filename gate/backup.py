"""Online backups: a consistent copy of a live log, verified before it is called a backup.

The copy is taken by SQLite's backup API in one read transaction (``EventLog.backup``), so
agents keep writing while it runs and the copy is the log as of one commit: its history is
a prefix of the live one. It is written beside its destination under a temporary name,
checked like ``writegate verify`` checks a log (the hash chain, the append-only triggers,
the state read model against a replay) and only then renamed into place, with the agents'
tokens file (hashes only) copied beside it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from writegate.eventlog import EventLog, one_line
from writegate.eventlog.erasing import subjects_held
from writegate.gate.audit.integrity import IntegrityReport, check_integrity
from writegate.projections.state import StateProjection

TOKENS_SUFFIX = ".tokens.json"
# what SQLite may leave beside the copy when writing it fails: a rollback journal, or the
# -wal and -shm of the WAL mode the copy has until it leaves it
SIDECARS = ("-journal", "-wal", "-shm")


class BackupFailed(Exception):
    """The copy could not be made, or did not verify (it is removed); the message says why."""


@dataclass(frozen=True)
class BackupReport:
    path: Path
    head_seq: int
    head_hash: str
    size: int  # bytes
    tokens: Path | None  # the copied tokens file, if the log had one
    integrity: IntegrityReport  # the checks run on the copy
    subjects: int = 0  # whose personal values it holds: a later forgetting does not reach it


def tokens_beside(db: Path) -> Path:
    """Where a log's tokens file lives by default: ``<db>.tokens.json``."""
    return db.with_name(db.name + TOKENS_SUFFIX)


def backup(
    log: EventLog,
    dest: str | Path,
    *,
    tokens: Path | None = None,
    partial: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> BackupReport:
    """Copy ``log`` to ``dest`` (a new file) and verify the copy; ``tokens`` (default: the
    log's ``<db>.tokens.json``, if present) goes to ``<dest>.tokens.json``. ``partial``:
    where the copy is made (a job's name for it, so that a dead process's is found again;
    default: a new temporary name beside ``dest``); ``progress(pages done, pages)``."""
    target = Path(dest)
    tokens = tokens_beside(log.path) if tokens is None else tokens
    if target.exists():
        raise BackupFailed(f"{target} exists (a backup never overwrites)")
    if not target.parent.is_dir():
        missing = "is a file" if target.parent.exists() else "does not exist"
        raise BackupFailed(f"no folder {target.parent} to put the backup in: it {missing}")
    if partial is None:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
        os.close(fd)
        partial = Path(name)
    else:
        remove_partial(partial)  # a dead process's: a backup is one snapshot, taken again
    pages = (0, 0)

    def step(done: int, total: int) -> None:
        nonlocal pages
        pages = (done, total)
        if progress is not None:
            progress(done, total)

    try:
        try:
            log.backup(partial, step if progress else None)
        except (sqlite3.Error, OSError) as exc:  # a full disk, most likely
            raise BackupFailed(f"{target}: the copy could not be written: {one_line(exc)}") from exc
        with EventLog(partial, inline=[StateProjection()], readonly=True) as copy:
            report = check_integrity(copy, StateProjection())
            subjects = subjects_held(copy)
        if (failure := report.first_failure) is not None:
            raise BackupFailed(
                f"the copy does not verify ({failure.name}: {failure.detail}); nothing was "
                f"kept — `writegate verify` on {log.path} shows the same"
            )
        if progress is not None:  # once more before it is kept: it may stop it still
            progress(*pages)
        copied = _copy_tokens(tokens, tokens_beside(target)) if tokens.exists() else None
        os.replace(partial, target)
    except BaseException:
        remove_partial(partial)
        raise
    return BackupReport(
        target, report.head_seq, report.head_hash, target.stat().st_size, copied, report, subjects
    )


def remove_partial(partial: Path) -> None:
    """An unfinished copy's files, named after it, removed (a cancelled or failed backup
    leaves nothing behind)."""
    for leftover in (partial, *(Path(f"{partial}{side}") for side in SIDECARS)):
        leftover.unlink(missing_ok=True)


def _copy_tokens(source: Path, dest: Path) -> Path:
    """The tokens file is replaced whole when it changes, so one read is one version of it;
    the copy keeps its owner-only permissions and lands whole too."""
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".partial")
    os.close(fd)
    try:
        shutil.copy2(source, name)
        os.replace(name, dest)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return dest
