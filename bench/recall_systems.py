"""The systems ``bench_recall.py`` asks: each a function from a conversation and a scratch
folder to a context that yields ``question -> dia_ids``, best first (``SYSTEMS``), so adding
one is a few lines. The turns go in as LoCoMo lays them out: "speaker: text", each session
on a day of its own, a second between turns."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.recall_data import Conversation, Turn
from writegate.eventlog import Actor
from writegate.eventlog.bulk import bulk
from writegate.gate import Gate, GateRejection
from writegate.gate.observations import ObservationResult
from writegate.gate.reads.query import DEFAULT
from writegate.gate.reads.reader import GraphReader
from writegate.projections import runner
from writegate.projections.search.contract import STOP_WORDS
from writegate.projections.vectors.contract import Embedder
from writegate.projections.vectors.minilm import MiniLMEmbedder
from writegate.projections.vectors.projector import VectorProjector
from writegate.projections.vectors.wordllama import WordLlamaEmbedder

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
def lexical_baseline(conversation: Conversation, folder: Path) -> Iterator[Searcher]:
    """What a careful hand adds to plain BM25 in a few more lines: the question's English
    function words dropped, a turn by a speaker the question names counted twice, and each
    of the 50 best hits lending half its score to the turns beside it in its session and a
    quarter to those two away (the same shares ``graph_query`` lends)."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE turns USING fts5 (n UNINDEXED, text)")
    turns = conversation.turns
    db.executemany(
        "INSERT INTO turns VALUES (?, ?)",
        [(n, f"{t.speaker}: {t.text}") for n, t in enumerate(turns)],
    )
    speakers = {t.speaker.lower() for t in turns}
    at = places(conversation)

    def search(question: str) -> list[str]:
        words = dict.fromkeys(w.lower() for w in _WORD.findall(question))
        kept = [w for w in words if w not in STOP_WORDS] or list(words)
        if not kept:
            return []
        named = speakers.intersection(words)
        query = "SELECT n FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?"
        match = " OR ".join(f'"{w}"' for w in kept)
        hits = [turns[n] for (n,) in db.execute(query, (match, POOL))]
        weights = [2.0 if t.speaker.lower() in named else 1.0 for t in hits]
        return in_context(turns, at, hits, weights)

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
    by_id = {t.dia_id: t for t in conversation.turns}
    at = places(conversation)

    def search(question: str) -> list[str]:
        hits = [by_id[dia_id] for dia_id, _, _ in turn_hits(reader, question, POOL)]
        return in_context(conversation.turns, at, hits, [1.0] * len(hits))

    with written(conversation, folder) as reader:
        yield search


Places = dict[tuple[int, int], int]  # (session, position) -> the turn's index


def places(conversation: Conversation) -> Places:
    return {(t.session, t.position): n for n, t in enumerate(conversation.turns)}


def in_context(
    turns: tuple[Turn, ...], at: Places, hits: list[Turn], weights: list[float]
) -> list[str]:
    """The turns, best first: each hit scoring its weight / (1 + rank) and lending half of
    that to the turns one place from it in its session, a quarter to those two away
    (``graph_query``'s shares); ties to the turn said first."""
    score: dict[int, float] = {}
    for rank, (hit, weight) in enumerate(zip(hits, weights, strict=True)):
        share = weight / (1 + rank)
        n = at[(hit.session, hit.position)]
        score[n] = score.get(n, 0.0) + share
        for away, part in ((1, 0.5), (2, 0.25)):
            for near in (hit.position - away, hit.position + away):
                if (other := at.get((hit.session, near))) is not None:
                    score[other] = score.get(other, 0.0) + share * part
    return [turns[n].dia_id for n in sorted(score, key=lambda n: (-score[n], n))[:DEPTH]]


@contextmanager
def observed(conversation: Conversation, folder: Path) -> Iterator[tuple[Gate, dict[str, str]]]:
    """A gate whose log holds each turn as an observation ("speaker: text", its session,
    said a second after the one before) and each speaker as a ``Person`` node — an agent
    keeping a conversation knows who it talks with — recorded the first time; and
    observation id -> dia_id."""
    path = folder / f"{conversation.sample_id}-observed.db"
    fresh = not path.exists()
    dia: dict[str, str] = {}
    with bulk(), Gate.open(path, default_actor=Actor(agent="bench-recall")) as gate:
        if fresh:
            gate.publish_schema(SCHEMA)
            people = [i for i in _items(conversation) if i.get("label") == "Person"]
            assert gate.write_batch(items=people).status == "written"
        for t in conversation.turns:
            kept = gate.record_observation(
                text=f"{t.speaker}: {t.text}",
                source=f"locomo:{conversation.sample_id}",
                extraction_method="parsed",
                session=f"{conversation.sample_id}:{t.session}",
                said_at=t.said_at or START + timedelta(days=t.session, seconds=t.position),
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


EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "WordLlama": WordLlamaEmbedder,  # the ``embeddings`` extra
    "MiniLM": MiniLMEmbedder,  # the ``minilm`` extra
}


@contextmanager
def _embedded(gate: Gate, folder: Path, name: str, model: str) -> Iterator[VectorProjector]:
    path = folder / f"{name}-{model.lower()}-vectors.db"
    vectors = VectorProjector(gate.log, EMBEDDERS[model](), path=path)
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


def semantic_only(model: str) -> Build:
    """Meaning only: the model's nearest observations."""

    @contextmanager
    def build(conversation: Conversation, folder: Path) -> Iterator[Searcher]:
        with (
            observed(conversation, folder) as (gate, dia),
            _embedded(gate, folder, conversation.sample_id, model) as vectors,
        ):
            yield lambda q: [dia[s.identity] for s in vectors.nearest(q, DEPTH, "observation")]

    return build


def graph_query_embedded(model: str) -> Build:
    """``graph_query`` with the model's meaning beside the words (``gate.reads.recall``:
    weighed by its agreement with them), then the context lent."""

    @contextmanager
    def build(conversation: Conversation, folder: Path) -> Iterator[Searcher]:
        with (
            observed(conversation, folder) as (gate, dia),
            _embedded(gate, folder, conversation.sample_id, model) as vectors,
        ):

            def nearest(text: str, k: int, kind: str) -> list[tuple[str, float]]:
                return [(s.identity, s.similarity) for s in vectors.nearest(text, k, kind)]

            yield _answers(gate.reader(ANSWERING, nearest), dia)

    return build


SYSTEMS: dict[str, Build] = {
    "plain BM25": plain_bm25,
    "lexical baseline (stop words + speaker + neighbours)": lexical_baseline,
    "writegate search_nodes (turns as nodes)": search_nodes,
    "writegate search_observations (lexical only)": search_observations,
    "writegate graph_query (default: words + session context)": graph_query,
    "WordLlama nearest (semantic only)": semantic_only("WordLlama"),
    "writegate graph_query + WordLlama (fused)": graph_query_embedded("WordLlama"),
    "MiniLM nearest (semantic only)": semantic_only("MiniLM"),
    "writegate graph_query + MiniLM (fused)": graph_query_embedded("MiniLM"),
}
