"""Retrieval on public data: how often each way of asking finds the turns that answer a
question, beside a plain BM25 over the same texts, computed in the same run; nothing asserted.

The data is LoCoMo (``recall_data``: its source, licence and checksum): ten long
conversations, each turn one document, each question's relevant set the turns its evidence
names. Every system answers a question with the conversation's turns, best first, at most
25; a conversation's questions search only that conversation. Per system, averaged over the
questions: recall@k (the share of a question's evidence in its first k), any@10 (whether
any of it is there), MRR (of the first evidence turn, 0 past 25), and the time an answer
took. Questions whose evidence names no turn of the conversation are not asked.

Systems (``SYSTEMS``; one is a function from a conversation and a scratch folder to a
context that yields ``question -> dia_ids``, so adding one is a few lines):
  * plain BM25: SQLite FTS5, its default tokenizer, over "speaker: text"; the query is any
    of the question's words; ordered by ``bm25()``. The baseline.
  * writegate search_nodes: the turns written through the gate as ``Turn`` nodes (key
    ``id``, properties ``text``, ``speaker``, ``session``, ``position``), the speakers as
    ``Person`` nodes that ``SAID`` them; asked through ``GraphReader.search_nodes`` (the
    read model's text index), its ``Turn`` hits in order.
  * writegate search_nodes + session context: the same 50 hits, each scoring 1/(1+rank), and
    each passing half that to the turns one before and after it in its session, a quarter to
    those two away; turns ranked by the sum (ties: the earlier turn). Here, in the bench,
    until ``graph_query`` does it: what it needs is each observation's session and its
    order in it (``said_at``), to find the ones said around a hit.
  * still to wire once they exist: ``GraphReader.graph_query`` (seeds, k-hop expansion,
    matched observations; the turns it returns, in order), the turns recorded as
    observations (``Gate.record_observation``, ``said_at`` and the session), and each with
    an embedder; see the comments at ``SYSTEMS``.

usage: python bench/bench_recall.py [--data PATH] [--limit N] [--systems NAME,NAME]
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.recall_data import (  # noqa: E402
    SOURCE,
    Conversation,
    DataMissing,
    Question,
    load,
    locate,
)
from writegate.eventlog import Actor  # noqa: E402
from writegate.eventlog.bulk import bulk  # noqa: E402
from writegate.gate import Gate, GateRejection  # noqa: E402
from writegate.gate.observations import ObservationResult  # noqa: E402
from writegate.gate.reads.query import DEFAULT  # noqa: E402
from writegate.gate.reads.reader import GraphReader  # noqa: E402
from writegate.projections import runner  # noqa: E402
from writegate.projections.vectors.projector import VectorProjector  # noqa: E402
from writegate.projections.vectors.wordllama import WordLlamaEmbedder  # noqa: E402

KS = (1, 5, 10, 25)
DEPTH = 25  # the answers a system gives, and MRR's horizon
POOL = 50  # the hits context expansion starts from
START = datetime(2023, 1, 1, tzinfo=UTC)  # said_at: session n on day n, turn p at second p
ANSWERING = replace(DEFAULT, observations=DEPTH)  # graph_query's recipe: DEPTH observations
Searcher = Callable[[str], list[str]]  # a question -> dia_ids, best first
Build = Callable[[Conversation, Path], AbstractContextManager[Searcher]]

SCHEMA: dict[str, Any] = {
    "name": "locomo-recall",
    "nodes": {
        "Turn": {
            "merge_keys": ["id"],
            "required": ["id", "text"],
            "properties": {
                "id": {"type": "string"},
                "text": {"type": "string"},
                "speaker": {"type": "string"},
                "session": {"type": "integer"},
                "position": {"type": "integer"},
            },
        },
        "Person": {"merge_keys": ["name"], "required": ["name"]},
    },
    "relationships": {"SAID": {"from": ["Person"], "to": ["Turn"]}},
}
_WORD = re.compile(r"[^\W_]+")


# -- the systems ------------------------------------------------------------------------


@contextmanager
def plain_bm25(conversation: Conversation, folder: Path) -> Iterator[Searcher]:
    """The baseline: about the twenty lines anyone would write."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE turns USING fts5 (dia_id UNINDEXED, text)")
    db.executemany(
        "INSERT INTO turns VALUES (?, ?)",
        [(t.dia_id, f"{t.speaker}: {t.text}") for t in conversation.turns],
    )

    def search(question: str) -> list[str]:
        words = dict.fromkeys(w.lower() for w in _WORD.findall(question))
        match = " OR ".join(f'"{w}"' for w in words)
        query = "SELECT dia_id FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?"
        return [row[0] for row in db.execute(query, (match, DEPTH))] if match else []

    yield search
    db.close()


