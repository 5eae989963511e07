"""Import throughput: an MCP memory-server file of ``--items`` lines through the gate.

Writes a file in the official memory server's format (60% entities with observations, 40%
relations), imports it into a fresh log with the example schema, and prints items/s for
the dry run, the real run, and the idempotent re-run (which appends nothing). Nothing
asserts.

usage: python bench/bench_import.py [--items 100000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import plain_example  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.gate.imports import import_file  # noqa: E402

SCHEMA = plain_example()  # synthetic look-alike names: the plain write path


def memory_file(path: Path, items: int) -> None:
    entities = items * 6 // 10
    with path.open("w") as out:
        for i in range(entities):
            record = {
                "type": "entity",
                "name": f"person {i}",
                "entityType": "person",
                "observations": [f"age: {20 + i % 50}", "role: engineer", f"met at event {i % 97}"],
            }
            out.write(json.dumps(record) + "\n")
        for i in range(items - entities):
            record = {
                "type": "relation",
                "from": f"person {i + 1}",
                "to": f"person {i}",
                "relationType": "knows",
            }
            out.write(json.dumps(record) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        path = tmp / "memory.jsonl"
        memory_file(path, args.items)
        print(f"import benchmark: {args.items:,} items in the MCP memory server's format")
        with Gate.open(tmp / "import.db", default_actor=Actor(agent="bench")) as gate:
            gate.publish_schema(SCHEMA)
            for label, dry_run in (
                ("dry run", True),
                ("import", False),
                ("re-run (idempotent)", False),
            ):
                started = time.perf_counter()
                summary = import_file(
                    gate, path, "mcp-memory", extraction_method="llm", dry_run=dry_run
                )
                elapsed = time.perf_counter() - started
                print(
                    f"  {label:<22} {summary.items:>8,} items in {elapsed:6.2f} s = "
                    f"{summary.items / elapsed:>8,.0f} items/s  (accepted {summary.accepted:,}, "
                    f"events appended {summary.events_appended:,})"
                )


if __name__ == "__main__":
    main()
