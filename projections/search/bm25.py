"""A search's scores on SQLite: FTS5's BM25, reading a bounded number of documents.

FTS5's ``bm25()`` counts every document holding each phrase it scores to weigh it (its
IDF), so a word in a quarter of the log cost a search a pass over a quarter of the log's
documents however few it returned (at 100k nodes, 7 ms of the 8 a common word's search
took). Here a phrase is rare when at most ``common`` documents of the kind hold it (counted
up to that bound), and ``bm25()`` scores rare phrases as it always has. A common phrase is
never given to ``bm25()``: its document count is told from the recent documents, as its
share of those at or after the ``common``-th most recent holding it times the documents of
the kind, and its weight is FTS5's IDF of that count. Its frequency in a document is the
marks ``highlight()`` sets (beside a rare phrase: the marks it adds to the rare phrase's),
a document's length is the index's own ``%_docsize``, and the sum is BM25's with FTS5's
constants: with no common phrase, a score is exactly FTS5's own.

A word that is no word of the index is asked as a prefix only when an index of words' first
two letters (``PREFIXED``, kept where a kind's words are few) finds a word beginning as it
does, or cannot say.

Which documents are scored: every one holding a rare phrase, whatever its age; of those
holding common phrases only, the ``common`` most recent holding any and the ``common`` most
recent holding all (one of these older than the first shares its marks evenly among the
phrases). Never looked at: an older document holding common phrases only, and not all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from writegate.eventlog.sql import Sql
from writegate.language.scopes import Visible
from writegate.projections.search.contract import DocumentRows, search_words

COMMON = 256  # a word in more documents (of the kind searched) than this is a common one
K1, B = 1.2, 0.75  # FTS5's bm25() constants
OPEN, CLOSE = "\x01", "\x02"  # highlight()'s marks: no tokenizer keeps a control character
KINDS = ("node", "relationship", "observation")  # one FTS5 table each: a later kind, one more
WINDOW_COUNTED = 16 * COMMON  # documents a window is counted through; beyond, by rowid span
BEGINS = 2  # the letters an FTS5 prefix index keeps (where ``PREFIXED``): fewer than porter stems
PREFIXED = f", prefix = '{BEGINS}'"  # FTS5's option making that index
# a word whose first two letters its stem keeps: porter (FTS5's) changes only the end of a
# word; it leaves a single letter of "aed", "ies" or "yying", whose first letter is a vowel
# unicode61's tokens of an ASCII text are its runs of letters and digits: the words of its
# bytes once every other byte is a space (split in C: a sixth of a regular expression's time)
_SPACED = bytes(c if chr(c).isascii() and chr(c).isalnum() else 32 for c in range(256))
_CONTENT = re.compile(r"content = '([^']*)'")  # the table or view an FTS5 table indexes
_KEPT_BEGINNING = re.compile(r"[b-df-hj-np-tv-xz0-9][a-z0-9]{2,}")

_FROM = (  # a scope to keep, or the one table of every kind: each hit's document read
    "FROM {fts} JOIN {documents} d ON d.rowid = {fts}.rowid "
    "WHERE {fts} MATCH ? AND d.kind = ?{scoped}"
)
_ALONE = "FROM {fts} WHERE {fts} MATCH ?"  # else a hit is its rowid until it is named
_MARKED = f"highlight({{fts}}, 0, char({ord(OPEN)}), char({ord(CLOSE)}))"
_RARE = "SELECT {fts}.rowid, {named}, bm25({fts}) {from}"
_RARE_MARKED = f"SELECT {{fts}}.rowid, {{named}}, bm25({{fts}}), {_MARKED} {{from}}"
_HELD = f"SELECT {{fts}}.rowid, {{named}}, {_MARKED} {{from}}"  # no bm25(), which counts
_RECENT = f"SELECT {{fts}}.rowid, {{named}}, {_MARKED} {{from}} ORDER BY {{fts}}.rowid DESC LIMIT ?"
_HOLDING = "SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT ?)"
_ANY = "SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT 1"
Rows = Callable[..., list[tuple[Any, ...]]]
_NEWEST = "SELECT rowid FROM {fts} WHERE {fts} MATCH ? ORDER BY rowid DESC"  # any scope


def phrase(word: str, begins: bool = False) -> str:
    """FTS5's phrase for one of an agent's words: quoted (a quote inside doubled), matching
    the word's stem, or (``begins``) the words it begins."""
    return '"' + word.replace('"', '""') + ('"*' if begins else '"')


