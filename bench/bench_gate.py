"""Gate throughput against the floor SQLite itself sets on this machine.

Prints, for the same pragmas (WAL, synchronous=NORMAL unless --durability full):
  * floor: a bare INSERT per transaction, and bare INSERTs in batches of 1,000, of rows
    the same size as real events into a table of the same columns (primary key only);
  * single ``write_node`` calls (each its own transaction) on logs of 1k/10k/100k nodes,
    with p50/p99 latency;
  * ``write_batch`` of 1,000 nodes, in events/s;
  * a ``write_node`` to an existing node that changes it, that changes nothing (unchanged:
    nothing appended) and that a new source corroborates (one event, no version);
  * ``verify`` in events/s;
  * the gate's own SQL, bare: the statements one accepted ``write_node`` runs (traced from a
    real call and printed), replayed with no validation, JSON or hashing around them. It is
    the ceiling any gate keeping this read model in the same transaction can reach;
  * the least durable record of a write: one event row and one state row, a write per
    transaction and 1,000 per transaction — the design's own ceiling;
and the gate as a fraction of the floor and of its least record. Nothing here asserts: numbers are for reading.

usage: python bench/bench_gate.py [--sizes 1000,10000,100000] [--calls 3000] [--durability normal]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from writegate.eventlog import Actor
from writegate.eventlog.tables import INSERT_EVENT as _INSERT_EVENT
from writegate.eventlog.tables import INSERT_STREAM as _INSERT_STREAM
from writegate.gate import Gate

SCHEMA = Path(__file__).resolve().parent.parent / "fixtures" / "seed000_schema.yaml"
ACTOR = Actor(agent="bench", session="bench")
COMMON = {"source": "bench", "extraction_method": "api", "reliability": 0.9}


def node(name: str) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "properties": {"age": 42}, **COMMON}


def populate(gate: Gate, target: int, prefix: str) -> None:
    for start in range(0, target, 1000):
        items = [
            {"op": "write_node", **node(f"{prefix}{i}")}
            for i in range(start, min(target, start + 1000))
        ]
        result = gate.write_batch(items=items)
        assert result.status == "written", result


def percentile(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[int(q) - 1]


def bench_single(gate: Gate, calls: int, prefix: str) -> tuple[float, float, float]:
    latencies = []
    started = time.perf_counter()
    for i in range(calls):
        t = time.perf_counter()
        result = gate.write_node(**node(f"{prefix}{i}"))
        latencies.append(time.perf_counter() - t)
        assert result.status == "written", result
    elapsed = time.perf_counter() - started
    return calls / elapsed, percentile(latencies, 50) * 1e6, percentile(latencies, 99) * 1e6


def bench_saying_again(gate: Gate, calls: int, prefix: str) -> dict[str, tuple[float, float]]:
    """p50/p99 µs of a write_node to an existing node that changes it (a version), that
    says it again from its own source (unchanged: nothing appended) and from a new source
    (one corroboration, no version) — the same nodes, written once first."""
    names = [f"{prefix}{i}" for i in range(calls)]
    populate_named(gate, names)
    out = {}
    for kind in ("changing", "unchanged", "corroborating"):
        latencies = []
        for i, name in enumerate(names):
            said = {**node(name), "properties": {"age": 43 + i % 2}}  # 42 before: a change
            if kind == "corroborating":
                said["source"] = f"second-{i}"
            t = time.perf_counter()
            result = gate.write_node(**said)
            latencies.append(time.perf_counter() - t)
            expected = (
                "written" if kind == "changing" else kind.replace("corroborating", "corroborated")
            )
            assert result.status == expected, result
        out[kind] = (percentile(latencies, 50) * 1e6, percentile(latencies, 99) * 1e6)
    return out


def populate_named(gate: Gate, names: list[str]) -> None:
    for start in range(0, len(names), 1000):
        items = [{"op": "write_node", **node(n)} for n in names[start : start + 1000]]
        result = gate.write_batch(items=items)
        assert result.status == "written", result


def bench_batch(gate: Gate, batches: int, prefix: str) -> float:
    started = time.perf_counter()
    for b in range(batches):
        result = gate.write_batch(
            items=[{"op": "write_node", **node(f"{prefix}{b}-{i}")} for i in range(1000)]
        )
        assert result.status == "written", result
    return batches * 1000 / (time.perf_counter() - started)


def floor(
    sample_row: tuple[Any, ...], durability: str, singles: int, batches: int
) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "floor.db", isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {durability.upper()}")
        conn.execute(
            "CREATE TABLE events (seq INTEGER PRIMARY KEY, event_id TEXT, type TEXT, occurred_at TEXT,"
            " actor TEXT, streams TEXT, payload TEXT, provenance TEXT, request TEXT,"
            " idempotency_key TEXT, prev_hash TEXT, hash TEXT)"
        )
        insert = "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        rest = sample_row[1:]
        seq = 0
        started = time.perf_counter()
        for _ in range(singles):
            seq += 1
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(insert, (seq, *rest))
            conn.execute("COMMIT")
        single_rate = singles / (time.perf_counter() - started)
        started = time.perf_counter()
        for _ in range(batches):
            rows = [(seq + i + 1, *rest) for i in range(1000)]
            seq += 1000
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(insert, rows)
            conn.execute("COMMIT")
        batch_rate = batches * 1000 / (time.perf_counter() - started)
        conn.close()
    return single_rate, batch_rate


def traced_statements(gate: Gate) -> list[str]:
    """The SQL one accepted single ``write_node`` runs, as SQLite saw it (a trigger firing is
    reported as its statement again: consecutive repeats are folded)."""
    statements: list[str] = []
    conn = gate.log.connection()
    assert isinstance(conn, sqlite3.Connection)  # the bench measures the SQLite default
    conn.set_trace_callback(statements.append)
    try:
        gate.write_node(**node("traced"))
    finally:
        conn.set_trace_callback(None)
    return [s for i, s in enumerate(statements) if i == 0 or s != statements[i - 1]]


def gate_sql_ceiling(
    gate: Gate, writes: int, per_transaction: int, *, least: bool = False
) -> float:
    """Replay the statements single ``write_node`` calls run (see ``traced_statements``) on
    the gate's own file, ``per_transaction`` writes to a transaction, values prepared in
    advance: what SQLite costs the gate with no Python work around it. Writes/s.

    ``least`` keeps only what any gate with a read model in the write's transaction must
    store: the event row and the node's state row (no reads, stream index or checkpoint)."""
    conn = gate.log.connection()
    event = list(conn.execute("SELECT * FROM events ORDER BY seq DESC LIMIT 1").fetchone())
    state = list(conn.execute("SELECT * FROM state_nodes LIMIT 1").fetchone())
    fact = conn.execute("SELECT provenance FROM state_facts LIMIT 1").fetchone()[0]
    columns = ", ".join("?" * len(state))
    prepared = []
    seq, prev = event[0], event[-1]
    for _ in range(writes):
        seq += 1
        identity = f'Person{{"name":"ceiling{seq}"}}'
        digest = f"{seq:064x}"
        prepared.append(
            (
                identity,
                f"node:{identity}",
                (seq, *event[1:10], prev, digest),
                (identity, *state[1:8], seq, seq, *state[10:]),
                seq,
            )
        )
        prev = digest
    started = time.perf_counter()
    for first in range(0, writes, per_transaction):
        conn.execute("BEGIN IMMEDIATE")
        chunk = prepared[first : first + per_transaction]
        if least:
            for _, _, event_row, state_row, _ in chunk:
                conn.execute(_INSERT_EVENT, event_row)
                conn.execute(f"INSERT OR REPLACE INTO state_nodes VALUES ({columns})", state_row)
            conn.execute("COMMIT")
            continue
        conn.execute("SELECT seq, hash, occurred_at FROM events ORDER BY seq DESC LIMIT 1")
        for identity, stream, event_row, state_row, at in chunk:
            conn.execute("SELECT MAX(version) FROM event_streams WHERE stream = 'schema'")
            conn.execute("SELECT * FROM state_nodes WHERE identity = ?", (identity,)).fetchone()
            conn.execute("SELECT identity FROM state_aliases WHERE alias = ?", (identity,))
            conn.execute("SELECT MAX(version) FROM event_streams WHERE stream = ?", (stream,))
            conn.execute(_INSERT_EVENT, event_row)
            conn.execute(_INSERT_STREAM, (stream, 1, at))
            conn.execute(
                "SELECT properties, remapped_from, created_seq FROM state_nodes WHERE identity = ?",
                (identity,),
            ).fetchone()
            conn.execute(f"INSERT OR REPLACE INTO state_nodes VALUES ({columns})", state_row)
            conn.execute(
                "INSERT OR REPLACE INTO state_facts VALUES (?, 'age', ?, 'bench', ?)",
                (identity, at, fact),
            )
        conn.execute(
            "INSERT INTO projection_checkpoints (name, seq) VALUES ('state', ?) "
            "ON CONFLICT (name) DO UPDATE SET seq = excluded.seq",
            (at,),
        )
        conn.execute("COMMIT")
    return writes / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--durability", choices=["normal", "full"], default="normal")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    print(
        f"writegate gate benchmark  (WAL, synchronous={args.durability.upper()}, sqlite {sqlite3.sqlite_version})"
    )
    single_rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        gate = Gate.open(Path(tmp) / "bench.db", durability=args.durability, default_actor=ACTOR)
        gate.publish_schema(SCHEMA)
        existing = 0
        for size in sizes:
            populate(gate, size - existing, f"pre{size}-")
            existing = size
            rate, p50, p99 = bench_single(gate, args.calls, f"single{size}-")
            existing += args.calls
            single_rates[size] = rate
            print(
                f"  write_node, log of {size:>7,} nodes: {rate:>9,.0f} calls/s   p50 {p50:6.0f} µs   p99 {p99:6.0f} µs"
            )
        batch_rate = bench_batch(gate, args.batches, "batch-")
        print(f"  write_batch of 1,000:                  {batch_rate:>9,.0f} events/s")
        for kind, (p50, p99) in bench_saying_again(gate, args.calls, "again-").items():
            print(
                f"  write_node of an existing node, {kind:<13}  p50 {p50:6.0f} µs   p99 {p99:6.0f} µs"
            )
        head = gate.log.head()[0]
        started = time.perf_counter()
        report = gate.log.verify()
        verify_rate = report.checked / (time.perf_counter() - started)
        assert report.ok
        print(f"  verify ({head:,} events):              {verify_rate:>9,.0f} events/s")
        sample = (
            gate.log.connection()
            .execute("SELECT * FROM events ORDER BY seq DESC LIMIT 1")
            .fetchone()
        )
        statements = traced_statements(gate)
        # last: the rows these write are not a valid chain
        ceiling_single = gate_sql_ceiling(gate, args.calls, 1)
        ceiling_batch = gate_sql_ceiling(gate, args.batches * 1000, 1000)
        least_single = gate_sql_ceiling(gate, args.calls, 1, least=True)
        least_batch = gate_sql_ceiling(gate, args.batches * 1000, 1000, least=True)
        gate.close()

    floor_single, floor_batch = floor(sample, args.durability, args.calls * 2, args.batches)
    print(f"  floor: bare INSERT per transaction:    {floor_single:>9,.0f} rows/s")
    print(f"  floor: bare INSERTs, batches of 1,000: {floor_batch:>9,.0f} rows/s")
    print(f"  the gate's own SQL for one write_node ({len(statements)} statements, traced):")
    for statement in statements:
        print(f"      {statement[:96]}")
    print(
        f"  ... replayed bare, a write per transaction:   {ceiling_single:>9,.0f} writes/s"
        f"  = {ceiling_single / floor_single:6.1%} of the single-insert floor"
    )
    print(
        f"  ... replayed bare, 1,000 writes per transaction: {ceiling_batch:>6,.0f} writes/s"
        f"  = {ceiling_batch / floor_batch:6.1%} of the batched floor"
    )
    print(
        f"  ... only an event row and a state row, a write per transaction: {least_single:>6,.0f}"
        f" writes/s = {least_single / floor_single:6.1%} of the single-insert floor"
    )
    print(
        f"  ... only an event row and a state row, 1,000 writes per transaction: {least_batch:>6,.0f}"
        f" writes/s = {least_batch / floor_batch:6.1%} of the batched floor"
    )
    spread = max(single_rates.values()) / min(single_rates.values())
    worst = min(single_rates.values())
    print(
        f"  single write_node, slowest size / floor:  {worst / floor_single:6.1%}  (target >= 40%)"
    )
    print(
        f"  write_batch / batched floor:              {batch_rate / floor_batch:6.1%}  (target >= 30%)"
    )
    print(
        f"  single write_node, slowest size / its least record: {worst / least_single:6.1%}"
        "  (target >= 50%)"
    )
    print(
        f"  write_batch / its least record in batches:   {batch_rate / least_batch:6.1%}"
        "  (target >= 50%)"
    )
    python = 1 / worst - 1 / ceiling_single  # a write's time outside its SQL
    best = 1 / (python + 1 / least_single)
    print(
        f"  ceiling: a write spends {python * 1e6:.0f} µs outside its SQL (validation, provenance,"
        f" JSON, hashing, models);\n  with that Python and only the least record's SQL a write"
        f" would reach {best:,.0f} writes/s = {best / least_single:.1%} of its least record"
    )
    print(f"  single write_node spread across sizes:    {spread:6.2f}x  (target <= 1.5x)")


if __name__ == "__main__":
    main()
