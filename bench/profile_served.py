"""Where a served write's CPU goes, on SQLite beside PostgreSQL, in one run.

One ``writegate serve --http`` on each backend (the harness's PostgreSQL: tests/postgres.py)
takes the same load — ``--clients`` SDK clients x ``--writes`` ``write_node`` of new nodes,
after a warm-up — while yappi, started inside the server by a signal once warm (this file
runs it as the server's launcher: nothing in writegate's own code), counts CPU time over
every thread. Prints, for each backend, the server's CPU a write (read from /proc, as
``bench_backends.py`` does, but under the profiler, which inflates it several-fold), then
the profiled CPU a write by package — psycopg, writegate's modules, the SDK, asyncio... —
on each backend and the difference, and psycopg's statements a write. The split is what
to read: which part of a PostgreSQL server's extra CPU is psycopg's, which writegate's.
Needs yappi (``pip install yappi``); nothing asserts.

usage: python bench/profile_served.py [--clients 8] [--writes 60] [--top 14]
"""

from __future__ import annotations

import argparse
import collections
import importlib
import os
import pstats
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_backends import SCHEMA, cpu_seconds, node  # noqa: E402
from tests.postgres import postgres_server  # noqa: E402
from tests.server.harness import free_port, http_agent, wait_listening  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.gate.server.tokens import create_token  # noqa: E402

OUT = "WRITEGATE_PROFILE_OUT"


def launch() -> None:
    """As the server's launcher: yappi starts on SIGUSR1, saves on SIGUSR2, then serve."""
    yappi: Any = importlib.import_module("yappi")
    yappi.set_clock_type("cpu")

    def start(*_: object) -> None:
        yappi.clear_stats()
        yappi.start(builtins=True, profile_threads=True)

    def save(*_: object) -> None:
        yappi.stop()
        yappi.get_func_stats().save(os.environ[OUT], type="pstat")
        Path(os.environ[OUT] + ".done").touch()

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, save)
    from writegate.cli.main import main  # noqa: PLC0415

    sys.argv = ["writegate", *sys.argv[2:]]
    main()


def served(address: str, scratch: Path, tag: str, clients: int, writes: int) -> float:
    """The server's CPU milliseconds a write under the load, profiled into scratch/tag."""
    tokens, port, out = scratch / f"{tag}.tokens.json", free_port(), scratch / f"{tag}.pstat"
    keys = [create_token(tokens, f"{tag}-{c}", ("writer",)) for c in range(clients)]
    command = [sys.executable, __file__, "--launch", "--db", address, "serve", "--http"]
    command += ["--port", str(port), "--tokens", str(tokens)]
    process = subprocess.Popen(
        command,
        env={**os.environ, OUT: str(out)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_listening(port, process)
    url = f"http://127.0.0.1:{port}/mcp"

    async def client(c: int, count: int, prefix: str) -> None:
        async with http_agent(url, keys[c]) as agent:
            for i in range(count):
                outcome = await agent.call("write_node", node(f"{prefix}-{c}-{i}"))
                assert not outcome.is_error, outcome.data

    async def load(count: int, prefix: str) -> None:
        async with anyio.create_task_group() as group:
            for c in range(clients):
                group.start_soon(client, c, count, prefix)

    try:
        anyio.run(load, 3, f"{tag}-warm")
        process.send_signal(signal.SIGUSR1)
        time.sleep(0.3)
        used = cpu_seconds(process.pid)
        anyio.run(load, writes, tag)
        used = cpu_seconds(process.pid) - used
        process.send_signal(signal.SIGUSR2)
        while not Path(f"{out}.done").exists():
            time.sleep(0.1)
    finally:
        process.terminate()
        process.wait(timeout=10)
    return float(used / (clients * writes) * 1e3)


def by_package(path: Path, writes: int) -> tuple[dict[str, float], float]:
    """Profiled CPU milliseconds a write by package, and psycopg's statements a write."""
    parts: dict[str, float] = collections.defaultdict(float)
    statements = 0
    stats: Any = pstats.Stats(str(path))
    for (file, _line, name), (_cc, calls, own, _cum, _callers) in stats.stats.items():
        if found := re.search(r"site-packages/([^/]+)", file):
            key = found.group(1)
        elif (here := Path(file)).is_relative_to(ROOT):
            key = "writegate " + str(here.relative_to(ROOT))
        elif "python3" in file:
            key = "stdlib " + re.sub(r".*/python3\.\d+/", "", file).split("/")[0]
        else:
            key = "builtins"
        parts[key] += own / writes * 1e3
        if key == "psycopg" and name == "Cursor.execute" and file.endswith("psycopg/cursor.py"):
            statements += calls
    return parts, statements / writes


def main() -> None:
    if sys.argv[1:2] == ["--launch"]:
        return launch()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--writes", type=int, default=60)
    parser.add_argument("--top", type=int, default=14)
    options = parser.parse_args()
    writes = options.clients * options.writes
    with tempfile.TemporaryDirectory() as tmp, postgres_server() as server:
        scratch = Path(tmp)
        addresses = {
            "sqlite": str(scratch / "served.db"),
            "postgresql": server.create_database("p"),
        }
        cpu, parts, statements = {}, {}, {}
        for name, address in addresses.items():
            with Gate.open(address) as gate:
                gate.publish_schema(SCHEMA)
            load = os.getloadavg()[0]
            cpu[name] = served(address, scratch, name, options.clients, options.writes)
            parts[name], statements[name] = by_package(scratch / f"{name}.pstat", writes)
            print(f"{name:<11} server CPU a write {cpu[name]:.2f} ms (load average {load:.2f})")
        sqlite, pg = parts["sqlite"], parts["postgresql"]
        print(f"psycopg statements a write: {statements['postgresql']:.2f}")
        print(
            f"\nprofiled CPU ms a write (yappi-inflated): total {sum(sqlite.values()):.2f} / "
            f"{sum(pg.values()):.2f}"
        )
        print(f"  {'sqlite':>8} {'postgres':>9} {'more':>7}  part")
        for key in sorted(set(sqlite) | set(pg), key=lambda k: -abs(pg[k] - sqlite[k]))[
            : options.top
        ]:
            print(f"  {sqlite[key]:>8.3f} {pg[key]:>9.3f} {pg[key] - sqlite[key]:>+7.3f}  {key}")


if __name__ == "__main__":
    main()
