"""Writing projection files: so that a reader never sees half of one, owner-only, and with
one line (not a traceback) when the disk refuses.

Every file a projection or an export writes is created ``0600`` (``PRIVATE``), as the log
is: the one policy of ``eventlog.permissions``, whose helpers are the ones used here.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path

from writegate.eventlog.permissions import PRIVATE, make_private, open_private
from writegate.projections.contract import ProjectionError


def write_atomically(path: Path, chunks: Iterable[bytes]) -> None:
    """Write to a temporary file beside ``path``, fsync it, then rename it over ``path``
    (``mkstemp`` creates it ``0600``: the policy above)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.writelines(chunks)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def removed(paths: Iterable[Path]) -> list[tuple[Path, int]]:
    """Remove those of ``paths`` that exist; each one removed, with its size then."""
    gone = []
    for path in paths:
        try:
            size = path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            continue
        gone.append((path, size))
    return gone


def write_failed(name: str, path: Path, exc: OSError | sqlite3.Error) -> ProjectionError:
    """A write that the disk refused, as one line naming the projection, the file and — when
    it is full — the filesystem that is."""
    full = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
    full = full or (isinstance(exc, sqlite3.OperationalError) and "full" in str(exc))
    full = full or _no_room(path)  # SQLite may say only "disk I/O error" (its -shm, mapped)
    if full:
        reason = f"the disk is full (the filesystem mounted at {_mount_of(path)})"
    elif isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
    else:
        reason = str(exc)
    return ProjectionError(f"{name}: cannot write {path}: {reason}; its checkpoint did not move")


def _no_room(path: Path) -> bool:
    try:
        return os.statvfs(path.parent).f_bavail == 0
    except OSError:
        return False


def _mount_of(path: Path) -> Path:
    here = path.resolve().parent
    while not os.path.ismount(here) and here != here.parent:
        here = here.parent
    return here


__all__ = [
    "PRIVATE",
    "make_private",
    "open_private",
    "removed",
    "write_atomically",
    "write_failed",
]
