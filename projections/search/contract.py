"""The text index contract: what a backend's index of the read model promises.

The index holds one document per entity of the read model (a node's label, merge keys and
string properties; a relationship's type and string properties; an observation's text),
kept by the state projection in each append's transaction, so a search reads exactly what
the log says. An index that ``follows_rows`` may be handed an owner's table whose rows are
one kind's documents (``Rows``: on SQLite the nodes', whose text the state writes in the
row itself); it indexes them where they are. A document has a ``kind`` (``node``,
``relationship``, ``observation``; a later kind is one more value), and a search names the
kind it wants. An agent's query is words, never the backend's query language: ``words``
takes them out of any string, so no input is a syntax error. Words are matched on their
stems (``works`` finds ``worked``: Porter's stemmer on SQLite, Snowball's English one on
PostgreSQL), a word that is none finds the words it begins (``al`` finds ``Alice``), and a
query's English function words (``STOP_WORDS``) are not looked for beside other words
(PostgreSQL indexes none of them: a query of stop words alone finds there only the words
they begin). Hits are
ranked by relevance (BM25 on SQLite, cover density on PostgreSQL), ties broken by identity,
and paged by a cursor made from the last hit, so a page is a bounded read, not a scan.
``SqliteTextIndex`` and ``PostgresTextIndex`` keep it; ``testing.TextIndexContractTestCase``
checks both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from writegate.eventlog.sql import Sql, has_column, inserted
from writegate.language import DEFAULT_SCOPE
from writegate.language.scopes import Visible

_IN_LIST = 500  # identities per IN (...) list: far below any SQLite's variable limit
MAX_WORDS = 32  # a query's words beyond these are not searched: a search stays one probe each
_WORD = re.compile(r"[^\W_]+")  # letters and digits: what both backends' tokenizers keep

# Snowball's English stop words, the list PostgreSQL's ``english`` configuration drops from
# what it indexes: they say how a question is asked, not what it is about, and a search for
# any of a question's words that kept them would rank documents by how often they say "the"
_STOP_WORDS = """i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will
    just don should now"""
STOP_WORDS = frozenset(_STOP_WORDS.split())


@dataclass(frozen=True)
class Document:
    """What one entity of the read model says in words."""

    identity: str
    kind: str  # "node", "relationship" or "observation"
    text: str
    # the scopes a reader must see to find it: a node's own (twice), a relationship's ends'
    scope_from: str = DEFAULT_SCOPE
    scope_to: str = DEFAULT_SCOPE


@dataclass(frozen=True)
class Rows:
    """An owner's table whose rows are one kind's documents, handed to ``install``: each
    row's ``text`` column is its document (NULL: none), its integer primary key ``key`` the
    document's number in the index, and ``view`` (the owner's) reads them as documents:
    ``rowid, identity, kind, text, scope_from, scope_to``. The owner writes the text in the
    statement that writes the row, so a document costs no row of its own."""

    kind: str
    table: str
    key: str
    view: str


@dataclass(frozen=True)
class Hit:
    """One document found: ``score`` orders hits (lower is more relevant, on both backends)."""

    identity: str
    score: float

    @property
    def cursor(self) -> str:
        """Where the next page starts: after this hit."""
        return f"{self.score!r}:{self.identity}"


def parse_cursor(cursor: str) -> tuple[float, str]:
    """(score, identity) of a cursor ``Hit.cursor`` made; ValueError for anything else."""
    score, colon, identity = cursor.partition(":")
    if not colon or not identity:
        raise ValueError(f"not a search cursor: {cursor!r}")
    return float(score), identity


def words(query: str) -> list[str]:
    """The words of an agent's query, lower-cased, each once, at most ``MAX_WORDS``."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))[:MAX_WORDS]