def fts_table(conn: Sql, kind: str) -> tuple[str, bool, str] | None:
    """The FTS5 table holding ``kind``'s documents — its own, or on a read-only copy of the
    layout before, the one table of every kind — whether it keeps words' first two letters
    (``PREFIXED``), and where its documents are read (the documents' table, or the owner's
    view of the rows that are them); None for a kind never indexed."""
    if kind not in KINDS:
        return None
    names = [f"search_fts_{kind}", "search_fts"]
    marks = ", ".join("?" * len(names))
    found = dict(
        conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN ({marks})",
            names,
        ).fetchall()
    )
    name = next((name for name in names if name in found), None)
    if name is None:
        return None
    view = content_of(found[name])
    documents = "search_documents" if view.startswith("search_") or not view else view
    return name, PREFIXED in found[name], documents


def content_of(made: str) -> str:
    """The table or view an FTS5 table indexes (its ``content`` option; none: "")."""
    found = _CONTENT.search(made)
    return found.group(1) if found else ""


def scored(
    conn: Sql,
    query: str,
    kind: str,
    visible: Visible,
    common: int = COMMON,
    top: int | None = None,
) -> dict[str, float]:
    """Each document of ``kind`` that ``query``'s words find, with its BM25 score (FTS5's
    sign: lower is better), reading a bounded number of documents whatever the log's size;
    with ``top``, only the ``top`` best and any tied with the last of them (what a page
    ranked by score, then identity, can hold): unscoped, hits are ranked by rowid and only
    those are named, so a search of hundreds of hits reads a page's identities, not all.

    A word matches its stem; one that is no indexed word matches the words it begins (a
    prefix merges every such word's list of documents first, so it is not asked of a word
    that is there)."""
    table = fts_table(conn, kind)
    if table is None:
        return {}
    fts, prefixed, documents = table
    where, scopes = DocumentRows.scoped(visible)
    joined = bool(where) or fts == "search_fts"
    head = [kind, *scopes] if joined else []
    shape = {
        "{from}": _FROM if joined else _ALONE,
        "{named}": "d.identity" if joined else "{fts}.rowid",
    }

    def rows(sql: str, match: str, *tail: object) -> list[tuple[Any, ...]]:
        made = sql.replace("{from}", shape["{from}"]).replace("{named}", shape["{named}"])
        made = made.replace("{fts}", fts).replace("{scoped}", where)
        made = made.replace("{documents}", documents)
        return conn.execute(made, [match, *head, *tail]).fetchall()

    found = _scored(conn, fts, query, rows, common, prefixed)
    return found if joined else _named(conn, found, top, documents)


