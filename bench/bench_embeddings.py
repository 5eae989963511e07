"""Meaning's costs, in one run, nothing asserted: the shipped embedder's speed, the vector
follower's, k-NN over its store, and what a follower running beside the gate does to a write.

  * embed, for each embedder side by side (WordLlama, the ``embeddings`` extra, and MiniLM,
    the ``minilm`` extra; each in a process of its own): load time and resident memory,
    texts a second in batches, one short text's p50 (what a query costs to embed);
  * for each size, a SQLite log of that many Person nodes (bench_search's), then the
    follower replayed over it (documents a second), then ``nearest`` p50 / p99 from a
    reader in another connection: the exact scan alone (a vector given) and with the query
    embedded (a text given), and the reader's first call, which reads the store whole;
  * writes: single ``write_node`` p50 / p99 on a copy of the log with no follower, then
    with ``writegate follow`` running the vectors in another process, then with none again.

usage: python bench/bench_embeddings.py [--sizes 10000,100000] [--queries 300] [--writes 400]
                                       [--embedders wordllama,minilm]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_search import WORDS, build, p, person  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.gate import Gate  # noqa: E402
from writegate.projections import runner  # noqa: E402
from writegate.projections.vectors.embedders import load_embedder  # noqa: E402
from writegate.projections.vectors.projector import VectorProjector  # noqa: E402
from writegate.projections.vectors.wordllama import WordLlamaEmbedder  # noqa: E402

WRITEGATE = Path(sys.executable).parent / "writegate"


def embedding(name: str) -> dict[str, str]:
    """One embedder's costs, measured in a child process: resident memory is its own."""
    child = subprocess.run(
        [sys.executable, __file__, "--embed-one", name], check=False, capture_output=True, text=True
    )
    if child.returncode != 0:
        said = child.stderr.strip().splitlines() or [f"exit code {child.returncode}"]
        return {"unavailable": said[-1]}
    measured: dict[str, str] = json.loads(child.stdout)
    return measured


def embed_one(name: str) -> dict[str, str]:
    embedder = load_embedder(name)
    started = time.perf_counter()
    embedder.embed(["warm"])
    loaded = time.perf_counter() - started
    texts = [
        f"{person(i)['merge_keys']['name']} {person(i)['properties']['bio']}" for i in range(5000)
    ]
    started = time.perf_counter()
    embedder.embed(texts)
    rate = len(texts) / (time.perf_counter() - started)
    spent = []
    for text in texts[:500]:
        started = time.perf_counter()
        embedder.embed([text])
        spent.append(time.perf_counter() - started)
    return {
        "load (s)": f"{loaded:.2f}",
        "resident memory after load and 5,000 texts (MB)": (
            f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}"
        ),
        "texts a second, batches of 5,000": f"{rate:,.0f}",
        "one text p50 / p99 (ms)": f"{p(spent, 0.5)} / {p(spent, 0.99)}",
    }


def follower_and_knn(db: Path, nodes: int, count: int) -> dict[str, str]:
    rows: dict[str, str] = {}
    with Gate.open(db) as gate:
        follower = VectorProjector(gate.log, WordLlamaEmbedder())
        started = time.perf_counter()
        result = runner.replay(gate.log, follower, batch=2000)
        seconds = time.perf_counter() - started
        rows["follower catch-up: events a second"] = f"{result.applied / seconds:,.0f}"
        follower.close()
        reader = VectorProjector(gate.log, WordLlamaEmbedder())
        reader.embedder.embed(["warm"])
        started = time.perf_counter()
        reader.nearest("warm", 10, "node")
        rows["reader's first nearest (reads the store) (ms)"] = (
            f"{(time.perf_counter() - started) * 1e3:.0f}"
        )
        rng = random.Random(5)
        asked = [
            " ".join(rng.sample(WORDS, 2))
            + " "
            + person(rng.randrange(nodes))["merge_keys"]["name"]
            for _ in range(count)
        ]
        vectors = reader.embedder.embed(asked)
        spent = []
        for vector in vectors:
            started = time.perf_counter()
            reader.index.nearest(reader.conn, vector, 10, "node")
            spent.append(time.perf_counter() - started)
        rows["k-NN (k=10) of a vector: p50 / p99 (ms)"] = f"{p(spent, 0.5)} / {p(spent, 0.99)}"
        spent = []
        for text in asked:
            started = time.perf_counter()
            reader.nearest(text, 10, "node")
            spent.append(time.perf_counter() - started)
        rows["nearest (k=10) of a text: p50 / p99 (ms)"] = f"{p(spent, 0.5)} / {p(spent, 0.99)}"
        reader.close()
    return rows


