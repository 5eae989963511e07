"""Expiring sealed values: the transaction of ``Log.expire``, and the raw reads a retention
policy finds its values with.

A retention deletes some sealed values' clear rows while their subjects' keys stay (the
subjects' other values are still read in the clear) and appends a ``values.expired``
receipt naming each value (``subject.digest``); ``verify`` then counts the events that held
them as erased (``sealing.SealAudit``). Which values go is the caller's policy (``find``,
run in the transaction on stored rows, where each sealed value is its ``{"$sealed": ...}``
marker): the log knows no schema.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from writegate.eventlog.events import DraftEvent, Event
from writegate.eventlog.sealing import EXPIRED, MARK, ValuesExpired, install
from writegate.eventlog.sql import Sql
from writegate.eventlog.transaction import Decide, Transaction

Ref = tuple[str, str]  # a sealed value: (subject id, digest)
STREAM = "retention"  # the receipts' stream


@dataclass(frozen=True)
class ExpirePlan:
    """What a retention would delete (a dry run's answer, and the receipt's)."""

    values: list[Ref]  # held in the clear now, expired by the policy
    events: list[int]  # the seqs whose body holds one of them

    def counts(self) -> dict[str, int]:
        return {"sealed_values": len(self.values)}


Expiring = Callable[[Transaction, "ExpirePlan"], dict[str, int]]  # the caller's stores
Finder = Callable[[Sql], "ExpirePlan"]  # the values a policy expires, read in the transaction


def expiring(
    find: Finder,
    policy: Mapping[str, str],
    also: Expiring | None,
    prepare: Callable[[Sql], None],
    done: list[tuple[ExpirePlan, Event | None]],
) -> Decide:
    """``Log.expire``'s transaction: the plan, the values deleted (before the caller's
    stores are made again, ``also``, so they read ``null``), the receipt; each run's plan and
    receipt (None: nothing expired) is added to ``done``."""

    def decide(tx: Transaction) -> None:
        install(tx.conn)
        prepare(tx.conn)
        plan = find(tx.conn)
        if not plan.values:
            done.append((plan, None))
            return
        counts = plan.counts()
        drop(tx.conn, plan.values)
        if also is not None:
            counts.update(also(tx, plan))
        receipt = ValuesExpired(
            values=[f"{subject}.{digest}" for subject, digest in plan.values],
            events=plan.events,
            policy=dict(policy),
            counts=counts,
        )
        done.append((plan, tx.emit(DraftEvent(EXPIRED, receipt.model_dump(), (STREAM,)))))

    return decide


def drop(conn: Sql, values: Iterable[Ref]) -> None:
    """Delete the clear rows of ``values`` (the subjects' keys stay)."""
    conn.executemany("DELETE FROM sealed_values WHERE subject = ? AND digest = ?", list(values))


def sealed_events(conn: Sql, types: Sequence[str], until: str) -> list[tuple[int, str, str]]:
    """(seq, occurred_at, stored payload) of the events of ``types`` recorded at ``until`` or
    before whose payload holds a sealed value, in seq order."""
    marks = ", ".join("?" * len(types))
    rows = conn.execute(
        f"SELECT seq, occurred_at, payload FROM events WHERE type IN ({marks}) "
        "AND occurred_at <= ? AND payload LIKE ? ORDER BY seq",
        (*types, until, f"%{MARK}%"),
    )
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def subject_events(conn: Sql, subject: str) -> list[tuple[int, str, str]]:
    """(seq, type, stored payload) of every event whose payload holds a value of
    ``subject``, in seq order."""
    rows = conn.execute(
        "SELECT seq, type, payload FROM events WHERE payload LIKE ? ORDER BY seq",
        (f"%{MARK}{subject}.%",),
    )
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def holding(conn: Sql, values: Iterable[Ref]) -> list[int]:
    """The seqs whose payload, request or provenance holds one of ``values``."""
    seqs: set[int] = set()
    for subject, digest in values:
        pattern = f'%{MARK}{subject}.{digest}"%'
        rows = conn.execute(
            "SELECT seq FROM events WHERE payload LIKE ? OR request LIKE ? OR provenance LIKE ?",
            (pattern, pattern, pattern),
        )
        seqs.update(int(r[0]) for r in rows)
    return sorted(seqs)


def held(conn: Sql, values: Iterable[Ref]) -> dict[Ref, str]:
    """The clear canonical JSON of those of ``values`` still held."""
    found: dict[Ref, str] = {}
    for subject, digest in values:
        row = conn.execute(
            "SELECT value FROM sealed_values WHERE subject = ? AND digest = ?", (subject, digest)
        ).fetchone()
        if row is not None:
            found[(subject, digest)] = str(row[0])
    return found


__all__ = [
    "EXPIRED",
    "ExpirePlan",
    "Expiring",
    "Finder",
    "Ref",
    "drop",
    "expiring",
    "held",
    "holding",
    "sealed_events",
    "subject_events",
]
