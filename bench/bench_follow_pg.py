"""``writegate follow`` on PostgreSQL (woken by LISTEN/NOTIFY) beside SQLite (polled), with
four writers: how long from a write's commit to its visibility in the projected store.

Method: a ``writegate follow`` process keeps a ``state`` projection (a SQLite read model in
its own file) caught up. Four writer threads each write ``--writes`` nodes through the
Python API, one at a time, a little apart; a write returns after its commit, and that
moment is recorded. A watcher reads the projection's checkpoint every millisecond and
records when each write's ``seq`` is first covered. Latency = covered - committed, p50/p99
and max, per backend in one run. SQLite's follower polls every ``--interval`` seconds (the
default 0.2 s, and the floor 0.01 s are both shown); PostgreSQL's waits on the commit's
notification. Nothing here asserts: numbers are for reading.

usage: python bench/bench_follow_pg.py [--writes 100]
"""

from __future__ import annotations

import argparse
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.postgres import postgres_server  # noqa: E402
from tests.server.harness import WRITEGATE  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.gate import Gate  # noqa: E402

SCHEMA = ROOT / "fixtures" / "seed000_schema.yaml"
WRITERS = 4


def percentile(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


def checkpoint(watch: sqlite3.Connection) -> int:
    """The followed store's checkpoint (0 until the follower has made its tables)."""
    try:
        row = watch.execute("SELECT seq FROM projection_checkpoints WHERE name = 'mirror'")
        found = row.fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(found[0]) if found else 0


def measure(address: str | Path, scratch: Path, writes: int, interval: float) -> list[float]:
    """Commit-to-visibility latencies (ms) of ``WRITERS`` x ``writes`` writes."""
    mirror = scratch / f"mirror-{random.randrange(10**9)}.db"
    config = scratch / f"follow-{random.randrange(10**9)}.toml"
    config.write_text(f'[projections.mirror]\nkind = "state"\npath = "{mirror}"\n')
    with Gate.open(address, default_actor=Actor(agent="bench")) as gate:
        gate.publish_schema(SCHEMA)
        follower = subprocess.Popen(
            [WRITEGATE, "--db", str(address), "--config", str(config), "follow",
             "--interval", str(interval)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            while not mirror.exists():
                time.sleep(0.01)
            committed: dict[int, float] = {}
            lock = threading.Lock()

            def writer(w: int) -> None:
                rng = random.Random(w)
                for i in range(writes):
                    out = gate.write_node(
                        label="Person", merge_keys={"name": f"w{w}-{i}"}, source="bench",
                        extraction_method="api",
                    )  # fmt: skip
                    at = time.perf_counter()
                    with lock:
                        committed[out.seq] = at  # type: ignore[union-attr]
                    time.sleep(rng.uniform(0.005, 0.02))

            threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
            seen: dict[int, float] = {}
            watch = sqlite3.connect(mirror)
            for thread in threads:
                thread.start()
            total = WRITERS * writes
            while len(seen) < total:
                covered = checkpoint(watch)
                now = time.perf_counter()
                with lock:
                    for seq in committed:
                        if seq not in seen and covered >= seq:
                            seen[seq] = now
                time.sleep(0.001)
            for thread in threads:
                thread.join()
            watch.close()
        finally:
            follower.send_signal(signal.SIGTERM)
            follower.wait(timeout=30)
    return [(seen[seq] - committed[seq]) * 1e3 for seq in committed]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=100, help="per writer")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch_name, postgres_server() as server:
        scratch = Path(scratch_name)
        print(f"commit -> visible in the followed store, {WRITERS} writers x {options.writes}:")
        print(f"  {'log':<28} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        runs: list[tuple[str, str | Path, float]] = [
            ("postgresql (notified)", server.create_database("bench_follow"), 0.2),
            ("sqlite (polled every 0.2 s)", scratch / "follow-a.db", 0.2),
            ("sqlite (polled every 0.01 s)", scratch / "follow-b.db", 0.01),
        ]
        for name, address, interval in runs:
            latencies = measure(address, scratch, options.writes, interval)
            print(
                f"  {name:<28} {percentile(latencies, 50):>8.1f} "
                f"{percentile(latencies, 99):>8.1f} {max(latencies):>8.1f}"
            )


if __name__ == "__main__":
    main()
