"""Appending events that already have their place in a chain (a copy of another log), as
they are: ``Appending.append_existing``, kept here so that the appending of new events
reads on its own."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import orjson

from writegate.eventlog.canonical import chain_hash, stored_body
from writegate.eventlog.erasing import Beside, erase_copied
from writegate.eventlog.errors import EventLogError
from writegate.eventlog.events import Event
from writegate.eventlog.expiring import EXPIRED
from writegate.eventlog.sealing import FORGOTTEN, SealBundle, import_seals, open_rows
from writegate.eventlog.sql import Sql
from writegate.eventlog.tables import INSERT_EVENT, INSERT_STREAM
from writegate.eventlog.transaction import stored_columns

if TYPE_CHECKING:
    from writegate.eventlog.appending import Appending


def append_existing(
    log: Appending,
    events: Iterable[Event],
    *,
    seals: SealBundle | None = None,
    beside: Beside | None = None,
) -> tuple[int, str]:
    """Append events that already have their place in a chain — a copy of another log —
    exactly as they are, in one transaction: each must come next (its seq the head's
    plus one, its ``prev_hash`` the head's hash) and hash to its own ``hash``, so the copy's
    chain is the original's. Inline read models follow. Returns the new head. Events read
    ``sealed`` come with their log's ``seals``, added first (read models get clear values);
    a ``subject.forgotten`` receipt forgets here what it forgot there (``erasing``), in the
    read models and in ``beside``, a store kept beside the log (the gate's refusals)."""
    if log.readonly:
        raise EventLogError(f"{log.describe()} is open read-only")
    conn = log.connection()
    log._known = None
    try:
        log._begin_write(conn)
        log._check_tail_once(conn)
        if seals is not None:
            import_seals(conn, seals)
        seq, digest = log.head()
        erased = 0
        for event in events:
            if event.seq != seq + 1 or event.prev_hash != digest:
                raise EventLogError(
                    f"event {event.seq} does not follow the head {seq} of {log.describe()}"
                )
            columns = stored_columns(event)
            if chain_hash(event.prev_hash, stored_body(**columns)) != event.hash:
                raise EventLogError(f"event {event.seq} does not hash to its stored hash")
            conn.execute(INSERT_EVENT, (*columns.values(), event.hash))
            conn.executemany(INSERT_STREAM, [(s, v, event.seq) for s, v in event.streams.items()])
            clear = _opened(conn, event, columns) if seals is not None else event
            for projector in log.inline:
                projector.apply_event(conn, clear)
            if event.type in (FORGOTTEN, EXPIRED):  # since this copy was made
                log._forgetting(conn)
                erased += erase_copied(conn, event, log.inline, log._replay, beside)
            seq, digest = event.seq, event.hash
        log._commit(conn, seq)
    except BaseException as exc:
        log._abandon(conn, exc)
        raise
    if erased:
        log._after_forget()
    return seq, digest


def _opened(conn: Sql, event: Event, columns: dict[str, Any]) -> Event:
    """A copied event as read models see it: its sealed values put back."""
    texts = [columns["payload"], columns["provenance"], columns["request"]]
    opened = open_rows(conn, [texts], (0, 1, 2))[0]
    if opened is texts:
        return event
    payload, provenance, request = (orjson.loads(text) for text in opened)
    return event.model_copy(
        update={"payload": payload, "provenance": provenance, "request": request}
    )
