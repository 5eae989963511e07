"""What a personal label costs a write through the gate: ``write_node`` of a Person whose
label is personal (a subject looked up, the write planned again in its transaction, name,
email and blocking keys sealed) against the same write to a plain label, one call each, the
two logs written in turns of 100 so that a busy machine slows both alike; then reading
nodes back by their keys, and forgetting one. Nothing asserts.

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
TURN = 100


def opened(folder: Path, personal: bool) -> Gate:
    document: dict[str, Any] = yaml.safe_load(SCHEMA.read_text())
    if not personal:
        document["nodes"]["Person"].pop("personal")
        document["nodes"]["Person"]["properties"]["email"].pop("personal")
    gate = Gate.open(folder / f"{'personal' if personal else 'plain'}.db", default_actor=ACTOR)
    gate.publish_schema(document)
    return gate


def writes(gate: Gate, first: int) -> float:
    start = time.perf_counter()
    for i in range(first, first + TURN):
        gate.write_node(
            label="Person",
            merge_keys={"name": f"person {i}"},
            properties={"email": f"p{i}@example.org", "role": "engineer"},
            source="bench",
            extraction_method="manual",
            resolution="new",  # the names are alike: no duplicate search, on either side
        )
    return time.perf_counter() - start


def reads(gate: Gate, first: int) -> float:
    reader, schema = GraphReader(gate.log, gate.state), gate.current_schema()
    start = time.perf_counter()
    for i in range(first, first + TURN):
        reader.open_nodes([{"label": "Person", "merge_keys": {"name": f"person {i}"}}], schema)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=2000)
    args = parser.parse_args()
    turns = range(0, max(args.writes // TURN, 1) * TURN, TURN)
    with tempfile.TemporaryDirectory() as scratch:
        gates = [opened(Path(scratch), personal) for personal in (False, True)]
        spent = {"writes/s": [0.0, 0.0], "reads/s": [0.0, 0.0]}
        for work, name in ((writes, "writes/s"), (reads, "reads/s")):
            for first in turns:
                for side, gate in enumerate(gates):
                    spent[name][side] += work(gate, first)
        start = time.perf_counter()
        gates[1].forget("Person", {"name": "person 7"}, reason="bench")
        forgot = time.perf_counter() - start
        heads = [gate.log.head()[0] for gate in gates]
        for gate in gates:
            gate.close()
    done = len(turns) * TURN
    for name, (plain, personal) in spent.items():
        print(f"{name:9} plain {done / plain:9,.0f}  personal {done / personal:9,.0f}  "
              f"({plain / personal:.2f})")  # fmt: skip
    print(f"forgetting one person of {done:,}: {forgot * 1000:.0f} ms (log heads {heads})")


if __name__ == "__main__":
    main()