def search_words(query: str) -> list[str]:
    """The words a search looks for, at most ``MAX_WORDS``: the query's words but its stop
    words, or all of them when it has no other (``or`` may begin ``orchard``)."""
    found = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))
    return ([w for w in found if w not in STOP_WORDS] or found)[:MAX_WORDS]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def entity_text(name: str, properties: Mapping[str, Any]) -> str:
    """A document's text: the label (or relationship type), then every string value of the
    properties (merge keys among them), in the properties' order; numbers and the like say
    nothing a word search can meet."""
    return "\n".join([name, *(s for v in properties.values() for s in _strings(v))])


def in_scopes(columns: Sequence[str], visible: Visible) -> tuple[str, list[str]]:
    """The condition (`` AND …``) and its parameters that keep a probe inside ``visible``:
    nothing for every scope, never true for none (fail closed)."""
    if visible is None:
        return "", []
    if not visible:
        return " AND 1 = 0", []
    ordered = sorted(visible)
    marks = ", ".join("?" * len(ordered))
    return "".join(f" AND {c} IN ({marks})" for c in columns), ordered * len(columns)


_SCOPE_COLUMNS = ("scope_from", "scope_to")


class TextIndex(Protocol):
    """A text index kept in the log's own database (SQLite or PostgreSQL)."""

    tables: tuple[str, ...]  # what it keeps in the log's database
    # whether it can index an owner's rows where they are (``install``'s ``rows``)
    follows_rows: bool

    def install(self, conn: Sql, rows: Sequence[Rows] = ()) -> None:
        """Create its tables (nothing when they are there); where it ``follows_rows``, the
        documents of each of ``rows``' kinds are those rows (then never ``put``)."""
        ...

    def current(self, conn: Sql, rows: Sequence[Rows] = ()) -> bool:
        """Whether its tables are made as ``install`` makes them now: if not, a writer's
        open installs them again (from the documents they hold, not by a replay)."""
        ...

    def reset(self, conn: Sql) -> None:
        """Forget every document (a rebuild then puts them back)."""
        ...

    def put(self, conn: Sql, documents: Iterable[Document]) -> None:
        """Index each document, replacing the one of the same identity (of a kind it keeps
        itself: one whose documents are an owner's rows is written with them)."""
        ...

    def drop(self, conn: Sql, identities: Iterable[str]) -> None:
        """Forget the documents of these identities (absent ones: nothing)."""
        ...

    def compact(self, conn: Sql) -> None:
        """Let go of what dropped documents left in the index's own structures (a forgetting
        needs their words gone from the file, not only unreachable)."""
        ...

    def parts(self, conn: Sql) -> list[str]:
        """The index's structures that ``optimize`` merges, each in its own transaction."""
        ...

    def optimize(self, conn: Sql, part: str) -> None:
        """Merge one part's pending structures into one, so that a probe seeks one place:
        maintenance (a job's), never a write's; answers are the same before and after."""
        ...

    def search(
        self,
        conn: Sql,
        query: str,
        kind: str,
        limit: int,
        after: str | None = None,
        visible: Visible = None,
    ) -> list[Hit]:
        """At most ``limit`` documents of ``kind`` matching any of ``search_words(query)``
        (a word matches the words its stem begins), the most relevant first, ties by
        identity, after the hit whose ``cursor`` is ``after``; none when the query has no
        such words. Only documents whose scopes are all in ``visible`` (None: every
        scope) are looked at: the probe filters, not the caller. A malformed ``after``
        raises ValueError."""
        ...

    def matched(
        self, conn: Sql, query: str, kind: str, identities: Sequence[str]
    ) -> dict[str, list[str]]:
        """For each of ``identities`` (documents of ``kind``), the words of
        ``search_words(query)`` it matches as ``search`` matches them — its stems, an
        absent word as the words it begins, no stop word beside others — in the query's
        order: why it was found, in words the index itself confirms."""
        ...

    def documents(self, conn: Sql) -> Iterator[Document]:
        """Every document, in identity order: two equal indexes give equal sequences."""
        ...

    def documents_of(self, conn: Sql, identities: Sequence[str]) -> list[Document]:
        """The documents of these identities that are there, in identity order (what a
        follower of the index, the vectors', reads for the entities a batch touched)."""
        ...

    def scope_of(self, identity: str) -> str:
        """SQL of one value: the ``scope_from`` of the document of the identity the SQL
        ``identity`` names (NULL: none), for a statement that reads the rows of a write's
        nodes in every table at once (one round trip, one probe of the key each)."""
        ...


