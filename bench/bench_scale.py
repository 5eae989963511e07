"""What grows with the log, and what must not: the same measures on logs of 1k, 100k and 1M
events, side by side in one run.

For each size (logs built once by ``bench_projections.cached_log`` and cached under
``--cache``), each measure in a fresh process so its time and peak RSS are its own:
  * schema load: opening the gate and loading the newest schema (cold), then
    ``refresh_schema_cache`` (median of 20);
  * server start: ``writegate serve`` over stdio until the SDK client's ``initialize`` is
    answered and ``tools/list`` returned (median of 5), beside the SDK's no-op server;
  * ``verify``: every check, its time and the process's peak RSS;
  * writes on a copy of the log: single ``write_node`` calls in process and through MCP over
    stdio (p50, p99), beside the official MCP memory server's ``create_entities`` on graphs
    of 1k, 10k and 30k entities (``--memory-sizes``) — its file is rewritten on every call;
  * disk: bytes per event — the file, and what a row is made of (each column's mean length,
    the hashes, the indexes and the state read model, from SQLite's ``dbstat``).
Nothing asserts.

usage: python bench/bench_scale.py [--sizes 1000,100000,1000000] [--cache /tmp/wg-bench]
                                   [--memory-sizes 1000,10000,30000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_mcp import MEMORY_SERVER, memory_server_timed, node  # noqa: E402
from bench.bench_projections import cached_log  # noqa: E402
from tests.server.harness import WRITEGATE, stdio_agent  # noqa: E402
from writegate.gate import Gate  # noqa: E402

NOOP = ROOT / "bench" / "noop_server.py"  # the SDK's smallest server, for the floor
WRITES = 1000  # timed single writes in process (a quarter of it through MCP)
COLUMNS = ("payload", "provenance", "request", "actor", "streams", "hash", "prev_hash")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def child(kind: str, log_path: str) -> dict[str, Any]:
    """One measure in this (fresh) process, returned as one JSON line."""
    out: dict[str, Any] = {}
    started = time.perf_counter()
    gate = Gate.open(log_path, create=False)
    if kind == "schema":
        gate.current_schema()
        out["load"] = time.perf_counter() - started
        refreshes = []
        for _ in range(20):
            began = time.perf_counter()
            gate.refresh_schema_cache()
            refreshes.append(time.perf_counter() - began)
        out["refresh"] = statistics.median(refreshes)
    elif kind == "writes":
        latencies = []
        for i in range(-50, WRITES):  # the first 50 warm up, untimed
            began = time.perf_counter()
            assert gate.write_node(**node("scale", i)).status == "written"
            if i >= 0:
                latencies.append(time.perf_counter() - began)
        out["p50"], out["p99"] = _quantiles(latencies)
    elif kind == "verify":
        report = gate.verify()
        out["ok"] = report.ok
        out["seconds"] = time.perf_counter() - started
    else:
        raise SystemExit(f"unknown measure {kind}")
    gate.close()
    out["rss"] = peak_rss_mb()
    return out


def _quantiles(latencies: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    return q[49], q[98]


def run_child(kind: str, log: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(log)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


async def _start_once(params: StdioServerParameters) -> float:
    began = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        return time.perf_counter() - began


def server_start(command: list[str], runs: int = 5) -> float:
    """Median seconds from spawning the server to ``initialize`` answered and tools listed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WRITEGATE_")}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    return statistics.median(anyio.run(_start_once, params) for _ in range(runs))


