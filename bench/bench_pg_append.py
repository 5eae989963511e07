"""An append on PostgreSQL beside the least record a bare psycopg transaction makes.

In one run, on one PostgreSQL (the test harness's: tests/postgres.py, fsync off, commits
waited for as the log's are), interleaved round by round so that whatever else the machine
does falls on all of them alike:

  * bare: a psycopg transaction inserting one row shaped like an event and one shaped like a
    node's state row (``with conn.transaction()``), and the same with 100 of each;
  * log: ``PostgresEventLog.append`` of one event on one stream (no read model), the log's
    own cost — lock, head, hash, event row, stream row, NOTIFY;
  * gate: ``Gate.write_node`` of a new node (its checks read the read model, then the
    event, stream, state, support and search rows and the NOTIFY), and ``write_batch`` of
    100 nodes;
  * floor: the least version of a gate write: the very rows one ``write_node`` writes (taken
    from one, then renamed for each new node) into the log's and read model's own tables,
    with their indexes and the chain's trigger, as one statement sent with the lock and the
    ``COMMIT`` in one round trip by bare psycopg — no reads, no Python of the gate's;
  * the same ``Gate.write_node`` on SQLite (a file in a temporary directory): the gate's
    own work (checks, events, hashes, read-model rows) with SQLite's in-process writes.
    The floor plus that is about the least a gate write on PostgreSQL can cost.

Prints each one's p50, rate and CPU time (this process's, a write) and its ratio to the bare
record (single writes to the bare single transaction, batches to the bare batch): >= 50% is
the target. Then the round trips each writegate write makes, and the statements it runs,
counted on the wire through a relay, as a lone writer (each on a database of its own) and
after another process appended (the append then reads what it knew). The machine's load average is printed with them (it
may be shared). Nothing asserts.

usage: python bench/bench_pg_append.py [--rounds 400] [--batches 20]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.postgres import Server, postgres_server  # noqa: E402
from tests.roundtrips import RoundTrips  # noqa: E402
from writegate.eventlog import Actor, DraftEvent, Transaction  # noqa: E402
from writegate.eventlog.pgsql import PgConnection  # noqa: E402
from writegate.eventlog.postgres import PostgresEventLog  # noqa: E402
from writegate.eventlog.testing import emitting, note  # noqa: E402
from writegate.gate import Gate  # noqa: E402

SCHEMA = ROOT / "fixtures" / "seed000_schema.yaml"
CLAIM = {"source": "bench", "extraction_method": "api", "reliability": 0.9}
BARE_TABLES = """
CREATE TABLE bare_events (seq BIGINT PRIMARY KEY, event_id TEXT NOT NULL, type TEXT NOT NULL,
  occurred_at TEXT NOT NULL, actor TEXT NOT NULL, streams TEXT NOT NULL, payload TEXT NOT NULL,
  provenance TEXT NOT NULL, request TEXT NOT NULL, idempotency_key TEXT, prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL);
CREATE TABLE bare_state (identity TEXT PRIMARY KEY, label TEXT NOT NULL, keys TEXT NOT NULL,
  properties TEXT NOT NULL, version BIGINT NOT NULL)
