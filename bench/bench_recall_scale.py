"""graph_query's latency over many observations in one memory, beside search_observations:
in process, one run, nothing asserted.

For each size, a SQLite log holding that many observations in one memory: LoCoMo's 5,882
turns (``recall_data``; CC BY-NC 4.0, read from the cache, never shipped) recorded again
and again, each copy its own conversations and sessions, said a day after the copy before,
and each copy's speakers ``Person`` nodes as the recall bench has them. Then LoCoMo's
questions, asked in turn: ``graph_query`` (the default recipe: the words, the people and
the times a question names, each hit's session context) and ``search_observations`` (the
words alone), p50 / p99 of each, and the process's peak resident memory.

usage: python bench/bench_recall_scale.py [--sizes 10000,100000] [--questions 300]
                                          [--keep DIR]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_search import p, timed  # noqa: E402
from bench.recall_data import DataMissing, load, locate  # noqa: E402
from bench.recall_systems import SCHEMA, START  # noqa: E402
from writegate.eventlog import Actor  # noqa: E402
from writegate.eventlog.bulk import bulk  # noqa: E402
from writegate.gate import Gate, GateRejection, ObservationResult  # noqa: E402


def build(db: Path, size: int) -> None:
    """``size`` observations: LoCoMo's turns, copy after copy, and each copy's speakers."""
    conversations = load(locate())
    kept = 0
    with bulk(), Gate.open(db, default_actor=Actor(agent="bench-scale")) as gate:
        gate.publish_schema(SCHEMA)
        copy = 0
        while kept < size:
            for c in conversations:
                people = {t.speaker for t in c.turns}
                items = [
                    {
                        "op": "write_node",
                        "label": "Person",
                        "merge_keys": {"name": f"{name} {copy}" if copy else name},
                        "source": "bench",
                        "extraction_method": "parsed",
                    }
                    for name in sorted(people)
                ]
                written = gate.write_batch(items=items)
                assert written.status != "rejected", written
                for t in c.turns:
                    if kept >= size:
                        return
                    said = t.said_at or START + timedelta(days=t.session)
                    recorded = gate.record_observation(
                        text=f"{t.speaker}: {t.text}",
                        source=f"locomo:{c.sample_id}:{copy}",
                        extraction_method="parsed",
                        session=f"{copy}:{c.sample_id}:{t.session}",
                        said_at=said + timedelta(days=copy, seconds=t.position),
                    )
                    assert isinstance(recorded, ObservationResult), recorded
                    kept += 1
            copy += 1


def latency(db: Path, questions: list[str]) -> dict[str, tuple[str, str]]:
    with Gate.open(db, readonly=True) as gate:
        graph, said = gate.reader(), gate.observation_reader()

        def search(question: str) -> object:
            try:
                return said.search_observations(question, limit=10)
            except GateRejection:  # a question without words
                return None

        asked: dict[str, Callable[[str], object]] = {
            "graph_query": graph.graph_query,
            "search_observations": search,
        }
        for ask in asked.values():  # warm: the first calls load what later ones reuse
            for question in questions[:5]:
                ask(question)
        spent: dict[str, list[float]] = {name: [] for name in asked}
        for question in questions:  # alternated, so a busy moment costs both alike
            for name, ask in asked.items():
                spent[name] += timed([partial(ask, question)])
    return {name: (p(values, 0.5), p(values, 0.99)) for name, values in spent.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--keep", type=Path, help="keep the built logs here, and reuse them")
    args = parser.parse_args()
    try:
        conversations = load(locate())
    except (DataMissing, ValueError) as missing:
        print(missing, file=sys.stderr)
        return 2
    questions = [q.text for c in conversations for q in c.questions][: args.questions]
    print("observations  graph_query p50 / p99 ms  search_observations p50 / p99 ms  peak RSS MB")
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for size in (int(s) for s in args.sizes.split(",")):
            db = folder / f"recall-scale-{size}.db"
            if not db.exists():
                build(db, size)
            found = latency(db, questions)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            (g50, g99), (s50, s99) = found["graph_query"], found["search_observations"]
            print(f"{size:>12,}  {g50:>11} / {g99:<10}  {s50:>15} / {s99:<15}  {peak:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