async def _stdio_writes(db: Path) -> tuple[float, float]:
    async with stdio_agent(db, "bench-scale") as agent:
        latencies = []
        for i in range(-20, WRITES // 4):  # the first 20 warm up, untimed
            began = time.perf_counter()
            assert not (await agent.call("write_node", node("stdio", i))).is_error
            if i >= 0:
                latencies.append(time.perf_counter() - began)
    return _quantiles(latencies)


def writes(log: Path) -> tuple[dict[str, Any], tuple[float, float]]:
    """Single writes on a copy of the log (the cached one stays as built)."""
    with tempfile.TemporaryDirectory(dir=log.parent) as folder:
        copy = Path(folder) / log.name
        shutil.copyfile(log, copy)
        in_process = run_child("writes", copy)
        return in_process, anyio.run(_stdio_writes, copy)


def memory_server(sizes: list[int]) -> list[tuple[float, float]]:
    """The official MCP memory server's p50/p99 per ``create_entities`` call at each size."""
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            latencies, _ = anyio.run(memory_server_timed, size, WRITES // 4, Path(folder))
            results.append(_quantiles(latencies))
    return results


def disk(log: Path, events: int) -> dict[str, float]:
    """Bytes per event: the file, each stored column's mean length, and the pages of the
    events table, the stream index, the state read model (tables and indexes) and the rest."""
    conn = sqlite3.connect(f"file:{log}?mode=ro", uri=True)
    out = {"file": log.stat().st_size / events}
    means = conn.execute(
        f"SELECT {', '.join(f'avg(length({c}))' for c in COLUMNS)} FROM events"
    ).fetchone()
    out.update({f"events.{c}": m or 0.0 for c, m in zip(COLUMNS, means, strict=True)})
    try:
        pages = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.OperationalError:  # built without dbstat
        pages = []
    for group in ("events", "event_streams", "state read model", "the rest"):
        out[f"b-tree: {group}"] = (
            sum(size for name, size in pages if _group(name) == group) / events
        )
    conn.close()
    return out


def _group(btree: str) -> str:
    if btree in ("events", "event_streams"):
        return btree
    if btree.startswith("state_") or btree.startswith("sqlite_autoindex_state_"):
        return "state read model"
    return "the rest"


def scale(sizes: list[int], cache: Path, memory_sizes: list[int]) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[str]] = {}

    def put(label: str, value: str) -> None:
        rows.setdefault(label, []).append(value)

    noop = server_start([sys.executable, str(NOOP)]) if NOOP.exists() else float("nan")
    for events in sizes:
        log = cached_log(cache, events)
        schema = run_child("schema", log)
        put("schema load, cold (ms)", f"{schema['load'] * 1000:.1f}")
        put("refresh_schema_cache (ms)", f"{schema['refresh'] * 1000:.2f}")
        start = server_start([WRITEGATE, "--db", str(log), "serve"])
        put("server start to tools/list (s)", f"{start:.2f}")
        put("  the SDK's no-op server (s)", f"{noop:.2f}")
        in_process, stdio = writes(log)
        put("write_node in process p50 / p99 (ms)", _pair(in_process["p50"], in_process["p99"]))
        put("write_node MCP stdio p50 / p99 (ms)", _pair(*stdio))
        verified = run_child("verify", log)
        put("verify (s)", f"{verified['seconds']:.1f}" + ("" if verified["ok"] else " FAILED"))
        put("verify peak RSS (MB)", f"{verified['rss']:.0f}")
        sizes_of = disk(log, events)
        for label, value in sizes_of.items():
            put(f"disk: {label} (B/event)", f"{value:,.0f}")
    _table("events", sizes, rows)
    if MEMORY_SERVER.exists():
        peer = memory_server(memory_sizes)
        print()
        _table(
            "entities",
            memory_sizes,
            {"memory server create_entities p50 / p99 (ms)": [_pair(*q) for q in peer]},
        )
    else:
        print("(the memory server is not installed: `make bench` installs tests/peers)")


def _pair(p50: float, p99: float) -> str:
    return f"{p50 * 1000:.2f} / {p99 * 1000:.2f}"


def _table(what: str, sizes: list[int], rows: dict[str, list[str]]) -> None:
    width = max(len(label) for label in rows)
    print(f"{what:<{width}}" + "".join(f"{n:>16,}" for n in sizes))
    for label, values in rows.items():
        print(f"{label:<{width}}" + "".join(f"{v:>16}" for v in values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "wg-bench")
    parser.add_argument("--memory-sizes", default="1000,10000,30000")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    scale(
        [int(s) for s in args.sizes.split(",")],
        args.cache,
        [int(s) for s in args.memory_sizes.split(",")],
    )


if __name__ == "__main__":
    main()