@contextmanager
def written(conversation: Conversation, folder: Path) -> Iterator[GraphReader]:
    """A reader of the conversation's log, written through the gate the first time."""
    path = folder / f"{conversation.sample_id}.db"
    fresh = not path.exists()
    with bulk(), Gate.open(path, default_actor=Actor(agent="bench-recall")) as gate:
        if fresh:
            gate.publish_schema(SCHEMA)
            for start in range(0, len(items := _items(conversation)), 500):
                result = gate.write_batch(items=items[start : start + 500])
                assert result.status == "written", result
        yield GraphReader(gate.log, gate.state)


def _items(conversation: Conversation) -> list[dict[str, Any]]:
    common = {"source": f"locomo:{conversation.sample_id}", "extraction_method": "parsed"}
    people = [
        {"op": "write_node", "label": "Person", "merge_keys": {"name": name}, **common}
        for name in dict.fromkeys(t.speaker for t in conversation.turns)
    ]
    turns = [
        {
            "op": "write_node",
            "label": "Turn",
            "merge_keys": {"id": t.dia_id},
            "properties": {
                "text": t.text,
                "speaker": t.speaker,
                "session": t.session,
                "position": t.position,
            },
            **common,
        }
        for t in conversation.turns
    ]
    said = [
        {
            "op": "write_relationship",
            "type": "SAID",
            "from_label": "Person",
            "from_keys": {"name": t.speaker},
            "to_label": "Turn",
            "to_keys": {"id": t.dia_id},
            **common,
        }
        for t in conversation.turns
    ]
    return [*people, *turns, *said]


def turn_hits(reader: GraphReader, question: str, limit: int) -> list[tuple[str, int, int]]:
    """search_nodes' ``Turn`` hits as (dia_id, session, position), best first: its page lists
    the hits (each saying how many relationships it leaves out), then their neighbours."""
    try:
        page = reader.search_nodes(question, limit)
    except GateRejection:  # a question without words
        return []
    return [
        (n.merge_keys["id"], n.properties["session"], n.properties["position"])
        for n in page.nodes
        if n.more_relationships is not None and n.label == "Turn"
    ]


@contextmanager
def search_nodes(conversation: Conversation, folder: Path) -> Iterator[Searcher]:
    with written(conversation, folder) as reader:
        yield lambda question: [h[0] for h in turn_hits(reader, question, DEPTH)]


@contextmanager
def search_nodes_in_context(conversation: Conversation, folder: Path) -> Iterator[Searcher]:
    at = {(t.session, t.position): t.dia_id for t in conversation.turns}
    order = {t.dia_id: i for i, t in enumerate(conversation.turns)}

    def search(question: str) -> list[str]:
        score: dict[str, float] = {}
        for rank, (dia_id, session, position) in enumerate(turn_hits(reader, question, POOL)):
            weight = 1 / (1 + rank)
            score[dia_id] = score.get(dia_id, 0.0) + weight
            for away, share in ((1, 0.5), (2, 0.25)):
                for near in (position - away, position + away):
                    if (other := at.get((session, near))) is not None:
                        score[other] = score.get(other, 0.0) + weight * share
        return sorted(score, key=lambda d: (-score[d], order[d]))[:DEPTH]

    with written(conversation, folder) as reader:
        yield search


@contextmanager
def observed(conversation: Conversation, folder: Path) -> Iterator[tuple[Gate, dict[str, str]]]:
    """A gate whose log holds each turn as an observation ("speaker: text", its session,
    said a second after the one before), recorded the first time; and observation id ->
    dia_id."""
    path = folder / f"{conversation.sample_id}-observed.db"
    fresh = not path.exists()
    dia: dict[str, str] = {}
    with bulk(), Gate.open(path, default_actor=Actor(agent="bench-recall")) as gate:
        if fresh:
            gate.publish_schema(SCHEMA)
        for t in conversation.turns:
            kept = gate.record_observation(
                text=f"{t.speaker}: {t.text}",
                source=f"locomo:{conversation.sample_id}",
                extraction_method="parsed",
                session=f"{conversation.sample_id}:{t.session}",
                said_at=START + timedelta(days=t.session, seconds=t.position),
            )
            assert isinstance(kept, ObservationResult), kept
            dia[kept.observation_id] = t.dia_id
        yield gate, dia


