"""The observations in ``graph_query``'s answer: the texts agents kept that a question finds.

Each ranking of observations (their words in the text index; their meaning, when an
embedder is configured) is read to ``context_hits`` hits. A found observation scores
1/(1 + its place among the words' hits); meaning adds to the ones the words found too, as
far as it agrees with the words about this question (``fusion.agreement``), and what
meaning alone found ranks after all of them (``weighed``): an embedder confirms and
reorders, or fills an answer the words leave short, and a weak one cannot push the words'
answer down (fused by reciprocal rank, WordLlama cost LoCoMo 2.6 points of recall@10).
The things the question names — nodes of the graph whose every name word it says (``named``)
— pull the found observations that mention them or that their writes cited: those rank again
among themselves and add that score (``connected``), so what is said of the people a
question names comes before what only repeats its other words, across sessions, and in a
memory of many conversations the conversations it names; a time the question names ("in
June", ``gate.reads.when``) pulls the ones said then the same way. A found observation then
lends part of its score to what was said just before and after it in the same session
(``CONTEXT_SHARES``: a quarter one place away, an eighth two): a question is often answered
by the turn next to the one that repeats its words ("what did she adopt?" — "a puppy!"
answers "I went to the shelter on Saturday"), but a turn found only beside the best hit
ranks as the fourth hit would, not the second, so the context of one session cannot crowd
out hits from others. Observations rank by the sum, ties to the one said first. The nodes
the best of them were cited by are a seed ranking of their own (``citing_seeds``). Every
step is a bounded probe of an index (the context of every hit in one statement), and every
step keeps to the scopes of the state it is given (``projections.state.scoped``): an
observation lends only to what the reader may see, and only nodes the reader may see are
named.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from writegate.eventlog.events import format_timestamp, parse_timestamp
from writegate.eventlog.sql import Sql
from writegate.gate.reads.answers import ObservationMatch
from writegate.gate.reads.fusion import agreement
from writegate.gate.reads.when import Period, named_times
from writegate.gate.reads.words import text_words
from writegate.projections.state import StateProjection
from writegate.projections.state.observations import ObservationRow

CONTEXT_SHARES = (0.25, 0.125)  # the part of a hit's score lent one and two places away
TEXT, MEANING = "observation_text", "observation_meaning"

# a text, how many, a document kind -> identities with their similarity, most similar first
Nearest = Callable[[str, int, str], Sequence[tuple[str, float]]]


@dataclass(frozen=True)
class Recall:
    """How observations are found: hits read per ranking, the context lent, the answer's size."""

    context_hits: int = 50
    shares: tuple[float, ...] = CONTEXT_SHARES
    top: int = 10  # observations answered


def observations(
    conn: Sql,
    state: StateProjection,
    query: str,
    recall: Recall,
    *,
    nearest: Nearest | None = None,
    as_of: datetime | None = None,
    nodes: Sequence[str] | None = None,
) -> list[ObservationMatch]:
    """The best ``recall.top`` observations for ``query`` (those recorded by ``as_of``);
    ``nodes``: the nodes its words found, when the caller searched them already."""
    if not state.keeps_observations(conn):
        return []
    rankings: dict[str, list[str]] = {}
    hits = state.text_index(conn).search(conn, query, "observation", recall.context_hits)
    if hits:
        rankings[TEXT] = [h.identity for h in hits]
    if nearest is not None and (near := nearest(query, recall.context_hits, "observation")):
        rankings[MEANING] = [identity for identity, _ in near]
    own = weighed(rankings.get(TEXT, []), rankings.get(MEANING, []), recall.top)
    rows = {r.id: r for r in state.observations(conn, list(own))}
    cutoff = format_timestamp(as_of) if as_of is not None else None
    kept = [
        row
        for identity in own
        if (row := rows.get(identity)) is not None and (cutoff is None or row.recorded_at <= cutoff)
    ]
    pulls = [said_when(kept, named_times(query, as_of or datetime.now(UTC)))]
    if cutoff is None:  # a past read keeps to what the words found then
        pulls.append(connected(conn, state, named(conn, state, query, nodes), kept))
    for pulled in pulls:
        for rank, identity in enumerate(pulled):
            own[identity] += 1 / (1 + rank)
    around = state.beside(conn, kept, len(recall.shares))
    score: dict[str, float] = {}
    lent: dict[str, tuple[str, int]] = {}  # what was found only beside a hit: next to which
    for row in kept:
        share = own[row.id]
        score[row.id] = score.get(row.id, 0.0) + share
        for places, other in around.get(row.id, []):
            if cutoff is not None and other.recorded_at > cutoff:
                continue
            rows.setdefault(other.id, other)
            score[other.id] = score.get(other.id, 0.0) + share * recall.shares[places - 1]
            lent.setdefault(other.id, (row.id, places))
    best = sorted(score, key=lambda i: (-score[i], rows[i].said_at, rows[i].seq))[: recall.top]
    terms = state.text_index(conn).matched(conn, query, "observation", best) if hits else {}
    return [_match(rows[i], score[i], rankings, lent, terms.get(i, [])) for i in best]


