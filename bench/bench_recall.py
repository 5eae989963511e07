"""Retrieval on public data: how often each way of asking finds the turns that answer a
question, beside a plain BM25 over the same texts, computed in the same run; nothing asserted.

Two public benchmarks of different kinds, each read by its module (source, licence and
checksum there): LoCoMo (``recall_data``), ten long conversations a model wrote between two
personas, and REALTALK (``realtalk_data``), ten of real people messaging over 21 days. Each
turn is one document, each question's relevant set the turns its evidence names. Every
system answers a question with the memory's turns, best first, at most 25, in two ways of
keeping the memory, one run: one memory per conversation (its questions search only it)
and one memory holding all ten (every question searches every turn). Per system, averaged
over the questions: recall@k (the share of a question's evidence in its first k), any@10 (whether
any of it is there), MRR (of the first evidence turn, 0 past 25), and the time an answer
took. Questions whose evidence names no turn of the conversation are not asked.

Systems (``SYSTEMS``; one is a function from a conversation and a scratch folder to a
context that yields ``question -> dia_ids``, so adding one is a few lines):
  * plain BM25: SQLite FTS5, its default tokenizer, over "speaker: text"; the query is any
    of the question's words; ordered by ``bm25()``. The baseline.
  * lexical baseline: the same, the question's function words dropped, a turn by a speaker
    it names counted twice, each of the 50 best hits lending half its score to the turns
    beside it in its session and a quarter to those two away.
  * writegate search_nodes: the turns written through the gate as ``Turn`` nodes (key
    ``id``, properties ``text``, ``speaker``, ``session``, ``position``), the speakers as
    ``Person`` nodes that ``SAID`` them; asked through ``GraphReader.search_nodes`` (the
    read model's text index), its ``Turn`` hits in order.
  * writegate search_observations: the turns kept as observations (each speaker a
    ``Person`` node, as an agent that knows who it talks with keeps them), asked through
    ``ObservationReader.search_observations``: the words alone.
  * writegate graph_query: the same memory through ``GraphReader.graph_query``, its default
    recipe (the words, the people the question names, each hit's session context), and
    with meaning beside the words: WordLlama's (the ``embeddings`` extra) or MiniLM's (the
    ``minilm`` extra); and each model's nearest alone.

usage: python bench/bench_recall.py [--data PATH] [--realtalk PATH] [--limit N]
                                    [--systems NAME,NAME] [--set NAME] [--memory NAME]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import realtalk_data  # noqa: E402
from bench.recall_data import (  # noqa: E402
    SOURCE,
    Conversation,
    DataMissing,
    Question,
    load,
    locate,
    one_memory,
)
from bench.recall_systems import DEPTH, KS, SYSTEMS, Build  # noqa: E402

# -- scoring ------------------------------------------------------------------------------


@dataclass
class Scores:
    recall: dict[int, float] = field(default_factory=lambda: dict.fromkeys(KS, 0.0))
    any10: float = 0.0
    reciprocal: float = 0.0
    asked: int = 0
    spent: list[float] = field(default_factory=list)

    def add(self, question: Question, answer: list[str], seconds: float) -> None:
        evidence = set(question.evidence)
        for k in KS:
            self.recall[k] += len(evidence.intersection(answer[:k])) / len(evidence)
        self.any10 += bool(evidence.intersection(answer[:10]))
        first = next((i for i, d in enumerate(answer[:DEPTH]) if d in evidence), None)
        self.reciprocal += 0.0 if first is None else 1 / (1 + first)
        self.asked += 1
        self.spent.append(seconds)

    def row(self) -> list[str]:
        n = max(self.asked, 1)
        return [
            *(f"{self.recall[k] / n:.3f}" for k in KS),
            f"{self.any10 / n:.3f}",
            f"{self.reciprocal / n:.3f}",
            f"{statistics.median(self.spent) * 1e3:.2f}" if self.spent else "-",
        ]


def evaluate(
    conversations: list[Conversation], systems: dict[str, Build], limit: int | None
) -> tuple[dict[str, Scores], dict[int, dict[str, Scores]]]:
    """Every system's scores, overall and by LoCoMo's question category."""
    overall = {name: Scores() for name in systems}
    by_category: dict[int, dict[str, Scores]] = {}
    left = limit
    with tempfile.TemporaryDirectory() as scratch:
        for conversation in conversations:
            questions = list(conversation.questions[:left])
            if left is not None:
                left -= len(questions)
            if not questions:
                continue
            for name, build in systems.items():
                with build(conversation, Path(scratch)) as search:
                    for question in questions:
                        started = time.perf_counter()
                        answer = search(question.text)
                        seconds = time.perf_counter() - started
                        overall[name].add(question, answer, seconds)
                        per = by_category.setdefault(question.category, {})
                        per.setdefault(name, Scores()).add(question, answer, seconds)
    return overall, by_category


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join(
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in lines
    )


def _each(conversations: list[Conversation]) -> list[Conversation]:
    return conversations


def _all(conversations: list[Conversation]) -> list[Conversation]:
    return [one_memory(conversations)]


MEMORIES: dict[str, Callable[[list[Conversation]], list[Conversation]]] = {
    "one memory per conversation": _each,
    "one memory for all conversations": _all,
}


def report(
    memory: str,
    conversations: int,
    overall: dict[str, Scores],
    by_category: dict[int, dict[str, Scores]],
) -> None:
    """The tables of one way of keeping the memory: overall, then R@10 by category."""
    asked = next(iter(overall.values())).asked
    print(f"\n== {memory} ({conversations}): {asked} questions")
    header = ["system", *(f"R@{k}" for k in KS), "any@10", "MRR", "p50 ms"]
    print(table(header, [[name, *s.row()] for name, s in overall.items()]))
    if "plain BM25" in overall and asked:
        base = overall["plain BM25"].recall[10] / asked
        for name, scores in overall.items():
            if name != "plain BM25":
                gain = (scores.recall[10] / asked - base) * 100
                print(f"R@10 over plain BM25, {name}: {gain:+.1f} points")
    print(
        "\nR@10 by LoCoMo category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, "
        "5 adversarial)"
    )
    categories = sorted(by_category)
    rows = [
        [name, *(by_category[c][name].row()[KS.index(10)] for c in categories)] for name in overall
    ]
    counts = [f"{c} ({by_category[c][next(iter(overall))].asked})" for c in categories]
    print(table(["system", *counts], rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="a copy of locomo10.json, kept in the cache")
    parser.add_argument("--limit", type=int, help="ask only the first N questions")
    parser.add_argument("--systems", help="comma-separated names (default: all)")
    parser.add_argument(
        "--realtalk", type=Path, help="REALTALK's data/ folder, its ten files kept in the cache"
    )
    parser.add_argument("--set", choices=["LoCoMo", "REALTALK", "both"], default="both")
    parser.add_argument(
        "--memory", choices=[*MEMORIES, "both"], default="both", help="how the memory is kept"
    )
    args = parser.parse_args()
    chosen = SYSTEMS
    if args.systems:
        names = [n.strip() for n in args.systems.split(",")]
        if unknown := [n for n in names if n not in SYSTEMS]:
            print(
                f"no such system: {', '.join(unknown)} (known: {', '.join(SYSTEMS)})",
                file=sys.stderr,
            )
            return 2
        chosen = {n: SYSTEMS[n] for n in names}
    sets = {"LoCoMo": args.data, "REALTALK": args.realtalk}
    started = time.perf_counter()
    for name, given in sets.items():
        if args.set not in (name, "both"):
            continue
        try:
            source, conversations = _read(name, given)
        except (DataMissing, ValueError) as missing:
            print(missing, file=sys.stderr)
            return 2
        skipped = sum(c.unanswerable for c in conversations)
        print(f"\n=== {name}: {source}")
        print(
            f"questions: {sum(len(c.questions) for c in conversations)} with evidence "
            f"({skipped} name no turn of their conversation and are not asked)"
        )
        for memory, kept in MEMORIES.items():
            if args.memory in (memory, "both"):
                scores = evaluate(kept(conversations), chosen, args.limit)
                report(memory, len(conversations), *scores)
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


def _read(name: str, given: Path | None) -> tuple[str, list[Conversation]]:
    if name == "LoCoMo":
        return SOURCE, load(locate(given))
    return realtalk_data.SOURCE, realtalk_data.load(realtalk_data.locate(given))


if __name__ == "__main__":
    sys.exit(main())