@contextmanager
def search_observations(conversation: Conversation, folder: Path) -> Iterator[Searcher]:
    """Lexical only: the observations' text index, ranked by BM25 (stems, stop words)."""
    with observed(conversation, folder) as (gate, dia):
        reader = gate.observation_reader()

        def search(question: str) -> list[str]:
            try:
                page = reader.search_observations(question, limit=DEPTH)
            except GateRejection:  # a question without words
                return []
            return [dia[o.observation_id] for o in page.observations]

        yield search


@contextmanager
def graph_query(conversation: Conversation, folder: Path) -> Iterator[Searcher]:
    """The default ``graph_query`` (no model): observations by their words, each lending to
    what was said around it in its session."""
    with observed(conversation, folder) as (gate, dia):
        yield _answers(gate.reader(ANSWERING), dia)


@contextmanager
def _embedded(gate: Gate, folder: Path, name: str) -> Iterator[VectorProjector]:
    vectors = VectorProjector(gate.log, WordLlamaEmbedder(), path=folder / f"{name}-vectors.db")
    runner.replay(gate.log, vectors, batch=2000)
    try:
        yield vectors
    finally:
        vectors.close()


def _answers(reader: GraphReader, dia: dict[str, str]) -> Searcher:
    def search(question: str) -> list[str]:
        if not _WORD.search(question):
            return []
        return [dia[o.observation_id] for o in reader.graph_query(question).observations]

    return search


@contextmanager
def semantic_only(conversation: Conversation, folder: Path) -> Iterator[Searcher]:
    """Meaning only: WordLlama's nearest observations (the ``embeddings`` extra)."""
    with (
        observed(conversation, folder) as (gate, dia),
        _embedded(gate, folder, conversation.sample_id) as vectors,
    ):
        yield lambda q: [dia[s.identity] for s in vectors.nearest(q, DEPTH, "observation")]


@contextmanager
def graph_query_embedded(conversation: Conversation, folder: Path) -> Iterator[Searcher]:
    """``graph_query`` with WordLlama: words and meaning fused by reciprocal rank, then the
    context lent."""
    with (
        observed(conversation, folder) as (gate, dia),
        _embedded(gate, folder, conversation.sample_id) as vectors,
    ):

        def nearest(text: str, k: int, kind: str) -> list[tuple[str, float]]:
            return [(s.identity, s.similarity) for s in vectors.nearest(text, k, kind)]

        yield _answers(gate.reader(ANSWERING, nearest), dia)


SYSTEMS: dict[str, Build] = {
    "plain BM25": plain_bm25,
    "writegate search_nodes (turns as nodes)": search_nodes,
    "writegate search_observations (lexical only)": search_observations,
    "writegate graph_query (default: words + session context)": graph_query,
    "WordLlama nearest (semantic only)": semantic_only,
    "writegate graph_query + WordLlama (fused)": graph_query_embedded,
}


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="a copy of locomo10.json, kept in the cache")
    parser.add_argument("--limit", type=int, help="ask only the first N questions")
    parser.add_argument("--systems", help="comma-separated names (default: all)")
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
    try:
        conversations = load(locate(args.data))
    except (DataMissing, ValueError) as missing:
        print(missing, file=sys.stderr)
        return 2
    started = time.perf_counter()
    overall, by_category = evaluate(conversations, chosen, args.limit)
    asked = next(iter(overall.values())).asked
    skipped = sum(c.unanswerable for c in conversations)
    print(f"data: {SOURCE}")
    print(
        f"questions asked: {asked} (of {sum(len(c.questions) for c in conversations)} with "
        f"evidence; {skipped} name no turn of their conversation and are not asked)"
    )
    header = ["system", *(f"R@{k}" for k in KS), "any@10", "MRR", "p50 ms"]
    print(table(header, [[name, *s.row()] for name, s in overall.items()]))
    if "plain BM25" in overall and asked:
        base = overall["plain BM25"].recall[10] / asked
        for name, scores in overall.items():
            if name != "plain BM25":
                print(
                    f"R@10 over plain BM25, {name}: {(scores.recall[10] / asked - base) * 100:+.1f} points"
                )
    print(
        "\nR@10 by LoCoMo category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial)"
    )
    categories = sorted(by_category)
    rows = [
        [name, *(by_category[c][name].row()[KS.index(10)] for c in categories)] for name in overall
    ]
    counts = [f"{c} ({by_category[c][next(iter(overall))].asked})" for c in categories]
    print(table(["system", *counts], rows))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