"""
BARE_EVENT = "INSERT INTO bare_events VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
BARE_STATE = "INSERT INTO bare_state VALUES (%s,%s,%s,%s,%s)"
HASH = "0" * 64


def node(name: str) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "properties": {"age": 42}, **CLAIM}


class Bare:
    """The least record: one event row and one state row, one transaction."""

    def __init__(self, dsn: str) -> None:
        self.conn = psycopg.connect(dsn)
        self.conn.execute(BARE_TABLES.encode())
        self.conn.commit()
        self.seq = 0

    def rows(self, n: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        events, states = [], []
        for _ in range(n):
            self.seq += 1
            s = self.seq
            events.append(
                (s, f"{s:032x}", "node.created", "2026-11-26T00:00:00.000000Z",
                 '{"agent":"bench"}', f'{{"node:{s}":1}}', f'{{"name":"n{s}","age":42}}',
                 '{"source":"bench"}', "{}", None, HASH, HASH)
            )  # fmt: skip
            states.append((f"n{s}", "Person", f'{{"name":"n{s}"}}', '{"age":42}', 1))
        return events, states

    def single(self) -> None:
        (event,), (state,) = self.rows(1)
        with self.conn.transaction():
            self.conn.execute(BARE_EVENT, event)
            self.conn.execute(BARE_STATE, state)

    def batch(self) -> None:
        events, states = self.rows(100)
        with self.conn.transaction(), self.conn.cursor() as cursor:
            cursor.executemany(BARE_EVENT, events)
            cursor.executemany(BARE_STATE, states)


class Floor:
    """The rows of one gate write, written again under new names by bare psycopg: the
    statement the gate sent for them (captured), the lock and the ``COMMIT``, one round trip."""

    NAME = "floor-capture"
    SEQS = frozenset({"seq", "created_seq", "updated_seq"})

    def __init__(self, dsn: str) -> None:
        captured: list[tuple[str, list[Any]]] = []
        send = PgConnection.send

        def capture(conn: PgConnection, sql: str, parameters: Any = None, /) -> None:
            if sql.startswith("WITH w0 AS (INSERT INTO events"):
                captured.append((sql, list(parameters)))
            send(conn, sql, parameters)

        PgConnection.send = capture  # type: ignore[method-assign]
        try:
            with Gate.open(dsn, default_actor=Actor(agent="bench")) as gate:
                gate.publish_schema(SCHEMA)
                gate.write_node(**node(self.NAME))
        finally:
            PgConnection.send = send  # type: ignore[method-assign]
        self.sql, self.parameters = captured[-1]
        self.conn = psycopg.connect(dsn, autocommit=True)
        head = self.conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1")
        self.seq, self.hash = head.fetchone() or (0, "")
        self.number = 0

    def _parameters(self) -> list[Any]:
        self.number += 1
        self.seq += 1
        prev, self.hash = self.hash, hashlib.sha256(f"{self.seq}".encode()).hexdigest()
        out: list[Any] = []
        for value in self.parameters:
            if not (isinstance(value, str) and value.startswith("[")):
                out.append(value)
                continue
            rows = orjson.loads(value.replace(self.NAME, f"floor-{self.number}"))
            for row in rows:
                if isinstance(row, dict):
                    row.update(dict.fromkeys(self.SEQS & row.keys(), self.seq))
                    if "prev_hash" in row:
                        row.update(prev_hash=prev, hash=self.hash)
            out.append(orjson.dumps(rows).decode())
        out[-1] = str(self.seq)  # the NOTIFY's payload: the new head
        return out

    def single(self) -> None:
        parameters = self._parameters()
        with self.conn.pipeline() as pipeline:
            self.conn.execute(b"BEGIN ISOLATION LEVEL READ COMMITTED")
            self.conn.execute(b"SELECT pg_advisory_xact_lock(hashtext('floor'))")
            self.conn.execute(self.sql.replace("?", "%s"), parameters)
            self.conn.execute(b"COMMIT")
            pipeline.sync()


class Samples(list[float]):
    """Wall-clock seconds of each call, and the process's CPU seconds over all of them."""

    cpu = 0.0


def timed(samples: Samples, work: Callable[[], Any]) -> None:
    cpu, started = time.process_time(), time.perf_counter()
    work()
    samples.append(time.perf_counter() - started)
    samples.cpu += time.process_time() - cpu


def line(name: str, samples: Samples, per: int, floor: Samples | None) -> None:
    p50 = statistics.median(samples)
    rate = per * len(samples) / sum(samples)
    cpu = samples.cpu / (per * len(samples))
    ratio = f"{statistics.median(floor) / p50:6.0%} of bare" if floor else ""
    print(f"  {name:<34} p50 {p50 * 1e3:7.3f} ms {rate:7,.0f} /s  cpu {cpu * 1e3:5.3f} ms  {ratio}")