def _scored(
    conn: Sql, fts: str, query: str, rows: Rows, common: int, prefixed: bool = False
) -> dict[Any, float]:
    """``scored``'s hits, keyed as ``rows`` names them (an identity, or a rowid)."""

    def holding(match: str) -> int:  # of the table's documents: a bound, never a filter
        sql = _HOLDING.replace("{fts}", fts)
        return int(conn.execute(sql, (match, common + 1)).fetchone()[0])

    def may_begin(word: str) -> bool:  # a word of the index may begin as ``word``'s stem
        if not prefixed or not _KEPT_BEGINNING.fullmatch(word):
            return True
        sql = _ANY.replace("{fts}", fts)
        return conn.execute(sql, (phrase(word[:BEGINS], begins=True),)).fetchone() is not None

    rare: list[str] = []
    frequent: list[str] = []
    for word in search_words(query):
        match = phrase(word)
        held = holding(match)
        if held == 0 and may_begin(word):
            match = phrase(word, begins=True)
            held = holding(match)
        if held:
            (rare if held <= common else frequent).append(match)
    if not frequent:
        return dict(row[1:] for row in rows(_RARE, " OR ".join(rare))) if rare else {}
    index = _Index(conn, fts)
    found = _common_only(index, rows, rare, frequent, common)
    if rare:
        some = " OR ".join(rare)
        marked = rows(_RARE_MARKED, some)
        index.counted((rowid, text) for rowid, _, _, text in marked)
        alone = {r: (i, score, _marks(m)) for r, i, score, m in marked}
        lengths = index.lengths(alone)
        found.update({identity: score for identity, score, _ in alone.values()})
        for match, idf in index.weights.items():  # a common phrase's marks beside the rare
            for rowid, identity, marked in rows(_HELD, f"({some}) AND {match}"):
                frequency = _marks(marked) - alone[rowid][2]
                found[identity] -= index.part(idf, frequency, lengths[rowid])
    return found


def _common_only(
    index: _Index, rows: Rows, rare: list[str], frequent: list[str], common: int
) -> dict[str, float]:
    """The ``common`` most recent documents holding any common phrase, and (past them) the
    ``common`` most recent holding every phrase, scored by the common phrases (one holding a
    rare phrase too is scored again with it). Weighs each common phrase (``index.weights``)."""
    recent = rows(_RECENT, " OR ".join(frequent), common)
    every = []
    if len(rare) + len(frequent) > 1 and len(recent) == common:  # fewer: all were read
        every = rows(_RECENT, " AND ".join(rare + frequent), common)
    since = min((rowid for rowid, _, _ in recent), default=None)
    holding = {match: index.weigh(match, since, common) for match in frequent}
    index.counted((rowid, marked) for rowid, _, marked in recent + every)
    lengths = index.lengths(rowid for rowid, _, _ in recent + every)
    found: dict[str, float] = {}
    part, weights, phrases = index.part, index.weights, len(rare) + len(frequent)
    for rowid, identity, marked in recent + every:  # 512 at most: the loop kept plain
        if since is not None and rowid >= since:  # the marks of the common phrases it holds
            held = [match for match in frequent if rowid in holding[match]]
            share = marked.count(OPEN) / max(len(held), 1)
        else:  # older than the recent ones, holding every phrase: its marks shared by all
            held, share = frequent, marked.count(OPEN) / phrases
        if len(held) == 1:  # the sum of one term, as ``sum`` would make it
            found[identity] = -part(weights[held[0]], share, lengths[rowid])
        else:
            found[identity] = -sum(part(weights[match], share, lengths[rowid]) for match in held)
    return found


