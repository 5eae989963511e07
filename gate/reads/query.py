"""``graph_query``: a question in words answered with ranked facts and where they came from.

The pipeline, each step bounded so a query is index probes, never a scan:

1. **seeds**: each seed source ranks nodes for the query's words: ``node_text`` probes the
   read model's text index for nodes, ``relationship_text`` for relationships (a question
   naming a relationship, ``works``, finds its ends). Later sources (observations and the
   nodes citing them, an embedder's nearest nodes) are more rankings of the same kind.
   Each source reads at most ``top_k`` hits.
2. **fusion**: the rankings are fused by reciprocal rank (``gate.reads.fusion``, ``rrf_k``);
   the best ``top_k`` nodes existing at the time asked are the seeds.
3. **expansion**: ``depth`` hops around the seeds, at most ``neighbours`` relationships
   read per node and ``expand`` nodes per hop, optionally of one relationship type, ranked
   by a personalised PageRank or a decaying BFS (``gate.reads.expansion``).
4. **triplets**: the best ``max_triplets`` relationships, each with the provenance of the
   write that last set it (its event, so ``audit`` leads to it) and why it ranked.

A query answers now by default; ``as_of`` / ``valid_at`` read the graph as it stood
(``gate.reads.query_graphs.Past``). Seeds are found by the words the read model holds now,
then read as they stood: a node whose every matching word was written after ``as_of`` is
not a seed then, and one whose words have changed since is found only by its words now.
Superseded values, deleted facts and held (proposed) writes are not in the read model, so
they never answer a query about now.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum

from writegate.eventlog import Event, Log
from writegate.eventlog.events import format_timestamp, trusted
from writegate.eventlog.sql import Sql
from writegate.gate.errors import ErrorCode, GateRejection
from writegate.gate.reads import recall
from writegate.gate.reads.answers import (
    AnsweredAt,
    ObservationMatch,
    QueryResult,
    Seed,
    Triplet,
    TripletProvenance,
    Why,
)
from writegate.gate.reads.expansion import Expansion, Ranked, expand, gather, ranked_links
from writegate.gate.reads.fusion import rrf
from writegate.gate.reads.past_scopes import PastScopes
from writegate.gate.reads.query_graphs import Past, Present, QueryGraph
from writegate.gate.reads.recall import Nearest
from writegate.gate.reads.views import Decay, ref_of
from writegate.gate.reads.words import matched, node_words, text_words
from writegate.language import RelationshipWritten, WriteProvenance, payload_of, provenance_of
from writegate.language.payloads import writer_of
from writegate.projections.state import (
    DEFAULT_FLOOR,
    StateProjection,
    Support,
    feedback_weights,
    rank_factor,
    search_words,
    sources,
)

MAX_TOP_K = 50
MAX_QUERY_DEPTH = 3
MAX_OBSERVATIONS = 50  # observations one answer holds at most: the hits each ranking reads
MAX_TRIPLETS = 100


class SeedSource(StrEnum):
    NODE_TEXT = "node_text"  # the text index's node documents
    RELATIONSHIP_TEXT = "relationship_text"  # its relationship documents: their two ends
    OBSERVATION_CITING = "observation_citing"  # the nodes written citing found observations
    NODE_MEANING = "node_meaning"  # an embedder's nearest nodes (when one is configured)


@dataclass(frozen=True)
class QueryConfig:
    """How a query is answered; ``RECIPES`` names the useful ones."""

    name: str = "ppr"
    sources: tuple[SeedSource, ...] = (
        SeedSource.NODE_TEXT,
        SeedSource.RELATIONSHIP_TEXT,
        SeedSource.OBSERVATION_CITING,
        SeedSource.NODE_MEANING,
    )
    rrf_k: int = 60  # reciprocal rank fusion's constant
    top_k: int = 10  # seeds, and hits read from each source
    depth: int = 2  # hops around the seeds
    expansion: Expansion = Expansion.PPR
    decay: float = 0.5  # BFS: a score's factor per hop; PageRank: the damping
    neighbours: int = 16  # relationships read per node
    expand: int = 32  # nodes whose relationships are read, per hop
    max_triplets: int = 20
    feedback_floor: float = DEFAULT_FLOOR  # feedback reorders; it never buries a fact
    observations: int = 10  # observations answered (``gate.reads.recall``)
    context_hits: int = 50  # observation hits read per ranking, each lending to its context

    def __post_init__(self) -> None:
        for name, value, ceiling in (
            ("top_k", self.top_k, MAX_TOP_K),
            ("depth", self.depth, MAX_QUERY_DEPTH),
            ("max_triplets", self.max_triplets, MAX_TRIPLETS),
            ("neighbours", self.neighbours, 1000),
            ("expand", self.expand, 1000),
            ("observations", self.observations, MAX_OBSERVATIONS),
        ):
            if not 1 <= value <= ceiling:
                raise GateRejection(
                    ErrorCode.INVALID_ARGUMENT,
                    f"{name} must be between 1 and {ceiling}",
                    {"field": name},
                )
        if self.rrf_k < 1 or not 0 < self.decay < 1 or not self.sources:
            raise ValueError("rrf_k >= 1, 0 < decay < 1 and at least one seed source")

    def asked(
        self, top_k: int | None, depth: int | None, observations: int | None = None
    ) -> QueryConfig:
        """This recipe with a caller's ``top_k`` / ``depth`` / ``observations`` (checked
        against the bounds)."""
        return replace(
            self,
            top_k=self.top_k if top_k is None else top_k,
            depth=self.depth if depth is None else depth,
            observations=self.observations if observations is None else observations,
        )


RECIPES: dict[str, QueryConfig] = {
    "ppr": QueryConfig(),
    "bfs": QueryConfig(name="bfs", expansion=Expansion.BFS),
    "nodes_only_ppr": QueryConfig(name="nodes_only_ppr", sources=(SeedSource.NODE_TEXT,)),
}
DEFAULT = RECIPES["ppr"]  # ranks better than the BFS on bench_query's generated questions


@dataclass(frozen=True)
class Asked:
    """One question: its words, an optional relationship type, and the time asked about."""

    query: str
    relationship_type: str | None = None
    as_of: datetime | None = None
    valid_at: datetime | None = None
    config: QueryConfig = field(default_factory=lambda: DEFAULT)
    nearest: Nearest | None = None  # the embedder's search, when one is configured
    past_scopes: PastScopes | None = None  # a caller's grant, in a past read
    seeds_in: StateProjection | None = None  # where nodes are found, if not in the caller's


def answer(log: Log, state: StateProjection, decay: Decay | None, asked: Asked) -> QueryResult:
    """The ranked triplets for ``asked``, read in one snapshot of the log."""
    if not asked.query.strip():
        raise GateRejection(
            ErrorCode.INVALID_ARGUMENT, "query must not be empty", {"field": "query"}
        )
    config = asked.config
    floor = config.feedback_floor
    with log.snapshot() as conn:
        head_seq, head_hash = log.head()  # the snapshot's head: what the answer is true of
        graph: QueryGraph
        if asked.as_of is None and asked.valid_at is None:
            graph = Present(log, conn, state)
        else:
            graph = Past(log, asked.as_of or datetime.now(UTC), asked.valid_at, asked.past_scopes)
        wanted = search_words(asked.query)  # the words searched: no stop word beside others
        seeds_in = asked.seeds_in or state
        nodes = _node_hits(conn, seeds_in, asked)  # seeds, and the things the question names
        found_said = recall.observations(
            conn,
            state,
            asked.query,
            recall.Recall(config.context_hits, top=config.observations),
            nearest=asked.nearest,
            as_of=asked.as_of,
            nodes=nodes if seeds_in is state else None,
        )
        rankings = _rankings(conn, seeds_in, asked, found_said, nodes)
        fused = rrf(list(rankings.values()), config.rrf_k)
        existing = set(graph.existing(i for i, _ in fused))
        found = _reweighed(conn, [(i, s) for i, s in fused if i in existing], config)
        seeds = dict(found[: config.top_k])
        weights = {identity: 1 / rank for rank, identity in enumerate(seeds, start=1)}
        hood = gather(
            list(seeds),
            lambda ids: graph.links(ids, asked.relationship_type, config.neighbours),
            config.depth,
            config.expand,
        )
        scores = expand(config.expansion, hood, weights, decay=config.decay, depth=config.depth)
        ranked = ranked_links(hood, scores)
        weight = feedback_weights(conn, [r.link.identity for r in ranked])
        ranked.sort(key=lambda r: -r.score * rank_factor(weight[r.link.identity], floor))
        kept = ranked[: config.max_triplets]
        said = graph.words(
            [*seeds, *(e for r in kept for e in (r.link.from_identity, r.link.to_identity))]
        )
        meets = {identity: matched(wanted, node_words(w)) for identity, w in said.items()}
        if isinstance(graph, Present) and state.keeps_text(conn):  # the index's own word
            meets = state.text_index(conn).matched(conn, asked.query, "node", list(said))
        events = graph.last_written(r.link for r in kept)
        heard = state.corroborations(conn, [r.link.identity for r in kept])
        triplets = [
            _heard(
                _triplet(r, events[r.link.identity], meets, wanted, decay, weight, floor),
                heard.get(r.link.identity, []) if isinstance(graph, Present) else [],
            )
            for r in kept
        ]
    return QueryResult(
        triplets=triplets,
        seeds=[
            Seed(
                entity=identity,
                node=ref_of(identity),
                score=score,
                terms=meets.get(identity, []),
                found_by=[s.value for s, ranking in rankings.items() if identity in ranking],
            )
            for identity, score in seeds.items()
        ],
        observations=found_said,
        expansion=config.expansion.value,
        truncated=len(found) > config.top_k or hood.truncated or len(ranked) > len(kept),
        answered_at=AnsweredAt(seq=head_seq, head_hash=head_hash),
    )


def _reweighed(
    conn: Sql, found: list[tuple[str, float]], config: QueryConfig
) -> list[tuple[str, float]]:
    """The fused seeds, each score times its node's feedback factor, best first."""
    weight = feedback_weights(conn, [i for i, _ in found])
    scored = [(i, s * rank_factor(weight[i], config.feedback_floor)) for i, s in found]
    return sorted(scored, key=lambda pair: -pair[1])


