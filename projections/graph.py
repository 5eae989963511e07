"""The graph projection: the log replayed into Memgraph (or Neo4j) through the ``neo4j`` driver.

Each ``apply`` is one write transaction: the batched ``UNWIND … MERGE`` statements of
``projections.cypher`` and the checkpoint node ``(:_WritegateCheckpoint {name})`` — which
also holds the log it follows (``LogMark``: ``log``, ``genesis``, ``hash`` beside ``seq``) —
so the graph and its checkpoint move together or not at all. Transient failures (server gone,
leader switch) are retried here, not by the driver (which retries in silence), with pauses
doubling from 0.5 s to 5 s for ``retry_seconds`` — each retry said as a warning on this
module's logger (``g: graph server … unavailable; retrying (2/5)…``; with no logging
configured, Python prints it on stderr) — then apply raises ``ProjectionUnavailable`` and
the checkpoint stays where it was; an attempt under way at the deadline is finished (at
most ``connect_timeout``). Every driver failure leaves this module as a
``ProjectionError`` with a one-line message; the driver's own log records go to the
``neo4j`` logger, which prints nothing unless the application configures logging.

The projection owns its database: ``reset`` deletes every node except seed 000's
registry nodes (``:Schema``, ``:SchemaRelationship``), which operators manage there.
A ``subject.forgotten`` receipt takes the subject's values out of the store in its place
in the batch (``projections.forgotten``: it reads the receipt's events again from the log,
so a projector given no log refuses it); on ArcadeDB, whose index files keep a key set to
null until the index is rebuilt, the indexes over the keys it nulled are then rebuilt (and,
for a ``values.expired`` receipt, those over the properties whose old values it expired).
Dialects differ only in DDL (index creation).
Observations are not projected: the graph holds facts, and which observations a fact was
extracted from stays in the log, the read model and the PROV-O projection
(``prov:wasDerivedFrom``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from neo4j import Driver, GraphDatabase, ManagedTransaction
from neo4j.exceptions import (
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from neo4j.time import DateTime

from writegate.eventlog import EventCore, Log, one_line
from writegate.eventlog.sealing import EXPIRED, FORGOTTEN
from writegate.projections.contract import LogMark, ProjectionError, check_batch, mark_at
from writegate.projections.cypher import (
    CHECKPOINT_LABEL,
    REGISTRY_LABELS,
    Statement,
    merge_key_indexes,
    quoted,
    statements,
)
from writegate.projections.cypher_retractions import RETRACTIONS, retraction_statements
from writegate.projections.forgotten import expired_keys, forgetting, index_rebuilds

Dialect = Literal["memgraph", "neo4j"]
DIALECTS: tuple[Dialect, ...] = ("memgraph", "neo4j")
BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")

# A library's records are the application's to show: without a handler of its own, Python
# would print the driver's warnings ("Transaction failed and will be retried…") on stderr.
logging.getLogger("neo4j").addHandler(logging.NullHandler())
_log = logging.getLogger(__name__)
FIRST_PAUSE, LONGEST_PAUSE = 0.5, 5.0  # between attempts on an unreachable server


def retry_pauses(retry_seconds: float) -> list[float]:
    """The pauses before each retry: doubling from ``FIRST_PAUSE`` up to ``LONGEST_PAUSE``,
    as many as fit in ``retry_seconds`` (0: tried once)."""
    pauses: list[float] = []
    pause = FIRST_PAUSE
    while sum(pauses) + pause <= retry_seconds:
        pauses.append(pause)
        pause = min(pause * 2, LONGEST_PAUSE)
    return pauses


class ProjectionUnavailable(ProjectionError):
    """The graph server could not be reached (after retries); nothing was applied."""


@dataclass(frozen=True)
class BoltTarget:
    uri: str
    user: str = ""
    password: str = ""
    database: str | None = None
    dialect: Dialect = "memgraph"
    retry_seconds: float = 30.0  # how long an unreachable server is retried (0: tried once)
    connect_timeout: float = 5.0  # one connection attempt (the driver's default is 30 s)

    def driver(self) -> Driver:
        scheme = self.uri.partition("://")[0]
        if scheme not in BOLT_SCHEMES:
            raise ValueError(f"{self.uri!r} is not a Bolt URI ({', '.join(BOLT_SCHEMES)})")
        auth = (self.user, self.password) if self.user else None
        try:
            return GraphDatabase.driver(
                self.uri,
                auth=auth,
                max_transaction_retry_time=0,  # retried by GraphProjector, which says so
                connection_timeout=self.connect_timeout,
                connection_acquisition_timeout=self.connect_timeout,
            )
        except DriverError as exc:  # a malformed URI or option
            raise ValueError(f"{self.uri}: {exc}") from exc


def index_statement(dialect: Dialect, label: str, key: str) -> str:
    if dialect == "memgraph":
        return f"CREATE INDEX ON :{quoted(label)}({quoted(key)})"
    name = f"wg_{label}_{key}".lower()
    return f"CREATE INDEX {quoted(name)} IF NOT EXISTS FOR (n:{quoted(label)}) ON (n.{quoted(key)})"


_NOT_OURS = " AND ".join(f"NOT n:{label}" for label in REGISTRY_LABELS)


class GraphProjector:
    """``log``: the log the events come from, whose mark is recorded with each checkpoint
    (without one, none is: a store of unknown provenance)."""

    forgets_in_place: Literal[True] = True  # a receipt's values go (``projections.forgotten``)

    def __init__(self, target: BoltTarget, name: str = "graph", log: Log | None = None) -> None:
        if target.dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {DIALECTS}, not {target.dialect!r}")
        self.name = name
        self.target = target
        self.log = log
        self._driver = target.driver()
        self._indexed: set[tuple[str, str]] = set()

    def _session(self) -> Any:
        return self._driver.session(database=self.target.database)

    def _run(self, work: Any, *, write: bool = True) -> Any:
        def once() -> Any:
            with self._session() as session:
                return (session.execute_write if write else session.execute_read)(work)

        try:
            return self._retrying(once)
        except (DriverError, Neo4jError) as exc:  # refused credentials, a failed statement…
            raise ProjectionError(
                f"{self.name}: graph server {self.target.uri}: {one_line(exc)}"
            ) from exc

    def _retrying(self, once: Callable[[], Any]) -> Any:
        """``once()``, tried again after each pause of ``retry_pauses`` while the server is
        unreachable and the deadline allows; each retry said before it is made."""
        pauses = retry_pauses(self.target.retry_seconds)
        deadline = time.monotonic() + self.target.retry_seconds
        for attempt in range(len(pauses) + 1):
            try:
                return once()
            except (ServiceUnavailable, SessionExpired, TransientError) as exc:
                if attempt == len(pauses) or time.monotonic() + pauses[attempt] > deadline:
                    raise self._unavailable(exc, attempt + 1) from exc
                _log.warning(
                    "%s: graph server %s unavailable; retrying (%d/%d)…",
                    self.name,
                    self.target.uri,
                    attempt + 1,
                    len(pauses),
                )
                time.sleep(pauses[attempt])
        raise AssertionError("unreachable")  # the last attempt returns or raises

    def _unavailable(self, exc: Exception, attempts: int = 1) -> ProjectionUnavailable:
        tried = f" ({attempts} attempts)" if attempts > 1 else ""
        return ProjectionUnavailable(
            f"{self.name}: graph server {self.target.uri} unavailable: {one_line(exc)}{tried}"
        )

    # -- the contract ----------------------------------------------------------------

    def checkpoint(self) -> int:
        return int(self._run(self._read_checkpoint, write=False))

    def _read_checkpoint(self, tx: ManagedTransaction) -> int:
        record = tx.run(
            f"MATCH (c:{CHECKPOINT_LABEL} {{name: $name}}) RETURN c.seq AS seq", name=self.name
        ).single()
        return int(record["seq"]) if record and record["seq"] is not None else 0

    def mark(self) -> LogMark | None:
        def read(tx: ManagedTransaction) -> LogMark | None:
            record = tx.run(
                f"MATCH (c:{CHECKPOINT_LABEL} {{name: $name}}) "
                "RETURN c.log AS log, c.genesis AS genesis, c.seq AS seq, c.hash AS hash",
                name=self.name,
            ).single()
            if record is None or None in (record["log"], record["genesis"], record["hash"]):
                return None
            return LogMark(
                log=record["log"], genesis=record["genesis"], seq=record["seq"], hash=record["hash"]
            )

        mark: LogMark | None = self._run(read, write=False)
        return mark

    def adopt(self) -> None:
        def work(tx: ManagedTransaction) -> None:
            mark = mark_at(self.log, self._read_checkpoint(tx))
            if mark is not None:
                tx.run(
                    f"MATCH (c:{CHECKPOINT_LABEL} {{name: $name}}) "
                    "SET c.log = $log, c.genesis = $genesis, c.hash = $hash",
                    name=self.name,
                    log=mark.log,
                    genesis=mark.genesis,
                    hash=mark.hash,
                ).consume()

        self._run(work)

    def apply(self, events: Sequence[EventCore]) -> int:
        if not events:
            return self.checkpoint()
        self._ensure_indexes(events)
        erased: dict[str, set[str]] = {}  # label -> keys a forgetting set to null
        batch = list(self._statements(events, erased))
        mark = mark_at(self.log, events[-1].seq)

        def work(tx: ManagedTransaction) -> int:
            checkpoint = self._read_checkpoint(tx)
            check_batch(self.name, checkpoint, events)
            for statement in batch:
                tx.run(statement.cypher, rows=statement.rows).consume()
            if events[-1].seq > checkpoint:
                checkpoint = events[-1].seq
                tx.run(
                    f"MERGE (c:{CHECKPOINT_LABEL} {{name: $name}}) SET c.seq = $seq, "
                    "c.log = $log, c.genesis = $genesis, c.hash = $hash",
                    name=self.name,
                    seq=checkpoint,
                    log=mark.log if mark else None,
                    genesis=mark.genesis if mark else None,
                    hash=mark.hash if mark else None,
                ).consume()
            return checkpoint

        checkpoint = int(self._run(work))
        self._rebuild_indexes(erased)
        return checkpoint

    def _statements(
        self, events: Sequence[EventCore], erased: dict[str, set[str]]
    ) -> Iterator[Statement]:
        """The batch's statements, a forgetting's patch in its place (``projections.forgotten``)
        and a retraction's facts in theirs (``projections.cypher_retractions``)."""
        start = 0
        for at, event in enumerate(events):
            if event.type == EXPIRED:  # no value of it is live: only an index holds them
                for label, keys in expired_keys(self.log, event).items():
                    erased.setdefault(label, set()).update(keys)
            if event.type == FORGOTTEN:
                yield from statements(events[start:at])
                yield from forgetting(self.name, self.log, event, erased)
                start = at + 1
            elif event.type in RETRACTIONS:
                yield from statements(events[start:at])
                yield from retraction_statements(event)
                start = at + 1
        yield from statements(events[start:])

    def _rebuild_indexes(self, erased: dict[str, set[str]]) -> None:
        """On ArcadeDB (its ``dbms.info`` id says so), rebuild the indexes over keys a
        forgetting set to null, once its patch is committed; Neo4j and Memgraph keep no
        remnant, so nothing is asked of them."""
        if not any(erased.values()) or self.target.dialect == "memgraph":
            return
        try:
            with self._session() as session:
                info = session.run("CALL dbms.info()").single()
                if info is None or not str(info["id"]).startswith("arcadedb-"):
                    return
                for statement in index_rebuilds(session.run("SHOW INDEXES").data(), erased):
                    session.run(statement).consume()
        except (DriverError, Neo4jError) as exc:
            raise ProjectionError(
                f"{self.name}: rebuilding the indexes a forgetting left values in: {one_line(exc)}"
            ) from exc

    def _ensure_indexes(self, events: Sequence[EventCore]) -> None:
        for label, key in sorted(merge_key_indexes(events) - self._indexed):
            try:
                with self._session() as session:
                    session.run(index_statement(self.target.dialect, label, key)).consume()
            except (ServiceUnavailable, SessionExpired):
                return  # not indexed yet: the batch's transaction retries (or says so)
            except Neo4jError:
                pass  # an index that exists already (Memgraph says so as an error)
            self._indexed.add((label, key))

    def reset(self) -> None:
        def chunk(tx: ManagedTransaction) -> int:
            record = tx.run(
                f"MATCH (n) WHERE {_NOT_OURS} WITH n LIMIT 10000 DETACH DELETE n "
                "RETURN count(*) AS deleted"
            ).single()
            return int(record["deleted"]) if record else 0

        while self._run(chunk):
            pass

    def snapshot(self) -> Any:
        """Nodes and relationships with their properties, sorted (times as ISO strings)."""

        def read(tx: ManagedTransaction) -> dict[str, list[Any]]:
            nodes = [
                (sorted(r["labels"]), _plain(r["props"]))
                for r in tx.run(
                    f"MATCH (n) WHERE {_NOT_OURS} AND NOT n:{CHECKPOINT_LABEL} "
                    "RETURN labels(n) AS labels, properties(n) AS props"
                )
            ]
            relationships = [
                (
                    r["type"],
                    sorted(r["a"]),
                    _plain(r["ap"]),
                    sorted(r["b"]),
                    _plain(r["bp"]),
                    _plain(r["props"]),
                )
                for r in tx.run(
                    "MATCH (a)-[x]->(b) RETURN type(x) AS type, labels(a) AS a, "
                    "properties(a) AS ap, labels(b) AS b, properties(b) AS bp, "
                    "properties(x) AS props"
                )
            ]
            return {
                "nodes": sorted(nodes, key=repr),
                "relationships": sorted(relationships, key=repr),
            }

        result: dict[str, list[Any]] = self._run(read, write=False)
        return result

    def close(self) -> None:
        self._driver.close()


def _plain(props: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value.isoformat() if isinstance(value, DateTime | datetime) else value
        for key, value in sorted(props.items())
    }