class _Index:
    """One kind's FTS5 table: its document and token counts (FTS5's averages record), its
    documents' lengths, and the weight each common phrase was given."""

    def __init__(self, conn: Sql, fts: str) -> None:
        self.conn, self.fts = conn, fts
        block = conn.execute(f"SELECT block FROM {fts}_data WHERE id = 1").fetchone()
        counts = [*(_varints(block[0]) if block is not None else []), 0, 0]  # empty: none
        self.documents, self.average = counts[0], counts[1] / max(counts[0], 1)
        self.weights: dict[str, float] = {}
        self._lengths: dict[int, int] = {}  # read once a search, however many ask
        self._top: int | None = None

    def part(self, idf: float, frequency: float, length: int) -> float:
        """One phrase's term of BM25's sum (FTS5's)."""
        if frequency <= 0:
            return 0.0
        norm = K1 * (1 - B + B * length / max(self.average, 1e-9))
        return idf * frequency * (K1 + 1) / (frequency + norm)

    def lengths(self, rowids: Iterable[int]) -> dict[int, int]:
        """Each document's length in tokens (FTS5's ``%_docsize``), each read once a search:
        a document holding rare and common phrases is asked twice."""
        known = self._lengths
        wanted = [rowid for rowid in dict.fromkeys(rowids) if rowid not in known]
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT id, sz FROM {self.fts}_docsize WHERE id IN ({marks})"
            known.update((rowid, sum(_varints(sz))) for rowid, sz in self.conn.execute(sql, chunk))
        return known

    def counted(self, marked: Iterable[tuple[int, str]]) -> None:
        """The lengths of documents whose text a search has read (``highlight()``'s), counted
        here rather than read: in ASCII, unicode61's tokens are the runs of letters and
        digits (the marks are control characters, between tokens), and porter drops none."""
        known = self._lengths
        for rowid, text in marked:
            if rowid not in known and text.isascii():
                known[rowid] = ascii_tokens(text)

    def weigh(self, match: str, since: int | None, common: int) -> set[int]:
        """Weigh a common phrase (``weights``) by the share of the documents holding it
        among those at or after the ``common``-th most recent holding it; the documents
        holding it from there, or from ``since`` if older."""
        newest = _NEWEST.replace("{fts}", self.fts)
        first = self.conn.execute(f"{newest} LIMIT ?", (match, common)).fetchall()
        held = {rowid for (rowid,) in first}
        anchor = first[-1][0] if len(first) == common else 0
        if anchor and since is not None and since < anchor:  # and on, down to ``since``
            sql = newest.replace("MATCH ?", "MATCH ? AND rowid >= ? AND rowid < ?")
            held.update(rowid for (rowid,) in self.conn.execute(sql, (match, since, anchor)))
        share = common / max(self._documents_since(anchor), common)
        count = min(max(self.documents * share, common + 1), self.documents)
        idf = math.log((self.documents - count + 0.5) / (count + 0.5))
        self.weights[match] = idf if idf > 0 else 1e-6  # FTS5's floor
        return held

    def _documents_since(self, oldest: int) -> int:
        """The documents of the kind at or after ``oldest``: counted, or past
        ``WINDOW_COUNTED``, told from how many rowids the counted ones span."""
        table = f"{self.fts}_docsize"
        last = self.conn.execute(
            f"SELECT id FROM {table} WHERE id >= ? ORDER BY id DESC LIMIT 1 OFFSET ?",
            (oldest, WINDOW_COUNTED - 1),
        ).fetchone()
        if last is None:
            sql = f"SELECT count(*) FROM {table} WHERE id >= ?"
            return int(self.conn.execute(sql, (oldest,)).fetchone()[0])
        if self._top is None:  # the newest document: one read a search, not one a phrase
            self._top = int(self.conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0])
        top = self._top
        return round(WINDOW_COUNTED * (top - oldest + 1) / (top - int(last[0]) + 1))


def _named(conn: Sql, found: dict[Any, float], top: int | None, documents: str) -> dict[str, float]:
    """The hits ranked by rowid, named from ``documents``: the ``top`` best and those tied
    with the last."""
    ranked = sorted(found.items(), key=lambda hit: hit[1])
    if top is not None and len(ranked) > top:
        bound = ranked[max(top, 1) - 1][1]
        ranked = [hit for hit in ranked if hit[1] <= bound]
    named: dict[str, float] = {}
    for start in range(0, len(ranked), 500):
        chunk = dict(ranked[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT rowid, identity FROM {documents} WHERE rowid IN ({marks})"
        named.update((identity, chunk[rowid]) for rowid, identity in conn.execute(sql, list(chunk)))
    return named


def ascii_tokens(text: str) -> int:
    """How many tokens unicode61 (and so porter, which drops none) makes of an ASCII text."""
    return len(text.encode().translate(_SPACED).split())


def _marks(marked: str) -> int:
    return marked.count(OPEN)


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints, one after another (FTS5's record of counts)."""
    values, value, at = [], 0, 0
    while at < len(blob):
        byte = blob[at]
        at += 1
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            values.append(value)
            value = 0
    return values
