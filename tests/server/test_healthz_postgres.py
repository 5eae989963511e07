"""``/healthz`` of a server on PostgreSQL, whose database stops answering: paused (every
process of the server stopped, as a frozen VM or a network gone quiet looks), the probe
still answers — 503 "unreachable", while the database is still paused — and so does the
next one; with the database down, the answer names no user, host or port (anyone may
ask): those go to the server's log.

The PostgreSQL server here is the test's own (it is paused and stopped)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from tests.conftest import SEED_SCHEMA
from tests.postgres import Server, postgres_server
from tests.server.harness import http_server
from writegate.gate import Gate

UNREACHABLE = {"status": "unavailable", "log": "unreachable"}


@pytest.fixture
def own_server() -> Iterator[Server]:
    with postgres_server() as server:
        yield server


def _processes(server: Server) -> list[int]:
    """The postmaster and every process it started."""
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:
                children.append(int(entry.name))
    return [postmaster, *children]


@contextmanager
def paused(server: Server) -> Iterator[None]:
    stopped = _processes(server)
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)


def test_healthz_answers_unreachable_while_postgresql_is_paused_and_says_no_more(
    own_server: Server, tmp_path: Path
) -> None:
    dsn = own_server.create_database("probed")
    with Gate.open(dsn) as gate:
        gate.publish_schema(SEED_SCHEMA)
    with http_server(dsn, extra=("--tokens", str(tmp_path / "tokens.json"))) as server:
        healthz = server.url.removesuffix("/mcp") + "/healthz"
        assert httpx2.get(healthz, timeout=60).status_code == 200
        with paused(own_server):
            first = httpx2.get(healthz, timeout=60)
            second = httpx2.get(healthz, timeout=60)  # the first check is still out
        own_server.stop()
        down = httpx2.get(healthz, timeout=60)
    assert (first.status_code, first.json()) == (503, UNREACHABLE)
    assert (second.status_code, second.json()) == (503, UNREACHABLE)
    assert (down.status_code, down.json()) == (503, UNREACHABLE)
    said = server.last_said
    assert "/healthz: the log did not answer within" in said
    assert (
        f"/healthz: the log is unreachable: postgresql://postgres@127.0.0.1:{own_server.port}/probed"
        in said
    )


def test_healthz_says_once_that_the_log_went_away_and_once_that_it_came_back(
    own_server: Server, tmp_path: Path
) -> None:
    """A load balancer probes every second: while the database is down the server's log
    says so once (with the database's words), not once a probe, and once when it is back."""
    dsn = own_server.create_database("probed")
    with Gate.open(dsn) as gate:
        gate.publish_schema(SEED_SCHEMA)
    with http_server(dsn, extra=("--tokens", str(tmp_path / "tokens.json"))) as server:
        healthz = server.url.removesuffix("/mcp") + "/healthz"
        assert httpx2.get(healthz, timeout=60).status_code == 200
        own_server.stop()
        down = [httpx2.get(healthz, timeout=60) for _ in range(5)]
        own_server.start()
        back = [httpx2.get(healthz, timeout=60)]
        while back[-1].status_code != 200 and len(back) < 10:  # the log reconnects
            back.append(httpx2.get(healthz, timeout=60))
        again = [httpx2.get(healthz, timeout=60) for _ in range(3)]
    assert [(r.status_code, r.json()) for r in down] == [(503, UNREACHABLE)] * 5
    assert back[-1].status_code == 200, [r.json() for r in back]
    assert [r.status_code for r in again] == [200] * 3
    said = server.last_said
    assert said.count("/healthz: the log is unreachable: ") == 1, said
    assert (
        f"/healthz: the log is unreachable: postgresql://postgres@127.0.0.1:{own_server.port}/probed"
        in said
    )
    assert said.count("/healthz: the log is reachable again") == 1, said
    assert said.count("/healthz: the log did not answer") <= 1, said  # a stop may be slow
