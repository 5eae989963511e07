"""Every read command works on a read-only copy of a log (issue 10, newcomer 5): auditors
are often handed exactly that, and the commands used to fail with "attempt to write a
readonly database".

Two copies: the file read-only in a folder the reader may write (SQLite may make its WAL
index beside it), and the folder read-only too (read-only media: it may not). Root ignores
file modes, so under root each command runs in its own mount namespace where the file (or
the folder) is bind-mounted read-only, which binds root as well; otherwise the modes do.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import write_history
from tests.server.harness import WRITEGATE

READ_COMMANDS = [
    ["log"],
    ["log", "--reverse", "-n", "3", "--format", "json"],
    ["verify"],
    ["report"],
    ["report", "--format", "markdown"],
    ["report", "--format", "json"],
    ["audit", "node", "Person", "name=Alice"],
    [
        "audit",
        "relationship",
        "WORKS_FOR",
        "--from",
        "Person",
        "-f",
        "name=Alice",
        "--to",
        "Organization",
        "-t",
        "name=Initech",
    ],
    ["audit", "agent", "ada-bot"],
    ["audit", "source", "cleanup", "--format", "json"],
    ["show", "node", "Person", "name=Alice"],
    ["show", "node", "Person", "name=Dan", "--as-of", "2032-01-01T09:09:00Z", "--format", "json"],
    ["search", "ali"],
    ["neighbors", "Person", "name=Alice", "--depth", "2", "--format", "jsonl"],
    ["path", "--from", "Person", "-f", "name=Carol", "--to", "Organization", "-t", "name=Initech"],
    ["export", "dot"],
    ["export", "graphml", "--around", "Person", "name=Alice"],
    ["export", "mermaid"],
    ["export", "subject", "Person:name=Alice"],
    ["export", "subject", "Person:name=Alice", "--format", "prov"],
    ["schema", "show"],
    ["status"],
]


ROOT = os.geteuid() == 0
# sh -c SCRIPT sh TARGET COMMAND...: TARGET read-only for COMMAND, in a mount namespace of its own
READ_ONLY_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def as_reader(target: Path, *command: str) -> list[str]:
    """``command`` run by someone who cannot write ``target``."""
    if not ROOT:
        return list(command)
    return ["unshare", "--mount", "sh", "-c", READ_ONLY_MOUNT, "sh", str(target), *command]


@pytest.fixture(scope="module", params=["folder writable", "folder read-only"])
def read_only(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """What the reader may not write: the copy itself, or its folder (its ``.name`` is the
    copy's)."""
    folder = tmp_path_factory.mktemp("audit")
    copy = write_history(folder / "copy.db")  # closed cleanly: no -wal or -shm beside it
    copy.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    if request.param == "folder writable":
        yield copy
        return
    if not ROOT:
        folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


def copy_of(read_only: Path) -> Path:
    return read_only / "copy.db" if read_only.is_dir() else read_only


def test_the_copy_is_really_read_only(read_only: Path) -> None:
    """What the others rely on: the reader cannot write the copy."""
    append = f"echo x >> {copy_of(read_only)}"
    done = subprocess.run(
        as_reader(read_only, "sh", "-c", append), capture_output=True, check=False
    )
    assert done.returncode != 0
    assert done.stderr


@pytest.mark.parametrize("command", READ_COMMANDS, ids=" ".join)
def test_a_read_command_on_a_read_only_copy(read_only: Path, command: list[str]) -> None:
    copy = copy_of(read_only)
    before = hashlib.sha256(copy.read_bytes()).hexdigest()
    done = subprocess.run(
        as_reader(read_only, WRITEGATE, "--db", str(copy), *command),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=copy.parent,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == before
