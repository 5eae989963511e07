"""The state read model as a projection: installed in the log's file and updated inside each
append's transaction (an inline projector), so the gate's checks read exactly what the log
says; also an ordinary projection that can be reset and rebuilt, and compared with a replay.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import zip_longest
from typing import Any

import orjson

from writegate.eventlog import EventCore, InlineProjector, Log
from writegate.eventlog.erasing import Replay
from writegate.eventlog.sql import Sql, has_column, inserted, run_script
from writegate.language import DEFAULT_SCOPE, LabelSearchable, payload_of
from writegate.projections.search import (
    Document,
    Rows,
    TextIndex,
    entity_text,
    text_index_for,
)
from writegate.projections.search.sqlite import SqliteTextIndex
from writegate.projections.state import (
    blocking,
    nodetext,
    passages,
    remembered,
    scoping,
    searchable,
)
from writegate.projections.state.changes import apply_to_state
from writegate.projections.state.forgetting import forget_located
from writegate.projections.state.observations import ObservationQueries
from writegate.projections.state.queries import StateReader
from writegate.projections.state.retraction_queries import RetractionQueries
from writegate.projections.state.support import SupportQueries
from writegate.projections.state.tables import (
    EVIDENCE_UNINDEXED,
    FEEDBACK_LAYOUT,
    LAYOUT,
    LAYOUT_MARK,
    NODE_ROWS,
    OBSERVATIONS_LAYOUT,
    REBUILT_BELOW,
    STATE_TABLES,
    TABLES,
    TEXT_LAYOUT,
    layout_of,
    layout_tables,
    ordered_selects,
)

_SCRATCH_CACHE_KIB = 32 * 1024  # the replay's page cache: bounded, whatever the log's length


class StateProjection(StateReader, ObservationQueries, SupportQueries, RetractionQueries):
    name = "state"
    tables = (*STATE_TABLES, "projection_checkpoints", *SqliteTextIndex.tables)

    # -- InlineProjector -----------------------------------------------------------

    def install(self, conn: Sql) -> None:
        """Create the tables; a read model of an older layout is emptied, so the log's
        catch-up rebuilds it whole (of a layout since ``REBUILT_BELOW``: columns added)."""
        index = self.text_index(conn)
        run_script(conn, TABLES)
        nodetext.create(conn, index)
        scoping.add_scope_column(conn)
        blocking.add_keys_column(conn)
        searchable.add_column(conn)
        nodetext.upgrade(conn, index, rebuilt=self.layout(conn) < REBUILT_BELOW)
        index.install(conn, _owned_rows(index))
        if self.layout(conn) < LAYOUT:
            if self.layout(conn) < REBUILT_BELOW:
                self.reset(conn)
            elif self.layout(conn) < EVIDENCE_UNINDEXED:
                blocking.drop_unprobed(conn)
            conn.execute(
                "INSERT INTO projection_checkpoints (name, seq) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET seq = excluded.seq",
                (LAYOUT_MARK, LAYOUT),
            )

    def installed(self, conn: Sql) -> bool:
        """Whether the tables are there in the current layout: then opening a log creates
        nothing (a shared database's application role may not). A text index made otherwise
        than it is now is made again from its documents, the layout kept."""
        index = self.text_index(conn)
        return self.layout(conn) >= LAYOUT and index.current(conn, _owned_rows(index))

    def layout(self, conn: Sql) -> int:
        """The layout of the tables on ``conn`` (1: before the mark was kept)."""
        return layout_of(conn)

    def keeps_reviews(self, conn: Sql) -> bool:
        """Whether the read model on ``conn`` keeps the review queue (a read-only copy of an
        older layout may not)."""
        return "state_proposals" in layout_tables(self.layout(conn))

    def keeps_text(self, conn: Sql) -> bool:
        """Whether the read model on ``conn`` keeps the text index (a read-only copy of an
        older layout does not)."""
        return self.layout(conn) >= TEXT_LAYOUT

    def keeps_feedback(self, conn: Sql) -> bool:
        """Whether the read model on ``conn`` keeps feedback weights (a read-only copy of an
        older layout does not: every fact weighs the initial weight there)."""
        return self.layout(conn) >= FEEDBACK_LAYOUT

    def keeps_observations(self, conn: Sql) -> bool:
        """Whether the read model on ``conn`` keeps observations and citations (a read-only
        copy of an older layout does not)."""
        return self.layout(conn) >= OBSERVATIONS_LAYOUT

    def apply_event(self, conn: sqlite3.Connection, event: EventCore) -> None:
        apply_to_state(conn, event, texts=self.text_index(conn).follows_rows)
        if event.type == LabelSearchable.event_type:
            changed = payload_of(event)
            assert isinstance(changed, LabelSearchable)
            searchable.reword(conn, self.text_index(conn), changed)
        self._index_text(conn, event)

    def apply_untexted(self, conn: Sql, event: EventCore) -> None:
        """An event's effect on the tables alone, the text index left as it is: a scratch
        model's, which reads no text (a retraction's replay of one fact's history)."""
        apply_to_state(conn, event, texts=False)

    def forget_subjects(
        self, conn: Sql, located: Sequence[tuple[str, str]], replay: Replay
    ) -> dict[str, int]:
        """A copied forgetting's subjects' rows made again without them (``eventlog.erasing``)."""
        inline: InlineProjector = self  # applies to the append's connection, whatever backend
        return forget_located(conn, located, replay, partial(inline.apply_event, conn))

    def text_index(self, conn: Sql) -> TextIndex:
        """The read model's text index on ``conn`` (its own query API: ``projections.search``)."""
        return text_index_for(conn)

    def _index_text(self, conn: Sql, event: EventCore) -> None:
        """Each entity the event touched (its streams) indexed as the state now holds it, or
        forgotten when gone: the index follows the tables exactly, in the same transaction."""
        found: list[Document] = []
        gone: list[str] = []
        index = self.text_index(conn)
        in_rows = index.follows_rows  # then a node's row is its document (``nodetext``)
        for stream in event.streams:
            kind, _, identity = stream.partition(":")
            if kind not in _TEXT_SOURCES or (in_rows and kind == _NODE):
                continue
            if kind == _OBSERVATION and (cut := passages.documents(conn, identity)):
                found += cut  # a document's passages, never its whole text
                continue
            name, sql, text_of = _TEXT_SOURCES[kind]
            row = conn.execute(sql, (identity,)).fetchone() if sql else _node_text(conn, identity)
            if row is None:
                gone.append(identity)
            else:
                found.append(Document(identity, name, text_of(row), row[-2], row[-1]))
        # a node this event writes first (its stream's version 1) had no document, so none
        # of its relationships can be indexed under a scope it left: not asked (a probe a
        # creating write, about a tenth of what the index adds to it on SQLite)
        older = [d for d in found if event.streams.get(f"node:{d.identity}") != 1]
        found += scoping.moved_relationships(conn, index, older)
        if gone:
            index.drop(conn, gone)
        if found:
            index.put(conn, found)
        if (kept := remembered.seen(conn)) is not None:  # what the index now holds of nodes
            kept.node_documents.update(dict.fromkeys(gone))
            kept.node_documents.update((d.identity, d.scope_from) for d in found if d.kind == _NODE)

    def set_checkpoint(self, conn: sqlite3.Connection, seq: int) -> None:
        inserted(  # an append's held on PostgreSQL: a batch's last is sent, once
            conn,
            "INSERT INTO projection_checkpoints (name, seq) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET seq = excluded.seq",
            [(self.name, seq)],
        )

    def reset(self, conn: Sql) -> None:
        remembered.forget(conn)
        for table in STATE_TABLES:
            conn.execute(f"DELETE FROM {table}")
        text_index_for(conn).reset(conn)
        conn.execute("DELETE FROM projection_checkpoints WHERE name = ?", (self.name,))

    # -- against a replay --------------------------------------------------------------

    def rebuilt_snapshot(self, log: Log) -> dict[str, list[tuple[Any, ...]]]:
        """Replay the whole log into a fresh in-memory database and snapshot it."""
        scratch = sqlite3.connect(":memory:", isolation_level=None)
        try:
            self.install(scratch)
            scratch.execute("BEGIN")
            for event in log.iter_replayed():
                self.apply_event(scratch, event)
            scratch.execute("COMMIT")
            return self.snapshot(scratch)
        finally:
            scratch.close()

    def equals_replay(self, log: Log, conn: Sql) -> bool:
        """Whether the tables on ``conn`` equal a replay of ``log``: the replay is built in a
        private temporary database and every table compared row by row, both read in key
        order, so neither side is ever held whole in memory. Read both inside one snapshot."""
        scratch = sqlite3.connect("", isolation_level=None)  # private, deleted on close
        try:
            scratch.execute(f"PRAGMA cache_size = -{_SCRATCH_CACHE_KIB}")
            scratch.execute("PRAGMA journal_mode = OFF")
            scratch.execute("BEGIN")
            self.install(scratch)
            for event in log.iter_replayed():
                self.apply_event(scratch, event)
            scratch.execute("COMMIT")
            tables = layout_tables(self.layout(conn))
            tables_equal = all(
                all(a == b for a, b in zip_longest(_rows(conn, sql), _rows(scratch, sql)))
                for sql in ordered_selects(tables, _shared_columns(conn, scratch, tables))
            )
            return tables_equal and self._text_equal(conn, scratch)
        finally:
            scratch.close()

    def _text_equal(self, conn: Sql, scratch: Sql) -> bool:
        """Whether the text index on ``conn`` holds what a replay's does (an older layout
        has none to compare)."""
        if self.layout(conn) < TEXT_LAYOUT:
            return True
        live, replayed = text_index_for(conn), text_index_for(scratch)
        pairs = zip_longest(live.documents(conn), replayed.documents(scratch))
        return all(a == b for a, b in pairs)

    def snapshot(self, conn: Sql) -> dict[str, list[tuple[Any, ...]]]:
        """The state tables' rows (``StateReader.snapshot``) and the text index's documents."""
        documents = [(d.identity, d.kind, d.text) for d in text_index_for(conn).documents(conn)]
        return {**super().snapshot(conn), "search_documents": documents}


def _owned_rows(index: TextIndex) -> tuple[Rows, ...]:
    """The owners' rows that are documents, where the index follows rows: the nodes'."""
    return (NODE_ROWS,) if index.follows_rows else ()


_ENDS = (
    f"SELECT r.type, r.properties, COALESCE(f.scope, '{DEFAULT_SCOPE}'), "
    f"COALESCE(t.scope, '{DEFAULT_SCOPE}') "
    "FROM state_relationships r LEFT JOIN state_nodes f ON f.identity = r.from_identity "
    "LEFT JOIN state_nodes t ON t.identity = r.to_identity WHERE r.identity = ?"
)


_NODE, _OBSERVATION = "node", "obs"


def _entity(row: tuple[Any, ...]) -> str:
    return entity_text(row[0], orjson.loads(row[1]))


def _words(row: tuple[Any, ...]) -> str:
    return entity_text(row[0], row[1])


def _said(row: tuple[Any, ...]) -> str:
    return str(row[0])


_TEXT_SOURCES: dict[str, tuple[str, str, Callable[[tuple[Any, ...]], str]]] = {
    # a stream's prefix: the kind of document, where its words are, and how they read
    "node": ("node", "", _words),  # its row as this transaction knows it: ``_node_text``
    "rel": ("relationship", _ENDS, _entity),
    "obs": (
        "observation",
        "SELECT text, scope, scope FROM state_observations WHERE id = ?",
        _said,
    ),
}


def _node_text(conn: Sql, identity: str) -> tuple[Any, ...] | None:
    """A node's label, the properties its text says and its scope (twice: both ends of
    its document)."""
    row = remembered.node_row(conn, identity)
    if row is None:
        return None
    scope = row[remembered.SCOPE]
    properties = orjson.loads(row[remembered.PROPERTIES])
    said = searchable.searched(properties, row[remembered.UNSEARCHABLE])
    return (row[remembered.LABEL], said, scope, scope)


def _shared_columns(
    conn: Sql, scratch: sqlite3.Connection, tables: Sequence[str]
) -> dict[str, list[str]]:
    """Each table's columns that ``conn`` has too: a read-only file of a layout before a
    column was added (one its writer's open adds) is compared on the columns it has. A
    node's ``document`` is a number, not what it says: a row made again has a new one."""
    return {
        table: [
            str(row[1])
            for row in scratch.execute(f"PRAGMA table_info({table})")
            if has_column(conn, table, str(row[1])) and str(row[1]) != "document"
        ]
        for table in tables
    }


def _rows(conn: Sql, sql: str) -> Iterator[tuple[Any, ...]]:
    try:
        cursor = conn.execute(sql)
    except sqlite3.OperationalError:  # a table of the read model dropped from the log's file
        yield ("missing table",)
        return
    while chunk := cursor.fetchmany(1000):
        yield from chunk
