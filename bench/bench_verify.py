"""What ``writegate verify`` holds as the log grows: its time and peak resident memory beside
the log's size, each run in a fresh process, as an operator runs it.

Logs (half nodes, half relationships) are built once by ``bench_projections.cached_log`` and
cached under ``--cache``. ``verify`` reads the whole log (the chain, then a replay of the
state read model to compare), so its time grows with the log; its memory should not.
Issue 42: 179 MB at 100k events while a read-only connection's 64 MiB page cache filled
with pages read once (97 MB before that cache; now the scan keeps SQLite's default).
Nothing asserts.

usage: python bench/bench_verify.py [--sizes 1000,100000] [--cache /tmp/wg-bench]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WRITEGATE = str(Path(sys.executable).with_name("writegate"))


def built(cache: Path, events: int) -> Path:
    """The cached log of ``events``, built by a process of its own: this one imports nothing
    of writegate, since a child's peak RSS starts at its parent's (fork copies it)."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
        "from pathlib import Path; from bench.bench_projections import cached_log; "
        f"print(cached_log(Path({str(cache)!r}), {events}))"
    )
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def verified(log: Path) -> tuple[float, float, bool]:
    """``writegate verify`` of ``log`` in a process of its own: seconds, peak RSS (MB), ok."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [WRITEGATE, "--db", str(log), "verify"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss / 1024, process.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,100000", help="events per log, comma-separated")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/wg-bench"))
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    print(f"{'events':>10}  {'log file (MB)':>13}  {'verify (s)':>10}  {'peak RSS (MB)':>13}")
    for events in (int(size) for size in args.sizes.split(",")):
        log = built(args.cache, events)
        seconds, rss, ok = verified(log)
        size = log.stat().st_size / 1e6
        failed = "" if ok else "  FAILED"
        print(f"{events:>10,}  {size:>13,.0f}  {seconds:>10.1f}  {rss:>13,.0f}{failed}")


if __name__ == "__main__":
    main()
