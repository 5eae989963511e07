"""Sealed values: personal content the chain commits to without holding it, so it can be erased.

A caller seals a value of a *subject* (a locator it chooses, such as a node's identity); the
hashed body holds ``{"$sealed":"<subject id>.<HMAC-SHA256(subject key, canonical value)>"}``
and the clear value sits in ``sealed_values``, the key and locator in ``subject_keys`` —
written in the append's transaction, neither chained nor append-only. Forgetting a subject
deletes its key, locator and values and appends a ``subject.forgotten`` receipt; the chain is
untouched, so it verifies, and the HMAC cannot be tested against guessed values once the key
is gone. Reads put the clear values back into an event's column text before it is decoded
(``open_rows``); a value whose key is gone reads as ``null``.

The key ``"$sealed"`` is reserved: a payload must not hold it of its own.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson
from pydantic import BaseModel, ConfigDict

from writegate.eventlog.canonical import canonical_json
from writegate.eventlog.sql import Sql, has_column, run_script

MARK = '{"$sealed":"'  # how every sealed value's canonical JSON starts
_SEALED = re.compile(r'\{"\$sealed":"([0-9a-f]{32})\.([0-9a-f]{64})"\}')
_SUBJECT = re.compile(r'\{"\$sealed":"([0-9a-f]{32})\.')
FORGOTTEN = "subject.forgotten"  # the receipt's event type
EXPIRED = "values.expired"  # a retention's receipt: some values of subjects that stay
TABLES = ("subject_keys", "sealed_values")
DDL = """
CREATE TABLE IF NOT EXISTS subject_keys (
    subject TEXT PRIMARY KEY,
    locator TEXT NOT NULL UNIQUE,
    key TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sealed_values (
    subject TEXT NOT NULL,
    digest TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (subject, digest)
) WITHOUT ROWID;
"""


class SubjectsForgotten(BaseModel):
    """The receipt's payload: which subjects were forgotten, why, which events held their
    values, and how much each store let go of (the log's own counts, and any the caller adds)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subjects: list[str]
    events: list[int]
    reason: str
    counts: dict[str, int]


class ValuesExpired(BaseModel):
    """A retention's receipt: the sealed values (``subject.digest``) whose clear rows were
    deleted while their subjects' keys stay, the events that held them, the policy that
    expired them (what -> ISO 8601 period) and how much each store let go of."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    values: list[str]
    events: list[int]
    policy: dict[str, str]
    counts: dict[str, int]


@dataclass(frozen=True)
class ForgetPlan:
    """What forgetting some locators would destroy (a dry run's answer, and the receipt's)."""

    locators: list[str]
    subjects: list[str]  # the ids of those locators that have a subject (others never sealed)
    events: list[int]  # the seqs whose body holds a sealed value of one of them
    values: int  # sealed values held for them

    def counts(self) -> dict[str, int]:
        return {"subject_keys": len(self.subjects), "sealed_values": self.values}


@dataclass
class Seals:
    """The subjects and sealed values of one write transaction (made on its first seal)."""

    conn: Sql
    keys: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # locator -> (id, key)
    opened: dict[str, bytes] = field(default_factory=dict)  # marker text -> clear JSON

    def __post_init__(self) -> None:
        install(self.conn)

    def subject(self, locator: str) -> tuple[str, bytes]:
        """The subject id and key of ``locator``, made (random) on its first seal."""
        known = self.keys.get(locator)
        if known is None:
            row = self.conn.execute(
                "SELECT subject, key FROM subject_keys WHERE locator = ?", (locator,)
            ).fetchone()
            if row is None:
                row = (os.urandom(16).hex(), os.urandom(32).hex())
                self.conn.execute(
                    "INSERT INTO subject_keys (subject, locator, key) VALUES (?, ?, ?)",
                    (row[0], locator, row[1]),
                )
            known = self.keys[locator] = (str(row[0]), bytes.fromhex(row[1]))
        return known

    def seal(self, locator: str, value: Any) -> dict[str, str]:
        subject, key = self.subject(locator)
        text = canonical_json(value)
        marker, digest = _sealed(subject, key, text)
        self.conn.execute(
            "INSERT INTO sealed_values (subject, digest, value) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (subject, digest, text.decode()),
        )
        self.opened[canonical_json(marker).decode()] = text
        return marker

    def open_json(self, text: str) -> Any:
        """A column's stored text decoded with this transaction's sealed values put back."""
        if MARK not in text:
            return orjson.loads(text)
        return orjson.loads(_SEALED.sub(lambda m: self.opened[m.group(0)].decode(), text))


def _sealed(subject: str, key: bytes, text: bytes) -> tuple[dict[str, str], str]:
    """The sealed form of a value's canonical JSON ``text``, and its digest."""
    digest = hmac.new(key, text, hashlib.sha256).hexdigest()
    return {"$sealed": f"{subject}.{digest}"}, digest


class Sealer(Protocol):
    """What seals a value of a subject: a write transaction, a migration's ``Seals``, or the
    lookup a ``SealedRequest``'s digest is taken with."""

    def seal(self, locator: str, value: Any) -> dict[str, str]: ...


@dataclass(frozen=True)
class SealedRequest:
    """A request naming personal values, as an append is handed it: its idempotency record
    binds the key to the digest of the request sealed (``seal``) with its subjects' keys as
    the database holds them when the digest is taken — in the append's transaction, once its
    keys are made. A plain digest would let anyone holding the files test guessed values
    after the subject is forgotten; this one cannot be tested without the destroyed key, and
    a retry after the forgetting no longer matches it (refused as the key reused, so the
    forgotten values are not written again)."""

    body: Any
    seal: Callable[[Any, Sealer], Any]

    def digest(self, conn: Sql) -> str:
        return hashlib.sha256(canonical_json(self.seal(self.body, _Keys(conn)))).hexdigest()


@dataclass
class _Keys:
    """Seals with the keys the database holds, making none: a subject it does not hold (not
    yet, or no more) seals every value alike, matching no digest taken with a key."""

    conn: Sql
    found: dict[str, tuple[str, bytes] | None] = field(default_factory=dict)
    present: bool | None = None  # whether the log has its keys' table (asked once)

    def seal(self, locator: str, value: Any) -> dict[str, str]:
        if locator not in self.found:
            row = None
            if self.present is None:
                self.present = has_column(self.conn, "subject_keys", "key")
            if self.present:
                row = self.conn.execute(
                    "SELECT subject, key FROM subject_keys WHERE locator = ?", (locator,)
                ).fetchone()
            self.found[locator] = (str(row[0]), bytes.fromhex(row[1])) if row else None
        known = self.found[locator]
        return _sealed(*known, canonical_json(value))[0] if known else {"$sealed": ""}


def forged(text: str, seals: Seals | None) -> bool:
    """Whether a column's text holds a sealed form its transaction did not make: a payload may
    not say ``"$sealed"`` of its own, or it could read back another subject's value."""
    if MARK not in text:
        return False
    made = seals.opened if seals is not None else {}
    return text.count(MARK) != sum(1 for m in _SEALED.finditer(text) if m.group(0) in made)


def _refs(text: str) -> Iterator[tuple[str, str]]:
    if MARK in text:
        for found in _SEALED.finditer(text):
            yield found.group(1), found.group(2)


def sealed_subjects(text: str) -> list[str]:
    """The subjects whose sealed values ``text`` holds (a column's stored text)."""
    return _SUBJECT.findall(text) if MARK in text else []


def open_rows(conn: Sql, rows: list[Any], columns: Sequence[int]) -> list[Any]:
    """``rows`` with the sealed values in ``columns`` put back (``null`` where erased): the
    rows untouched, and nothing read, when none holds a seal (the common case, kept cheap)."""
    sealed = [i for i, row in enumerate(rows) if any(MARK in row[c] for c in columns)]
    if not sealed:
        return rows
    subjects = {s for i in sealed for c in columns for s in _SUBJECT.findall(rows[i][c])}
    values = clear_values(conn, subjects)

    def put_back(found: re.Match[str]) -> str:
        return values.get((found.group(1), found.group(2)), "null")

    rows = list(rows)
    for i in sealed:
        row = list(rows[i])
        for c in columns:
            if MARK in row[c]:
                row[c] = _SEALED.sub(put_back, row[c])
        rows[i] = row
    return rows


def clear_values(conn: Sql, subjects: Iterable[str]) -> dict[tuple[str, str], str]:
    """The clear canonical JSON held for each (subject, digest) of ``subjects``."""
    wanted = sorted(set(subjects))
    found: dict[tuple[str, str], str] = {}
    for start in range(0, len(wanted), 1000):  # within any database's count of parameters
        part = wanted[start : start + 1000]
        rows = conn.execute(
            "SELECT subject, digest, value FROM sealed_values "
            f"WHERE subject IN ({', '.join('?' * len(part))})",
            part,
        ).fetchall()
        found.update({(str(r[0]), str(r[1])): str(r[2]) for r in rows})
    return found


@dataclass(frozen=True)
class SealBundle:
    """A log's subjects and clear values as stored, carried beside its events by a copy."""

    keys: list[tuple[str, str, str]]  # subject, locator, key (hex)
    values: list[tuple[str, str, str]]  # subject, digest, canonical JSON


def export_seals(conn: Sql, *, present: bool = True) -> SealBundle:
    if not present:
        return SealBundle([], [])
    keys = conn.execute("SELECT subject, locator, key FROM subject_keys ORDER BY subject")
    values = conn.execute("SELECT subject, digest, value FROM sealed_values ORDER BY subject")
    return SealBundle([tuple(r) for r in keys], [tuple(r) for r in values])


def import_seals(conn: Sql, bundle: SealBundle) -> None:
    """Add a copy's subjects and values (those already held are kept as they are)."""
    install(conn)
    conn.executemany(
        "INSERT INTO subject_keys (subject, locator, key) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        bundle.keys,
    )
    conn.executemany(
        "INSERT INTO sealed_values (subject, digest, value) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        bundle.values,
    )


def plan_forget(conn: Sql, locators: Sequence[str], *, present: bool = True) -> ForgetPlan:
    """What forgetting ``locators`` would destroy, read in the caller's transaction (nothing,
    if the log never sealed: not ``present``). The events are found by a scan of the log's
    columns: forgetting is rare, a seal on every append is not."""
    subjects: list[str] = []
    for locator in locators if present else ():
        row = conn.execute(
            "SELECT subject FROM subject_keys WHERE locator = ?", (locator,)
        ).fetchone()
        if row is not None:
            subjects.append(str(row[0]))
    seqs: set[int] = set()
    values = 0
    for subject in subjects:
        pattern = f"%{MARK}{subject}.%"
        rows = conn.execute(
            "SELECT seq FROM events WHERE payload LIKE ? OR request LIKE ? OR provenance LIKE ?",
            (pattern, pattern, pattern),
        )
        seqs.update(int(r[0]) for r in rows)
        counted = conn.execute(
            "SELECT count(*) FROM sealed_values WHERE subject = ?", (subject,)
        ).fetchone()
        values += int(counted[0])
    return ForgetPlan(list(locators), subjects, sorted(seqs), values)


def install(conn: Sql) -> None:
    """The sealing tables, if the log has none yet (inside the caller's write transaction)."""
    if not has_column(conn, "sealed_values", "value"):  # CREATE needs a privilege, even if
        run_script(conn, DDL)  # the table is there: a log made by its owner has them


def destroy(conn: Sql, subjects: Sequence[str]) -> None:
    """Delete the subjects' keys, locators and clear values (inside the caller's transaction)."""
    for subject in subjects:
        conn.execute("DELETE FROM sealed_values WHERE subject = ?", (subject,))
        conn.execute("DELETE FROM subject_keys WHERE subject = ?", (subject,))


@dataclass
class SealAudit:
    """What ``verify`` learns of sealed values, a page of the chain at a time (its memory grows
    with the erased events alone): each held value checked against its digest under its
    subject's key, and the events whose values are missing kept until a receipt forgets their
    subject (a subject's receipt follows all its events: a subject written again after it is
    forgotten is a new one)."""

    missing: dict[tuple[str, str], set[int]] = field(default_factory=dict)  # value -> seqs
    forgotten: dict[str, int] = field(default_factory=dict)  # subject -> the receipt's seq
    expired: dict[tuple[str, str], int] = field(default_factory=dict)  # value -> receipt seq
    problem: tuple[int, str] | None = None  # the first: (seq, what)

    def see(self, conn: Sql, rows: Sequence[Sequence[Any]]) -> None:
        """A page of stored rows (``EVENT_COLUMNS`` order), in seq order."""
        refs = [
            (int(row[0]), ref)
            for row in rows
            for text in (row[5], row[6], row[7], row[8])
            for ref in _refs(text)
        ]
        if refs:
            self._check(conn, refs)
        for row in rows:
            if row[2] == FORGOTTEN:
                for subject in SubjectsForgotten.model_validate_json(row[6]).subjects:
                    self.forgotten.setdefault(subject, int(row[0]))
            elif row[2] == EXPIRED:
                for value in ValuesExpired.model_validate_json(row[6]).values:
                    subject, _, digest = value.partition(".")
                    self.expired.setdefault((subject, digest), int(row[0]))

    def _check(self, conn: Sql, refs: list[tuple[int, tuple[str, str]]]) -> None:
        subjects = sorted({subject for _, (subject, _) in refs})
        keys: dict[str, bytes] = {}
        for start in range(0, len(subjects), 1000):
            part = subjects[start : start + 1000]
            marks = ", ".join("?" * len(part))
            rows = conn.execute(
                f"SELECT subject, key FROM subject_keys WHERE subject IN ({marks})", part
            )
            keys.update({str(r[0]): bytes.fromhex(r[1]) for r in rows})
        held = clear_values(conn, subjects)
        checked: set[tuple[str, str]] = set()
        for seq, (subject, digest) in refs:
            value = held.get((subject, digest))
            if value is None:
                self.missing.setdefault((subject, digest), set()).add(seq)
            elif (subject, digest) not in checked:
                checked.add((subject, digest))
                key = keys.get(subject)
                mac = hmac.new(key, value.encode(), hashlib.sha256).hexdigest() if key else None
                if mac != digest:
                    self._found(seq, "a sealed value does not match its digest (altered)")

    def _found(self, seq: int, what: str) -> None:
        if self.problem is None or seq < self.problem[0]:
            self.problem = (seq, what)

    def result(self) -> tuple[int, tuple[int, str] | None]:
        """(events whose sealed content was erased, the first problem or None). A missing value
        is erased only if a later receipt forgot its subject or expired that value."""
        erased: set[int] = set()
        for (subject, digest), seqs in self.missing.items():
            receipt = max(self.forgotten.get(subject, 0), self.expired.get((subject, digest), 0))
            if receipt > max(seqs):
                erased |= seqs
            else:
                self._found(
                    min(seqs), "a sealed value is missing and no receipt forgot or expired it"
                )
        return len(erased), self.problem
