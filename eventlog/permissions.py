"""Owner-only files: the one permission policy of every file holding graph data.

The log's SQLite file (and the ``-wal`` and ``-shm`` SQLite keeps beside it), its copies and
backups, and every file a projection or an export writes hold what agents wrote, and nobody
but the service's own user needs to read them: each is created ``0600`` (``PRIVATE``),
whatever the umask lets through. An operator who wants one shared says so with its folder
(group access to it and a deliberate ``chmod``), not by a default that leaks. A file found
with wider permissions is narrowed when it is opened for writing next, so a log or a
projection never holds files of two policies. Only a regular file is ever narrowed: a
device, a pipe or a socket named where a file was meant (``--db /dev/null``) is the
system's, and is refused, never opened or changed (``NotAFile``). (``projections.files``
writes with it.)
"""

from __future__ import annotations

import errno
import os
import stat
from contextlib import suppress
from pathlib import Path
from typing import IO

PRIVATE = 0o600
BESIDE = ("-wal", "-shm", "-journal")  # what SQLite keeps beside a database file


class NotAFile(OSError):
    """A path naming something other than a regular file (a device, a pipe, a socket)."""

    def __init__(self, path: Path) -> None:
        super().__init__(errno.EINVAL, "not a file (a device, a pipe or a socket)", str(path))


def open_private(path: Path, mode: str = "ab") -> IO[bytes]:
    """``open(path, mode)`` for a binary mode, creating the file ``0600`` and narrowing one
    found wider (see the module's policy)."""
    with suppress(FileNotFoundError):  # a folder is left to open's own refusal
        if not stat.S_ISREG(kind := os.stat(path).st_mode) and not stat.S_ISDIR(kind):
            raise NotAFile(path)
    flags = os.O_CREAT | (os.O_RDWR if "+" in mode else os.O_WRONLY)
    if "a" in mode:
        flags |= os.O_APPEND
    elif "w" in mode:
        flags |= os.O_TRUNC
    fd = os.open(path, flags, PRIVATE)
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):  # (put there since it was looked at)
            raise NotAFile(path)
        if found.st_mode & 0o777 != PRIVATE and found.st_uid == os.geteuid():  # (ours to narrow)
            os.fchmod(fd, PRIVATE)
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise


def make_private(path: Path) -> None:
    """Create ``path`` empty if it is missing (so that what writes it next, e.g. SQLite,
    finds it ``0600``), and narrow it if it is wider."""
    open_private(path).close()


def make_private_database(path: Path) -> None:
    """``make_private`` for a SQLite file, and the files SQLite keeps beside it narrowed as
    well: it makes new ones with the file's own permissions, so only older ones need it."""
    make_private(path)
    for side in BESIDE:
        beside = Path(f"{path}{side}")
        with suppress(FileNotFoundError):  # (none there, or gone meanwhile)
            found = beside.stat()
            mine = stat.S_ISREG(found.st_mode) and found.st_uid == os.geteuid()
            if found.st_mode & 0o777 != PRIVATE and mine:
                os.chmod(beside, PRIVATE)
