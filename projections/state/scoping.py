"""Each node's scope in the read model (``language.scopes``), kept with the write.

``state_nodes.scope`` holds a node's scope, ``state_observations.scope`` an observation's;
the text index holds each document's scopes (a
relationship's are its ends'), so a scoped search filters in its probe. When a node
changes scope its relationships' documents are written again in the same transaction, so
the index never names a relationship under scopes it has left: seen by the node's new
document where the index keeps it (``moved_relationships``), by its row where the row is
its document (``rescope``).
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from writegate.eventlog.sql import Sql, has_column
from writegate.language import DEFAULT_SCOPE, NodeWritten, RelationshipWritten, scope_or_default
from writegate.projections.search import Document, TextIndex, entity_text, text_index_for
from writegate.projections.state import remembered

_RELATIONSHIP_DOCUMENTS = (
    "SELECT r.identity, r.type, r.properties, f.scope, t.scope FROM state_relationships r "
    "JOIN state_nodes f ON f.identity = r.from_identity "
    "JOIN state_nodes t ON t.identity = r.to_identity WHERE r.{column} = ?"
)


def add_scope_column(conn: Sql) -> None:
    """``state_nodes.scope`` and ``state_observations.scope``, added to a read model made
    before them (rebuilt then)."""
    for table in ("state_nodes", "state_observations"):
        if not has_column(conn, table, "scope"):
            conn.execute(
                f"ALTER TABLE {table} ADD COLUMN scope TEXT NOT NULL DEFAULT '{DEFAULT_SCOPE}'"
            )


def written_scope(conn: Sql, written: NodeWritten) -> str:
    """The scope a node write leaves it in: the one recorded, else the one it has, else
    the implicit one."""
    if written.scope is not None:
        return written.scope
    row = remembered.node_row(conn, written.node.identity)
    return str(row[remembered.SCOPE]) if row else DEFAULT_SCOPE


def stub_scope(written: RelationshipWritten, identity: str) -> str:
    """The scope of an endpoint the relationship write creates."""
    return scope_or_default((written.scopes or {}).get(identity))


def moved_relationships(conn: Sql, index: TextIndex, found: Sequence[Document]) -> list[Document]:
    """The documents of the relationships of every node in ``found`` whose indexed scope
    is not the one it now has: written again with their ends' scopes."""
    nodes = {d.identity: d.scope_from for d in found if d.kind == "node"}
    if not nodes:
        return []
    known = kept.node_documents if (kept := remembered.seen(conn)) is not None else {}
    indexed = {i: scope for i, scope in known.items() if i in nodes and scope is not None}
    asked = [i for i in nodes if i not in known]
    indexed.update((d.identity, d.scope_from) for d in index.documents_of(conn, asked))
    moved = [i for i, scope in nodes.items() if i in indexed and indexed[i] != scope]
    return _relationship_documents(conn, moved)


def rescope(conn: Sql, identity: str) -> None:
    """A node whose row (holding its document: ``nodetext``) has just changed scope: its
    relationships' documents written again with their ends' scopes."""
    text_index_for(conn).put(conn, _relationship_documents(conn, [identity]))


def _relationship_documents(conn: Sql, identities: Sequence[str]) -> list[Document]:
    """The documents of the relationships of these nodes, with their ends' scopes now."""
    again: dict[str, Document] = {}
    for identity in identities:
        for column in ("from_identity", "to_identity"):
            sql = _RELATIONSHIP_DOCUMENTS.replace("{column}", column)
            for rid, rtype, properties, start, end in conn.execute(sql, (identity,)):
                again[rid] = Document(
                    rid, "relationship", entity_text(rtype, orjson.loads(properties)), start, end
                )
    return list(again.values())


def scope_of(conn: Sql, identity: str) -> str | None:
    """The scope of a node the read model holds (None: no such node)."""
    row = remembered.node_row(conn, identity)
    return str(row[remembered.SCOPE]) if row else None