def _node_hits(conn: Sql, state: StateProjection, asked: Asked) -> list[str]:
    """The nodes the query's words find in the text index, best first (none without one)."""
    if not state.keeps_text(conn):
        return []
    hits = state.text_index(conn).search(conn, asked.query, "node", asked.config.top_k)
    return [h.identity for h in hits]


def _rankings(
    conn: Sql,
    state: StateProjection,
    asked: Asked,
    said: list[ObservationMatch],
    nodes: list[str],
) -> dict[SeedSource, list[str]]:
    """Each seed source's ranking of nodes for the query, at most ``top_k`` hits read each
    (a read-only copy of a log from before the text index: its nodes by substring)."""
    query, config = asked.query, asked.config
    if not state.keeps_text(conn):
        return {SeedSource.NODE_TEXT: state.search(conn, query, "", config.top_k)}
    index = state.text_index(conn)
    rankings: dict[SeedSource, list[str]] = {}
    for source in config.sources:
        if source is SeedSource.NODE_TEXT:
            rankings[source] = nodes
        elif source is SeedSource.RELATIONSHIP_TEXT:
            hits = index.search(conn, query, "relationship", config.top_k)
            ends: list[str] = []
            for hit in hits:
                if (row := state.relationship(conn, hit.identity)) is not None:
                    ends += (row.from_identity, row.to_identity)
            rankings[source] = list(dict.fromkeys(ends))
        elif source is SeedSource.OBSERVATION_CITING:
            rankings[source] = recall.citing_seeds(conn, state, said, config.neighbours)
        elif source is SeedSource.NODE_MEANING and asked.nearest is not None:
            near = asked.nearest(query, config.top_k, "node")
            rankings[source] = [identity for identity, _ in near]
    return {source: ranking for source, ranking in rankings.items() if ranking}