def write_phase(gate: Gate, first: int, count: int) -> list[float]:
    spent = []
    for k in range(count):
        args = person(first + k)
        started = time.perf_counter()
        assert gate.write_node(**args).status == "written"
        spent.append(time.perf_counter() - started)
        time.sleep(0.002)  # agents' writes arrive apart: the follower has work between them
    return spent


def writes(db: Path, folder: Path, count: int) -> dict[str, str]:
    copy = folder / "writes.db"
    shutil.copy(db, copy)
    toml = folder / "writegate.toml"
    toml.write_text('[embeddings]\nprovider = "wordllama"\n')
    rows: dict[str, str] = {}
    with Gate.open(copy, default_actor=Actor(agent="bench")) as gate:
        subprocess.run(  # the follower starts caught up: what it then does is the new writes
            [WRITEGATE, "--db", str(copy), "--config", str(toml), "replay", "vectors"],
            check=True,
            capture_output=True,
        )
        before = write_phase(gate, 20_000_000, count)
        follow = subprocess.Popen(
            [WRITEGATE, "--db", str(copy), "--config", str(toml), "follow", "--interval", "0.05"],
            stderr=subprocess.DEVNULL,
        )
        time.sleep(3)  # it has loaded the model
        during = write_phase(gate, 30_000_000, count)
        follow.send_signal(signal.SIGINT)
        follow.wait(timeout=60)
        after = write_phase(gate, 40_000_000, count)
    for name, spent in (
        ("no follower", before),
        ("vectors followed in another process", during),
        ("no follower, again", after),
    ):
        rows[f"write_node, {name}: p50 / p99 (ms)"] = f"{p(spent, 0.5)} / {p(spent, 0.99)}"
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--writes", type=int, default=400)
    parser.add_argument("--embedders", default="wordllama,minilm")
    parser.add_argument("--embed-one", help=argparse.SUPPRESS)  # the child embedding() runs
    args = parser.parse_args()
    if args.embed_one:
        print(json.dumps(embed_one(args.embed_one)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    names = args.embedders.split(",")
    measured = {name: embedding(name) for name in names}
    width = max(len(label) for rows in measured.values() for label in rows)
    print(f"{'embed':<{width}}  " + "  ".join(f"{n:>12}" for n in names))
    for label in dict.fromkeys(label for rows in measured.values() for label in rows):
        cells = (measured[n].get(label, "-") for n in names)
        print(f"{label:<{width}}  " + "  ".join(f"{c:>12}" for c in cells))
    print("the follower and its reads: WordLlama (l2_supercat, 256 dimensions, from its wheel)")
    table: dict[str, list[str]] = {}
    written: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for nodes in sizes:
            db = folder / f"log-{nodes}.db"
            build(db, nodes)
            for label, value in follower_and_knn(db, nodes, args.queries).items():
                table.setdefault(label, []).append(value)
            if nodes == sizes[0]:
                written = writes(db, folder, args.writes)
    width = max(map(len, table))
    print(f"{'nodes':<{width}}  " + "  ".join(f"{n:>15,}" for n in sizes))
    for label, values in table.items():
        print(f"{label:<{width}}  " + "  ".join(f"{v:>15}" for v in values))
    print(f"writes on the {sizes[0]:,}-node log (a write every 2 ms or so)")
    for label, value in written.items():
        print(f"  {label}: {value}")


if __name__ == "__main__":
    main()
