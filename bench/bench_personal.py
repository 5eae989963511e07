"""What a personal label costs a write through the gate: ``write_node`` of a Person whose
label is personal (a subject looked up, the write planned again in its transaction, name and
email sealed) against the same write to a plain label, one call each; then reading a node
back by its keys, and forgetting one. Nothing asserts.

usage: python bench/bench_personal.py [--writes 2000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.reads.reader import GraphReader

SCHEMA = Path(__file__).resolve().parent.parent / "fixtures" / "personal_schema.yaml"
ACTOR = Actor(agent="bench", session="bench")


def run(folder: Path, writes: int, personal: bool) -> dict[str, float]:
    document: dict[str, Any] = yaml.safe_load(SCHEMA.read_text())
    if not personal:
        document["nodes"]["Person"].pop("personal")
        document["nodes"]["Person"]["properties"]["email"].pop("personal")
    name = "personal" if personal else "plain"
    with Gate.open(folder / f"{name}.db", default_actor=ACTOR) as gate:
        gate.publish_schema(document)
        start = time.perf_counter()
        for i in range(writes):
            gate.write_node(
                label="Person",
                merge_keys={"name": f"person {i}"},
                properties={"email": f"p{i}@example.org", "role": "engineer"},
                source="bench",
                extraction_method="manual",
            )
        written = time.perf_counter() - start
        reader, schema = GraphReader(gate.log, gate.state), gate.current_schema()
        start = time.perf_counter()
        for i in range(0, writes, 4):
            reader.open_nodes([{"label": "Person", "merge_keys": {"name": f"person {i}"}}], schema)
        read = time.perf_counter() - start
        forgot = 0.0
        if personal:
            start = time.perf_counter()
            gate.forget("Person", {"name": "person 7"}, reason="bench")
            forgot = time.perf_counter() - start
    return {"writes/s": writes / written, "reads/s": len(range(0, writes, 4)) / read,
            "forget ms": forgot * 1000}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        plain = run(Path(scratch), args.writes, personal=False)
        sealed = run(Path(scratch), args.writes, personal=True)
    for what in ("writes/s", "reads/s"):
        ratio = sealed[what] / plain[what]
        print(f"{what:9} plain {plain[what]:9,.0f}  personal {sealed[what]:9,.0f}  ({ratio:.2f})")
    print(f"forgetting one person of {args.writes:,}: {sealed['forget ms']:.0f} ms")


if __name__ == "__main__":
    main()