def load() -> str:
    return "load average " + " ".join(f"{n:.2f}" for n in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--batches", type=int, default=20)
    args = parser.parse_args()
    with postgres_server() as server:
        bare = Bare(server.create_database("bare"))
        log = PostgresEventLog(server.create_database("log"))
        actor = Actor(agent="bench")
        gate = Gate.open(server.create_database("gate"), default_actor=actor)
        gate.publish_schema(SCHEMA)
        floor = Floor(server.create_database("floor"))
        lite = Gate.open(Path(tempfile.mkdtemp()) / "log.db", default_actor=actor)
        lite.publish_schema(SCHEMA)
        counter = iter(range(10**9))

        def log_append() -> None:
            def decide(tx: Transaction) -> None:
                n = next(counter)
                tx.emit(DraftEvent("thing.noted", {"n": n}, (f"thing:{n}",)))

            log.append(actor, decide)

        def write_node() -> None:
            assert gate.write_node(**node(f"single-{next(counter)}")).status == "written"

        def write_lite() -> None:
            assert lite.write_node(**node(f"lite-{next(counter)}")).status == "written"

        def write_batch() -> None:
            items = [{"op": "write_node", **node(f"b-{next(counter)}")} for _ in range(100)]
            assert gate.write_batch(items=items).status == "written"

        def lite_batch() -> None:
            items = [{"op": "write_node", **node(f"lb-{next(counter)}")} for _ in range(100)]
            assert lite.write_batch(items=items).status == "written"

        singles = {
            "bare": Samples(),
            "log": Samples(),
            "floor": Samples(),
            "gate": Samples(),
            "lite": Samples(),
        }
        batches = {"bare": Samples(), "gate": Samples(), "lite": Samples()}
        before = load()
        for work in (
            bare.single,
            log_append,
            floor.single,
            write_node,
            write_lite,
            bare.batch,
            write_batch,
            lite_batch,
        ):
            work()  # warm: connections, prepared statements, the schema loaded
        for _ in range(args.rounds):
            timed(singles["bare"], bare.single)
            timed(singles["log"], log_append)
            timed(singles["floor"], floor.single)
            timed(singles["gate"], write_node)
            timed(singles["lite"], write_lite)
        for _ in range(args.batches):
            timed(batches["bare"], bare.batch)
            timed(batches["gate"], write_batch)
            timed(batches["lite"], lite_batch)
        print(f"PostgreSQL (harness: fsync off, synchronous_commit on), {args.rounds} rounds")
        print(f"  {before} before, {load()} after")
        print("single writes:")
        line("bare transaction (event + state row)", singles["bare"], 1, None)
        line("log append (one event, one stream)", singles["log"], 1, singles["bare"])
        line("floor (a write's rows, one trip)", singles["floor"], 1, singles["bare"])
        line("gate write_node", singles["gate"], 1, singles["bare"])
        line("gate write_node on SQLite", singles["lite"], 1, singles["bare"])
        print(f"batches of 100, {args.batches} rounds (rate in writes/s):")
        line("bare transaction (100 + 100 rows)", batches["bare"], 100, None)
        line("gate write_batch of 100", batches["gate"], 100, batches["bare"])
        line("gate write_batch of 100 on SQLite", batches["lite"], 100, batches["bare"])
        gate.close()
        lite.close()
        log.close()
        bare.conn.close()
        floor.conn.close()
        print("round trips (statements) on the wire, tests/roundtrips.py:     alone  after another")
        with RoundTrips(server.port) as relay:
            trips(relay, server)


def trips(relay: RoundTrips, server: Server) -> None:
    """The round trips each kind of write makes once its process knows the log's head (the
    first reads it), alone on a database of its own and after another process appended."""
    actor = Actor(agent="bench")
    kinds: list[tuple[str, Callable[[Any], Callable[[str], Any]]]] = [
        ("log append", lambda log: lambda n: log.append(actor, emitting(note(n, n)))),
        ("gate write_node", lambda gate: lambda n: gate.write_node(**node(n))),
        (
            "gate write_batch of 100",
            lambda gate: (
                lambda n: gate.write_batch(
                    items=[{"op": "write_node", **node(f"{n}-{i}")} for i in range(100)]
                )
            ),
        ),
    ]
    for number, (name, making) in enumerate(kinds):
        dsn = server.create_database(f"counted_{number}")
        if name == "log append":
            opened: Any = PostgresEventLog(relay.dsn(dsn))
        else:
            opened = Gate.open(relay.dsn(dsn), default_actor=actor)
            opened.publish_schema(SCHEMA)
        with opened:
            work = making(opened)
            work("first")
            relay.reset()
            work("alone")
            statements = len(relay.ran)
            alone = f"{relay.reset()} ({statements})"
            with PostgresEventLog(dsn) as other:
                other.append(actor, emitting(note("theirs", "elsewhere")))
            work("stale")  # what it knew is stale: it tries, then reads
            relay.reset()
            work("after")
            statements = len(relay.ran)
            after = f"{relay.reset()} ({statements})"
            print(f"  {name:<34} {alone:>24}  {after:>13}")


if __name__ == "__main__":
    main()