def weighed(words: Sequence[str], meaning: Sequence[str], top: int) -> dict[str, float]:
    """Each found observation's own score: 1/(1 + its place among the words' hits); meaning
    adds to one the words found too its own 1/(1 + place) times its agreement with the words
    about this question (``fusion.agreement`` of the first ``top``), and one meaning alone
    found ranks after every one the words found — an embedder confirms and reorders, or
    fills an answer the words leave short, and cannot push what they found out of it."""
    own = {identity: 1 / (1 + place) for place, identity in enumerate(words)}
    trust = agreement(words[:top], meaning[:top])
    after = 1 / (1 + len(words))  # below the words' last hit (all of it when they found none)
    for place, identity in enumerate(meaning):
        share = trust / (1 + place)
        own[identity] = own[identity] + share if identity in own else min(share, after)
    return own


def said_when(found: Sequence[ObservationRow], periods: Sequence[Period]) -> list[str]:
    """Of the ``found`` observations, in their order, those said inside a named period."""
    if not periods:
        return []
    moments = {r.id: parse_timestamp(r.said_at) for r in found}
    return [r.id for r in found if any(p.holds(moments[r.id]) for p in periods)]


def named(
    conn: Sql, state: StateProjection, query: str, found: Sequence[str] | None = None
) -> dict[str, set[str]]:
    """The nodes the question names, each with its name's words: of the nodes its words
    find (``found``, or the first ten), those whose every key word is one of its words."""
    asked = text_words(query)
    if not asked or not state.keeps_text(conn):
        return {}
    if found is None:
        found = [h.identity for h in state.text_index(conn).search(conn, query, "node", 10)]
    names: dict[str, set[str]] = {}
    for row in state.nodes(conn, found):
        words = {w for v in row.keys.values() if isinstance(v, str) for w in text_words(v)}
        if words and words <= asked:
            names[row.identity] = words
    return names


def connected(
    conn: Sql, state: StateProjection, names: dict[str, set[str]], found: Sequence[ObservationRow]
) -> list[str]:
    """Of the ``found`` observations, in their order, those that mention a named node (say its
    every name word) or that a write of one cited."""
    if not names or not found:
        return []
    ids = [row.id for row in found]
    cited = {observation for _, observation in state.cited_among(conn, list(names), ids)}
    said = {row.id: text_words(row.text) for row in found if row.id not in cited}
    return [
        row.id
        for row in found
        if row.id in cited or any(words <= said[row.id] for words in names.values())
    ]


def _match(
    row: ObservationRow,
    score: float,
    rankings: dict[str, list[str]],
    lent: dict[str, tuple[str, int]],
    terms: list[str],
) -> ObservationMatch:
    found_by = [name for name, ranking in rankings.items() if row.id in ranking]
    context_of, places = lent.get(row.id, (None, None)) if not found_by else (None, None)
    return ObservationMatch(
        observation_id=row.id,
        score=score,
        terms=terms,
        text=row.text,
        source=row.source,
        extraction_method=row.method,
        seq=row.seq,
        agent=row.agent,
        session=row.session,
        said_at=row.said_at,
        recorded_at=row.recorded_at,
        confidence=row.confidence,
        found_by=found_by,
        context_of=context_of,
        places=places,
    )


def citing_seeds(
    conn: Sql, state: StateProjection, found: Sequence[ObservationMatch], per: int
) -> list[str]:
    """The nodes that writes citing the found observations wrote, best observation first,
    at most ``per`` from each: seeds that a question about what was said leads to."""
    nodes: dict[str, None] = {}
    for match in found:
        for citation in state.citing(conn, match.observation_id, per):
            if citation.kind == "node" and citation.standing:
                nodes.setdefault(citation.identity)
    return list(nodes)
