"""A write's authority: the lowest the schema's ranks give anything along its lineage.

The schema's ``authority`` section (``gate.schema.authority``) ranks extraction methods,
sources and agents. A write's authority is computed by the gate, never taken from the
writer: the rank of its own method and source, lowered to its agent's (the authenticated
actor's, where the section ranks it) and by the authority of every observation it cites.
An observation's authority is computed the same way when it is recorded — its own method,
source and agent, lowered by the observations it was extracted from
(``record_observation``'s ``observations``, given through ``writegate observe
--observation`` or the Python API) — and kept in its event's provenance, so a fact
citing a note taken by hand from an ``llm`` summary is ``llm``, however many observations
lie between. Each step reads only the observations the write cites, in its transaction:
their recorded authority already folds in what lies behind them. An observation recorded
before the schema ranked anything is ranked by its own method, source and agent under the
ranks of now.

The result is kept in the event's provenance (``WriteProvenance.authority``: its rank, what
set it, and the cited observation it came through), so neither a replay nor a read
recomputes it, and a schema that ranks otherwise later rewrites no history. Under a
conflict policy a write of lower authority never supersedes a value of higher authority
(``gate.conflicts``): it is refused with ``AUTHORITY_CONFLICT``, or held for a reviewer
where the schema's ``authority.hold`` names the label or type. A write saying a held value
again at a lower authority leaves that value's writer as it was (``restated``): a lower
write cannot first restate a value, then replace it. Agents are ranked by id, not by the
roles of the server's policy (those are known to the transport, not to the log).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from writegate.eventlog import Transaction
from writegate.eventlog.reading import cores_at
from writegate.eventlog.sql import Sql
from writegate.gate.schema.authority import AuthorityDoc, declared, of_agent
from writegate.language import Authority, WriteProvenance, provenance_of
from writegate.language.observations import document_of
from writegate.projections.state import EdgeRow, NodeRow, StateProjection


def of_lineage(
    state: StateProjection, tx: Transaction, provenance: WriteProvenance, ranks: AuthorityDoc | None
) -> WriteProvenance:
    """``provenance`` with its authority lowered to its agent's (the transaction's actor) and
    the lowest of the observations it cites (itself when the schema ranks nothing)."""
    conn, low = tx.conn, of_agent(ranks, tx.actor.agent, provenance.authority)
    if low is None or not provenance.observations:
        return provenance if low == provenance.authority else _with(provenance, low)
    rows = state.observations(conn, provenance.observations)
    recorded = cores_at(conn, [row.seq for row in rows])
    for row in rows:
        event = recorded.get(row.seq)
        kept = provenance_of(event) if event is not None else None
        theirs = kept.authority if kept is not None and kept.authority is not None else None
        theirs = theirs or of_agent(ranks, row.agent, declared(ranks, row.method, row.source))
        if theirs is not None and theirs.rank < low.rank:
            low = Authority(rank=theirs.rank, by=theirs.by, via=document_of(row.id))
    return _with(provenance, low)


def _with(provenance: WriteProvenance, authority: Authority | None) -> WriteProvenance:
    return provenance.model_copy(update={"authority": authority})


def restated(
    state: StateProjection,
    conn: Sql,
    held: NodeRow | EdgeRow | None,
    changes: Mapping[str, Any],
    incoming: WriteProvenance,
    keys: Mapping[str, Any],
) -> dict[str, Any]:
    """``changes`` without the values it says again that are held at a higher authority
    (merge keys aside): saying a value again at a lower authority leaves it as trusted as it
    was, so a lower write cannot first restate a value and then replace it."""
    if held is None or incoming.authority is None:
        return dict(changes)
    now = held.properties
    same = [n for n, v in changes.items() if n not in keys and n in now and now[n] == v]
    if not same:
        return dict(changes)
    facts = state.facts(conn, held.identity, same)
    kept = {
        name
        for name, fact in facts.items()
        if fact.provenance is not None and below(incoming.authority, fact.provenance.authority)
    }
    return {name: value for name, value in changes.items() if name not in kept}


def below(incoming: Authority | None, held: Authority | None) -> bool:
    """Whether a write of ``incoming`` authority is below a value ``held`` at its own (a
    value written while the schema ranked nothing is outranked by nothing)."""
    return incoming is not None and held is not None and incoming.rank < held.rank


def said(authority: Authority | None) -> str:
    """An authority in words, for a refusal's message."""
    if authority is None:
        return "unranked"
    via = f" via {authority.via}" if authority.via else ""
    return f"{authority.rank} ({authority.by}{via})"


__all__ = ["below", "declared", "of_lineage", "restated", "said"]
