"""What a node's text leaves out: the properties its label's schema keeps out of the text
index (``searchable: false``), listed in the node's own row.

The list comes with the ``node.written`` event that writes the node (the gate takes it from
the label's schema), so each event that makes a node's document again finds it in the row it
reads anyway: no lookup a write. A publish that changes a label's list appends one
``label.searchable`` event (``language.indexing``); applying it lists the new ones in the
label's rows and makes their documents again, a page of rows at a time. Every row made
before the column existed lists none, as no schema could keep any out then: the column is
added without a rebuild.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from writegate.eventlog.sql import Sql, has_column
from writegate.language import LabelSearchable
from writegate.projections.search import Document, TextIndex, entity_text
from writegate.projections.state import remembered

PAGE = 500  # rows a ``label.searchable`` event's application holds at a time


def add_column(conn: Sql) -> None:
    """``state_nodes.unsearchable``, added to a read model made before it."""
    if not has_column(conn, "state_nodes", "unsearchable"):
        conn.execute("ALTER TABLE state_nodes ADD COLUMN unsearchable TEXT")


def listed(names: list[str] | None, kept: str | None) -> str | None:
    """What a row lists after an event saying ``names`` (None: it says nothing, the row
    keeps ``kept``; an empty list: none)."""
    if names is None:
        return kept
    return orjson.dumps(sorted(names)).decode() if names else None


def searched(properties: dict[str, Any], unsearchable: str | None) -> dict[str, Any]:
    """The properties a node's document says: all but those its row lists."""
    if unsearchable is None:
        return properties
    hidden = set(orjson.loads(unsearchable))
    return {name: value for name, value in properties.items() if name not in hidden}


def text_of(label: str, properties: dict[str, Any], unsearchable: str | None) -> str:
    """A node's document: its label and the string values it does not keep out of search,
    in the order its row keeps them (by name: ``canonical_json``), however they came."""
    return entity_text(label, searched(dict(sorted(properties.items())), unsearchable))


def listing(conn: Sql, identities: Sequence[str]) -> dict[str, str | None]:
    """What the rows of these nodes list (of those there)."""
    sql = "SELECT unsearchable FROM state_nodes WHERE identity = ?"
    found = {i: conn.execute(sql, (i,)).fetchone() for i in identities}
    return {identity: row[0] for identity, row in found.items() if row is not None}


def relist(conn: Sql, index: TextIndex, kept: dict[str, str | None]) -> None:
    """Rows made again from their own streams' events (a forgetting's) list what they did
    before: a ``label.searchable`` event since is on the label's stream, not theirs."""
    for identity, text in kept.items():
        row = conn.execute(
            "SELECT label, properties, scope, unsearchable FROM state_nodes WHERE identity = ?",
            (identity,),
        ).fetchone()
        if row is not None and row[3] != text:
            _relisted(conn, index, [(identity, row[0], row[1], row[2])], text)
    remembered.forget(conn)


def reword(conn: Sql, index: TextIndex, changed: LabelSearchable) -> None:
    """The label's rows list what ``changed`` keeps out now, and their documents say the rest."""
    text = listed(changed.unsearchable, None)
    remembered.forget(conn)  # rows changed here without saying how
    after = ""
    while page := conn.execute(
        "SELECT identity, label, properties, scope FROM state_nodes WHERE label = ? "
        f"AND identity > ? ORDER BY identity LIMIT {PAGE}",
        (changed.label, after),
    ).fetchall():
        _relisted(conn, index, page, text)
        after = str(page[-1][0])


def _relisted(conn: Sql, index: TextIndex, rows: Sequence[Any], text: str | None) -> None:
    """Rows (identity, label, properties, scope) listing ``text`` now, with their documents
    (in the rows themselves where the index follows them: ``nodetext``)."""
    documents = [
        Document(identity, "node", text_of(label, orjson.loads(said), text), at, at)
        for identity, label, said, at in rows
    ]
    if index.follows_rows:
        conn.executemany(
            "UPDATE state_nodes SET unsearchable = ?, text = ? WHERE identity = ?",
            [(text, d.text, d.identity) for d in documents],
        )
        return
    conn.executemany(
        "UPDATE state_nodes SET unsearchable = ? WHERE identity = ?",
        [(text, d.identity) for d in documents],
    )
    index.put(conn, documents)
