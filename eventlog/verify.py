"""Recomputing the hash chain over stored rows, and the history index from the events."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from writegate.eventlog.canonical import GENESIS_HASH, chain_hash, stored_body
from writegate.eventlog.sql import Sql


@dataclass(frozen=True)
class VerifyReport:
    ok: bool
    checked: int
    head_seq: int
    head_hash: str
    first_bad_seq: int | None = None
    problem: str | None = None
    erased: int = 0  # events whose sealed personal content a receipt forgot (not tampering)

    def describe(self) -> str:
        if self.ok:
            said = f"chain ok: {self.checked} events, head {self.head_seq}:{self.head_hash}"
            return said + (f"; {self.erased} erased" if self.erased else "")
        return f"chain broken at seq {self.first_bad_seq}: {self.problem}"

    def with_seals(self, erased: int, problem: tuple[int, str] | None) -> VerifyReport:
        """This (sound) chain's report with what its sealed values showed: the erased events
        counted, or the first sealed value that was altered or removed without a receipt."""
        if problem is None:
            return replace(self, erased=erased)
        return replace(self, ok=False, erased=erased, first_bad_seq=problem[0], problem=problem[1])


def hash_matches(row: Sequence[Any]) -> bool:
    """Whether a stored row's hash is its content's (``EVENT_COLUMNS`` order), chained on the
    ``prev_hash`` it stores; the links between rows are the caller's to check."""
    body = stored_body(
        seq=row[0],
        event_id=row[1],
        type=row[2],
        occurred_at=row[3],
        actor=row[4],
        streams=row[5],
        payload=row[6],
        provenance=row[7],
        request=row[8],
        idempotency_key=row[9],
        prev_hash=row[10],
    )
    return bool(chain_hash(row[10], body) == row[11])


def verify_rows(rows: Iterable[Sequence[Any]]) -> VerifyReport:
    """Check rows (``EVENT_COLUMNS`` order, by seq): gapless seq, links, and each hash."""
    expected_seq = 1
    prev_hash = GENESIS_HASH
    checked = 0
    for row in rows:
        seq = row[0]
        if seq != expected_seq:
            return VerifyReport(
                False,
                checked,
                expected_seq - 1,
                prev_hash,
                expected_seq,
                f"seq {expected_seq} is missing (next stored seq is {seq})",
            )
        if row[10] != prev_hash:
            return VerifyReport(
                False,
                checked,
                seq - 1,
                prev_hash,
                seq,
                "prev_hash does not match the hash of the event before it",
            )
        if not hash_matches(row):
            return VerifyReport(
                False,
                checked,
                seq - 1,
                prev_hash,
                seq,
                "stored hash does not match the event's content (the event was altered)",
            )
        prev_hash = row[11]
        expected_seq += 1
        checked += 1
    return VerifyReport(True, checked, expected_seq - 1, prev_hash)


_INDEX_PAGE = (
    "SELECT stream, version, seq FROM event_streams WHERE stream > ? OR (stream = ? AND "
    "version > ?) ORDER BY stream, version LIMIT ?"
)
_EVENTS_PAGE = "SELECT seq, streams FROM events WHERE seq > ? ORDER BY seq LIMIT ?"


def _streams(text: object) -> dict[str, int]:
    found = orjson.loads(text) if isinstance(text, str | bytes) else text
    return found if isinstance(found, dict) else {}


def index_problem(conn: Sql, batch: int = 5000) -> str | None:
    """What the history index (``event_streams``, which a node's history is read through)
    says that the events' own hashed streams do not (None: it says exactly what they say).

    The index is walked in its key order and each page's events read by seq, then the
    streams the events name are counted: every entry matched by its event, and as many
    entries as the events name, is the index made again. Memory stays flat."""
    entries = 0
    after: tuple[str, int] = ("", -1)
    while chunk := conn.execute(_INDEX_PAGE, (after[0], after[0], after[1], batch)).fetchall():
        seqs = sorted({int(row[2]) for row in chunk})
        marks = ",".join("?" * len(seqs))
        said = {
            int(seq): _streams(text)
            for seq, text in conn.execute(
                f"SELECT seq, streams FROM events WHERE seq IN ({marks})", seqs
            )
        }
        for stream, version, seq in chunk:
            if said.get(int(seq), {}).get(str(stream)) != int(version):
                return f"seq {seq} is listed as {stream} version {version}, which it is not"
        entries += len(chunk)
        after = (str(chunk[-1][0]), int(chunk[-1][1]))
    named, last = 0, 0
    while rows := conn.execute(_EVENTS_PAGE, (last, batch)).fetchall():
        named += sum(len(_streams(text)) for _, text in rows)
        last = int(rows[-1][0])
    if named != entries:
        return f"it lists {entries} stream versions; the events name {named}"
    return None
