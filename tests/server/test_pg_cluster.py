"""Several ``writegate serve --http`` processes on one PostgreSQL log (issue 14, acceptance
2-4): concurrent agents lose and duplicate nothing, a server killed mid-write leaves no
half-written event and no acknowledged write missing, and a schema published through one
server binds the others at their next write.

The first test drives the servers with the official MCP SDK client. The kill test speaks
JSON-RPC over HTTP itself (as tests/server/test_security.py does): a client whose server
dies under it must retry the same call on another server at once, which is a transport
detail the SDK's session deliberately hides.
"""

from __future__ import annotations

import itertools
import json
import random
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.conftest import SEED_SCHEMA
from tests.server.harness import WRITEGATE, free_port, http_agent, wait_listening
from writegate.eventlog import open_log
from writegate.gate.server.tokens import create_token
from writegate.language import NodeWritten, payload_of

pytestmark = pytest.mark.anyio
SERVERS, CLIENTS, WRITES = 4, 5, 100
SHARED = 50  # half of all writes go to these nodes, from every client on every server
KILLS = 10
ACCEPT = "application/json, text/event-stream"


@dataclass
class Cluster:
    dsn: str
    tokens: Path
    ports: list[int]
    processes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    def url(self, port: int) -> str:
        return f"http://127.0.0.1:{port}/mcp"

    def start(self, port: int) -> None:
        process = subprocess.Popen(
            [WRITEGATE, "--db", self.dsn, "serve", "--http", "--port", str(port),
             "--tokens", str(self.tokens)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.processes[port] = process
        wait_listening(port, process)

    def kill(self, port: int) -> None:
        process = self.processes.pop(port)
        process.send_signal(signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture
def cluster(pg_dsn: str, tmp_path: Path) -> Iterator[Cluster]:
    init = subprocess.run(
        [WRITEGATE, "--db", pg_dsn, "init", "--schema", str(SEED_SCHEMA)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert init.returncode == 0, init.stderr
    running = Cluster(pg_dsn, tmp_path / "tokens.json", [free_port() for _ in range(SERVERS)])
    for port in running.ports:
        running.start(port)
    try:
        yield running
    finally:
        running.stop()


def write(client: int, i: int) -> dict[str, Any]:
    """A client's ``i``-th write: odd ones go round the ``SHARED`` nodes every client
    writes (``i // 2`` runs through all of them every 100 writes), even ones to its own."""
    name = f"shared-{(i // 2) % SHARED}" if i % 2 else f"c{client}-w{i}"
    return {
        "label": "Person",
        "merge_keys": {"name": name},
        "properties": {"age": i, "by": f"client-{client}"},
        "source": "cluster-test",
        "extraction_method": "api",
        "idempotency_key": f"client-{client}-write-{i}",
    }


def the_log(dsn: str) -> dict[str, tuple[int, str]]:
    """idempotency key -> (seq, event_id) of every write in the log, after checking that the
    chain verifies, the state equals a replay and no key has two events."""
    with open_log(dsn, create=False) as log:
        assert log.verify().ok
        events = list(log.iter_events())
    assert [e.seq for e in events] == list(range(1, len(events) + 1))  # gapless
    keyed = [(e.idempotency_key, e) for e in events if isinstance(payload_of(e), NodeWritten)]
    keys = [key for key, _ in keyed]
    assert len(keys) == len(set(keys)), "an idempotency key with two events"
    return {key: (e.seq, e.event_id) for key, e in keyed if key is not None}


def verified(dsn: str) -> None:
    done = subprocess.run(
        [WRITEGATE, "--db", dsn, "verify"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok    state read model" in done.stdout


async def test_four_servers_and_twenty_agents_lose_nothing(cluster: Cluster) -> None:
    acked: dict[str, tuple[int, str]] = {}
    shared = {
        write(c, i)["merge_keys"]["name"]
        for c in range(SERVERS * CLIENTS)
        for i in range(1, WRITES, 2)
    }
    assert shared == {f"shared-{n}" for n in range(SHARED)}  # half the writes, on 50 nodes

    tokens = [
        create_token(cluster.tokens, f"agent-{c}", ("writer",)) for c in range(SERVERS * CLIENTS)
    ]

    async def agent(client: int) -> None:
        port = cluster.ports[client % SERVERS]
        async with http_agent(cluster.url(port), tokens[client]) as session:
            for i in range(WRITES):
                out = await session.call("write_node", write(client, i))
                assert not out.is_error, out.data
                acked[f"client-{client}-write-{i}"] = (out.data["seq"], out.data["event_id"])

    async with anyio.create_task_group() as group:
        for client in range(SERVERS * CLIENTS):
            group.start_soon(agent, client)
    logged = the_log(cluster.dsn)
    assert logged == acked  # exactly the acknowledged writes, each once, as acknowledged
    assert len(acked) == SERVERS * CLIENTS * WRITES
    verified(cluster.dsn)


class InFlight:
    """How many calls each server has been sent and not yet answered, now."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: dict[int, int] = {}

    @contextmanager
    def call(self, port: int) -> Iterator[None]:
        with self.lock:
            self.calls[port] = self.calls.get(port, 0) + 1
        try:
            yield
        finally:
            with self.lock:
                self.calls[port] -= 1


class RawAgent:
    """One agent speaking JSON-RPC over HTTP to whichever server is up."""

    def __init__(self, cluster: Cluster, token: str, flying: InFlight, home: int) -> None:
        self.cluster = cluster
        self.home = home  # the server it tries first whenever it has none
        self.flying = flying
        self.http = httpx2.Client(timeout=30, headers={"Authorization": f"Bearer {token}"})
        self.session: tuple[int, str] | None = None

    def _open(self, port: int) -> str:
        hello = {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "cluster-test", "version": "1"}},
        }  # fmt: skip
        response = self.http.post(self.cluster.url(port), json=hello, headers={"Accept": ACCEPT})
        response.raise_for_status()
        session = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        headers = {"Accept": ACCEPT, "mcp-session-id": session}
        self.http.post(self.cluster.url(port), json=note, headers=headers)
        return session

    def call(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The write's result; a dead server's call is sent again, same key, to the next."""
        for attempt in range(200):
            ports = self.cluster.ports
            port = self.session[0] if self.session else ports[(self.home + attempt) % len(ports)]
            try:
                if self.session is None or self.session[0] != port:
                    self.session = (port, self._open(port))
                message = {
                    "jsonrpc": "2.0", "id": attempt + 1, "method": "tools/call",
                    "params": {"name": "write_node", "arguments": arguments},
                }  # fmt: skip
                headers = {"Accept": ACCEPT, "mcp-session-id": self.session[1]}
                with self.flying.call(port):
                    response = self.http.post(self.cluster.url(port), json=message, headers=headers)
                response.raise_for_status()
                return _structured(response)
            except (httpx2.HTTPError, KeyError, ValueError):
                self.session = None  # that server died (or restarted): go to another
                time.sleep(0.02)
        raise AssertionError(f"no server answered {arguments['idempotency_key']}")


def _structured(response: Any) -> dict[str, Any]:
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    body = json.loads(text)
    result: dict[str, Any] = body["result"]["structuredContent"]
    return result


def test_servers_killed_mid_write_lose_and_duplicate_nothing(cluster: Cluster) -> None:
    """Eight agents write until the last kill; each kill lands on a server with calls in
    flight (it waits for one), and writes are acknowledged between every two kills."""
    acked: dict[str, tuple[int, str]] = {}
    lock = threading.Lock()
    flying = InFlight()
    done = threading.Event()
    tokens = [create_token(cluster.tokens, f"k-{c}", ("writer",)) for c in range(8)]

    def agent(client: int) -> None:
        raw = RawAgent(cluster, tokens[client], flying, home=client)
        i = 0
        while not done.is_set():
            arguments = write(client, i)
            out = raw.call(arguments)
            assert out["status"] == "written", out
            with lock:
                acked[arguments["idempotency_key"]] = (out["seq"], out["event_id"])
            i += 1

    threads = [threading.Thread(target=agent, args=(c,)) for c in range(8)]
    for thread in threads:
        thread.start()
    rng = random.Random(14)
    in_flight_at_kills: list[int] = []
    acked_at_kills: list[int] = []
    try:
        for _kill in range(KILLS):
            deadline = time.monotonic() + 30
            while len(acked) <= (acked_at_kills or [0])[-1]:  # writes go on between kills
                assert time.monotonic() < deadline, "no write acknowledged since the last kill"
                time.sleep(0.01)
            time.sleep(rng.uniform(0.05, 0.4))
            while True:  # a kill mid-write: one of the servers with a call in flight
                with flying.lock:
                    busy = sorted(port for port, n in flying.calls.items() if n > 0)
                    if busy:
                        port = rng.choice(busy)
                        in_flight_at_kills.append(flying.calls[port])
                        cluster.kill(port)
                        break
                assert time.monotonic() < deadline, "no write in flight"
                time.sleep(0.001)
            with lock:
                acked_at_kills.append(len(acked))
            cluster.start(port)
    finally:
        done.set()  # the agents finish the write they are in (retrying it), then stop
        for thread in threads:
            thread.join()
    assert len(in_flight_at_kills) == KILLS
    assert all(n > 0 for n in in_flight_at_kills)
    assert all(a < b for a, b in itertools.pairwise([0, *acked_at_kills])), acked_at_kills
    assert len(acked) > acked_at_kills[-1]  # and after the last one
    logged = the_log(cluster.dsn)
    assert {key: acked[key] for key in acked} == {key: logged[key] for key in acked}
    assert set(logged) == set(acked)  # nothing unacknowledged slipped in under another key
    verified(cluster.dsn)


async def test_a_schema_published_through_one_server_binds_the_others(
    cluster: Cluster, tmp_path: Path
) -> None:
    token = create_token(cluster.tokens, "agent-s", ("writer",))
    first, second = (cluster.url(port) for port in cluster.ports[:2])
    born = {**write(0, 0), "properties": {"born": "1815"}, "idempotency_key": "born-1"}
    async with http_agent(first, token) as a, http_agent(second, token) as b:
        assert not (await a.call("write_node", {**born, "idempotency_key": "born-0"})).is_error
        # ``born`` is undeclared, so any value goes; the stricter schema declares it an integer
        # (which the first value would break: that node is written again without it)
        plain = {**write(0, 0), "idempotency_key": "born-reset", "properties": {"born": None}}
        assert not (await a.call("write_node", plain)).is_error
        stricter = SEED_SCHEMA.read_text().replace(
            "      age: {type: integer}", "      age: {type: integer}\n      born: {type: integer}"
        )
        assert stricter != SEED_SCHEMA.read_text()
        path = tmp_path / "stricter.yaml"
        path.write_text(stricter)
        published = subprocess.run(
            [WRITEGATE, "--db", cluster.dsn, "schema", "publish", str(path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert published.returncode == 0, published.stderr
        refused = await b.call("write_node", born)  # the very next write on another server
    assert refused.is_error
    assert refused.data["error_code"] == "SCHEMA_TYPE_MISMATCH"
