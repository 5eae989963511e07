"""A writer run as its own OS process by the concurrency and crash tests.

usage: python writer_process.py DB PREFIX COUNT [MODE]
MODE ``single`` (default) writes one node per transaction; ``mixed`` alternates single
writes, relationships and batches. Prints the seq of each acknowledged write, flushed,
so a test can check that every acknowledged write survived a crash.
"""

from __future__ import annotations

import sys
from typing import Any

from writegate.eventlog import Actor
from writegate.gate import Gate


def main() -> None:
    db, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mode = sys.argv[4] if len(sys.argv) > 4 else "single"
    common: dict[str, Any] = {
        "source": f"proc:{prefix}",
        "extraction_method": "api",
        "reliability": 1.0,
    }
    with Gate.open(db, create=False, default_actor=Actor(agent=f"proc-{prefix}")) as gate:
        for i in range(count):
            name = f"{prefix}-{i}"
            if mode == "mixed" and i % 3 == 1:
                batch = gate.write_batch(
                    items=[
                        {
                            "op": "write_node",
                            "label": "Person",
                            "merge_keys": {"name": f"{name}-{j}"},
                            **common,
                        }
                        for j in range(10)
                    ]
                )
                seq = batch.last_seq  # type: ignore[union-attr]
            elif mode == "mixed" and i % 3 == 2:
                linked = gate.write_relationship(
                    type="KNOWS",
                    from_label="Person",
                    from_keys={"name": f"{prefix}-{i - 1}"},
                    to_label="Person",
                    to_keys={"name": f"{prefix}-{i - 2}"},
                    endpoint_policy="merge_endpoints",
                    **common,
                )
                seq = linked.seq  # type: ignore[union-attr]
            else:
                result = gate.write_node(
                    label="Person", merge_keys={"name": name}, properties={"age": i}, **common
                )
                seq = result.seq  # type: ignore[union-attr]
            print(seq, flush=True)


if __name__ == "__main__":
    main()