class DocumentRows:
    """The ``search_documents`` rows, written and read alike on both backends (their word
    index follows the rows: FTS5 through triggers on SQLite, a generated ``tsvector`` on
    PostgreSQL), so a backend adds only its tables and its search."""

    # an unchanged document is not written again: its index entries stay as they are
    _PUT = (
        "INSERT INTO search_documents (identity, kind, text, scope_from, scope_to) "
        "VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (identity) DO UPDATE SET kind = excluded.kind, text = excluded.text, "
        "scope_from = excluded.scope_from, scope_to = excluded.scope_to "
        "WHERE search_documents.text <> excluded.text OR search_documents.kind <> excluded.kind "
        "OR search_documents.scope_from <> excluded.scope_from "
        "OR search_documents.scope_to <> excluded.scope_to"
    )
    _COLUMNS = "identity, kind, text, scope_from, scope_to"

    def current(self, conn: Sql, rows: Sequence[Rows] = ()) -> bool:
        return True  # its rows: a change to them is a layout of the read model

    def add_scopes(self, conn: Sql) -> None:
        """The scope columns, added to an index made before them (its rows are then
        rebuilt with the rest of the read model)."""
        for column in _SCOPE_COLUMNS:
            if not has_column(conn, "search_documents", column):
                conn.execute(
                    f"ALTER TABLE search_documents ADD COLUMN {column} "
                    f"TEXT NOT NULL DEFAULT '{DEFAULT_SCOPE}'"
                )

    @staticmethod
    def scoped(visible: Visible) -> tuple[str, list[str]]:
        """``in_scopes`` over a document's two scope columns."""
        return in_scopes(_SCOPE_COLUMNS, visible)

    def reset(self, conn: Sql) -> None:
        conn.execute("DELETE FROM search_documents")

    def put(self, conn: Sql, documents: Iterable[Document]) -> None:
        inserted(  # an append's held on PostgreSQL, sent with the rest of its batch's
            conn,
            self._PUT,
            [(d.identity, d.kind, d.text, d.scope_from, d.scope_to) for d in documents],
        )

    def drop(self, conn: Sql, identities: Iterable[str]) -> None:
        conn.executemany(
            "DELETE FROM search_documents WHERE identity = ?", [(i,) for i in identities]
        )

    def compact(self, conn: Sql) -> None:
        """The rows are the index (PostgreSQL's tsvector): a dropped one is gone with them."""

    def documents(self, conn: Sql) -> Iterator[Document]:
        rows = conn.execute(f"SELECT {self._COLUMNS} FROM search_documents ORDER BY identity")
        for row in rows:
            yield Document(*row)

    def documents_of(self, conn: Sql, identities: Sequence[str]) -> list[Document]:
        return self.documents_in(conn, ["search_documents"], identities)

    def documents_in(
        self, conn: Sql, sources: Sequence[str], identities: Sequence[str]
    ) -> list[Document]:
        """``documents_of`` read from each of ``sources`` (tables or views of documents)."""
        found: list[Document] = []
        unique = sorted(set(identities))
        for source in sources:
            for start in range(0, len(unique), _IN_LIST):
                chunk = unique[start : start + _IN_LIST]
                marks = ", ".join("?" * len(chunk))
                sql = f"SELECT {self._COLUMNS} FROM {source} WHERE identity IN ({marks})"
                found.extend(Document(*row) for row in conn.execute(sql, chunk))
        return sorted(found, key=lambda d: d.identity)

    def scope_of(self, identity: str) -> str:
        return f"(SELECT scope_from FROM search_documents WHERE identity = {identity})"
