"""A real PostgreSQL for the tests: Debian's server, started by the harness, stopped after.

``initdb`` runs as the ``postgres`` user (PostgreSQL refuses root) into a temporary
directory; the server listens on 127.0.0.1 on a free port, with trust authentication for
local connections (the directory is private to the test run). Each test module gets a
database of its own.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

SUPERUSER = "postgres"


def binaries() -> Path:
    """Where Debian's PostgreSQL binaries are (``make test`` installs them if missing)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_postgres(*command: str) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", SUPERUSER, "--", *command]
    return list(command)


@dataclass(frozen=True)
class Server:
    port: int
    data: Path
    log: Path
    options: str

    def dsn(self, database: str = "postgres", user: str = SUPERUSER) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def _pg_ctl(self, *words: str) -> None:
        subprocess.run(
            _as_postgres(str(binaries() / "pg_ctl"), "-D", str(self.data), *words),
            check=True,
            capture_output=True,
            cwd=self.data.parent,
        )

    def start(self) -> None:
        self._pg_ctl("-l", str(self.log), "-o", self.options, "-w", "start")
        self.wait()

    def stop(self) -> None:
        """Stop as an operator's shutdown does (``fast``: sessions are ended, not waited for)."""
        self._pg_ctl("-m", "fast", "-w", "stop")

    def restart(self) -> None:
        self._pg_ctl("-l", str(self.log), "-o", self.options, "-m", "fast", "-w", "restart")
        self.wait()

    def wait(self) -> None:
        for _ in range(200):
            try:
                psycopg.connect(self.dsn(), connect_timeout=1).close()
                return
            except psycopg.OperationalError:
                time.sleep(0.05)
        raise RuntimeError(f"PostgreSQL did not start: {self.log.read_text()[-2000:]}")


def _options(port: int, sockets: Path) -> str:
    """The server's settings (a standby's are its primary's: it may not have fewer
    connections). No autovacuum: its ANALYZE holds a snapshot, and a ``VACUUM FULL`` run
    beside one copies the rows a forgetting deleted instead of dropping them (a test that
    reads the files for a forgotten value failed so under load)."""
    return (
        f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=on -c max_connections=200 -c autovacuum=off"
    )


@contextmanager
def postgres_server() -> Iterator[Server]:
    bin_dir = binaries()
    root = Path(tempfile.mkdtemp(prefix="writegate-pg-"))
    data, sockets = root / "data", root / "sockets"
    data.mkdir()
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, SUPERUSER)
        shutil.chown(data, SUPERUSER)
        shutil.chown(sockets, SUPERUSER)
    port = _free_port()
    log = root / "server.log"
    subprocess.run(
        _as_postgres(
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
        ),
        check=True,
        capture_output=True,
    )
    options = _options(port, sockets)
    subprocess.run(
        _as_postgres(
            str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "start"
        ),
        check=True,
        capture_output=True,
        cwd=root,
    )
    server = Server(port, data, log, options)
    try:
        server.wait()
        yield server
    finally:
        subprocess.run(
            _as_postgres(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"),
            check=False,
            capture_output=True,
            cwd=root,
        )
        shutil.rmtree(root, ignore_errors=True)


README_ROLE = "writegate_app"


def readme_role_setup() -> str:
    """The application role of docs/postgresql.md's role setup, as written: the superuser's
    statement creating it, then the owner's grants."""
    from tests.readme import blocks, section  # noqa: PLC0415 - only the role tests read it

    superuser, owner = blocks(section("## Roles: who runs what"), "sql")
    [create] = [line for line in superuser.splitlines() if f" {README_ROLE} " in line]
    return f"{create}\n{owner}"


def create_app_role(dsn: str) -> str:
    """Run the README's role setup as written, as the owner, in the database at ``dsn``;
    return the address to connect as that role. Roles belong to the whole server, so the
    role is named after the database (the only change to the SQL): each test's own."""
    database = dsn.rsplit("/", 1)[1]
    role = f"{README_ROLE}_{database}"
    with psycopg.connect(dsn, autocommit=True) as owner:
        owner.execute(readme_role_setup().replace(README_ROLE, role).encode())
    return dsn.replace(f"{SUPERUSER}@", f"{role}@", 1)


@contextmanager
def standby_of(primary: Server) -> Iterator[Server]:
    """A hot standby of ``primary`` (streaming replication, as a read replica is): it reads
    what the primary commits and refuses what would write."""
    root = Path(tempfile.mkdtemp(prefix="writegate-pg-standby-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, SUPERUSER)
        shutil.chown(sockets, SUPERUSER)
    base = str(binaries() / "pg_basebackup")
    subprocess.run(
        _as_postgres(base, "-D", str(data), "-R", "--checkpoint=fast", "-d", primary.dsn()),
        check=True,
        capture_output=True,
        cwd=root,
    )
    port = _free_port()
    server = Server(port, data, root / "server.log", _options(port, sockets))
    try:
        server.start()
        yield server
    finally:
        subprocess.run(
            _as_postgres(str(binaries() / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"),
            check=False,
            capture_output=True,
            cwd=root,
        )
        shutil.rmtree(root, ignore_errors=True)
