"""How fast the desk's pages render as the log grows (the issue asks ≤ 200 ms at 1M
events for the overview, a node page and the first page of the log).

For each size (logs built once by ``bench_projections.cached_log`` and cached under
``--cache``), ``writegate desk`` is started on the log (read-only, as an auditor: the same
pages and tool calls as behind ``serve --http``, less the session lookup) and each page is
fetched: the first fetch (cold), then the median and worst of ``--repeat`` more. The node is
one a quarter of the way into the log (``p<events/4>``, with its neighbours). Nothing asserts.

A log built elsewhere (another bench's, under ``--cache`` by the same name) names its
people otherwise: ``--node`` names the node to fetch, as ``Label:{"key": "value"}``.

usage: python bench/bench_desk.py [--sizes 1000,100000,1000000] [--cache /tmp/wg-bench]
                                  [--repeat 20] [--node 'Person:{"name": "p25000"}']
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO
from urllib.parse import urlencode

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_projections import cached_log  # noqa: E402
from tests.server.harness import WRITEGATE, stop  # noqa: E402


def started(log: Path, said: IO[bytes]) -> tuple[subprocess.Popen[bytes], str]:
    process = subprocess.Popen(
        [WRITEGATE, "--db", str(log), "desk"], stdout=subprocess.DEVNULL, stderr=said
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        said.seek(0)
        text = said.read().decode()
        if "writegate desk on " in text:
            return process, text.split("writegate desk on ", 1)[1].split()[0].rstrip("/")
        if process.poll() is not None:
            raise SystemExit(f"writegate desk stopped: {text}")
        time.sleep(0.05)
    raise SystemExit("writegate desk did not start")


def timed(client: httpx2.Client, path: str, repeat: int) -> tuple[float, float, float]:
    """The first fetch, then the median and worst of ``repeat`` more, in ms."""

    def once() -> float:
        begun = time.perf_counter()
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.status_code)
        return (time.perf_counter() - begun) * 1000

    first = once()
    rest = [once() for _ in range(repeat)]
    return first, statistics.median(rest), max(rest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "wg-bench")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--node", default=None, help='Label:{"key": "value"} (p<events/4>)')
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    print(f"{'events':>10} {'page':<10} {'first ms':>9} {'p50 ms':>8} {'worst ms':>9}")
    for events in [int(s) for s in args.sizes.split(",")]:
        log = cached_log(args.cache, events)
        with tempfile.TemporaryFile() as said:
            process, url = started(log, said)
            try:
                with httpx2.Client(base_url=url, timeout=600) as client:
                    label, keys = "Person", json.dumps({"name": f"p{events // 4}"})
                    if args.node:
                        label, _, keys = args.node.partition(":")
                    keys = json.dumps(json.loads(keys), separators=(",", ":"))
                    node = "/node?" + urlencode({"label": label, "keys": keys})
                    pages = {"overview": "/", "node": node, "log": "/log"}
                    for name, path in pages.items():
                        first, p50, worst = timed(client, path, args.repeat)
                        print(f"{events:>10,} {name:<10} {first:>9.1f} {p50:>8.1f} {worst:>9.1f}")
            finally:
                stop(process)


if __name__ == "__main__":
    main()