# -- why: the query's words each result meets ------------------------------------------

# -- triplets ---------------------------------------------------------------------------


def observation_ids(provenance: WriteProvenance | None) -> list[str]:
    """The observations a write cites: ``WriteProvenance.observations`` where the log keeps
    them; none in a log from before they were kept."""
    cited = getattr(provenance, "observations", None)
    return [str(o) for o in cited] if isinstance(cited, list) else []


def _heard(triplet: Triplet, heard: list[Support]) -> Triplet:
    """The triplet with its relationship's corroborations now (none: as it was)."""
    if not heard:
        return triplet
    said = triplet.provenance
    corroborated = said.model_copy(
        update={
            "corroborated_confidence": heard[-1].corroborated,
            "sources": list(dict.fromkeys([said.source, *sources(heard)])),
        }
    )
    return triplet.model_copy(update={"provenance": corroborated})


def _triplet(
    ranked: Ranked,
    event: Event,
    meets: Mapping[str, list[str]],
    wanted: list[str],
    decay: Decay | None,
    weight: Mapping[str, float],
    floor: float,
) -> Triplet:
    link = ranked.link
    provenance = provenance_of(event)
    written = payload_of(event)
    stated = written if isinstance(written, RelationshipWritten) else None
    recorded = format_timestamp(event.occurred_at)
    met = {*meets.get(link.from_identity, []), *meets.get(link.to_identity, [])}
    met |= set(matched(wanted, text_words(link.type)))
    # built as ``views`` builds its views, without validating again what the read model
    # and the log hold (``trusted``: a query builds sixty of these models)
    return trusted(
        Triplet,
        {
            "source_entity": link.from_identity,
            "relationship": link.type,
            "target_entity": link.to_identity,
            "relevance_score": ranked.score * rank_factor(weight[link.identity], floor),
            "source": ref_of(link.from_identity),
            "target": ref_of(link.to_identity),
            "provenance": trusted(
                TripletProvenance,
                {
                    "event_id": event.event_id,
                    "seq": event.seq,
                    "observation_ids": observation_ids(provenance),
                    "agent": writer_of(event, written),
                    "session": event.actor.session,
                    "source": provenance.source if provenance else "",
                    "method": provenance.extraction_method if provenance else "",
                    "confidence": provenance.confidence if provenance else 0.0,
                    "decayed_confidence": (
                        decay.of(provenance.confidence, provenance.extraction_method, recorded)
                        if decay and provenance
                        else None
                    ),
                    "recorded_at": recorded,
                    "valid_from": link.valid_from or (stated.valid_from if stated else None),
                    "valid_to": link.valid_to or (stated.valid_to if stated else None),
                    "corroborated_confidence": None,
                    "sources": None,
                    "authority": provenance.authority if provenance else None,
                },
            ),
            "why": trusted(
                Why,
                {
                    "terms": [w for w in wanted if w in met],
                    "seed": ranked.seed,
                    "hops": ranked.hops,
                    "similarity": None,
                    "feedback_weight": weight[link.identity],
                },
            ),
        },
    )
