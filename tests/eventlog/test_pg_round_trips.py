"""An append on PostgreSQL makes one round trip once its process knows the log's head, and
is appended again from what it reads when another process has appended since: counted on
the wire (``tests.roundtrips``), against a real server."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.postgres import Server
from tests.roundtrips import RoundTrips
from writegate.eventlog import Actor
from writegate.eventlog.appending import KNOWN_MISS_WAIT
from writegate.eventlog.errors import IdempotencyKeyReused, VersionConflict
from writegate.eventlog.postgres import PostgresEventLog
from writegate.eventlog.testing import emitting, note
from writegate.gate import Gate, Rejected
from writegate.language import node_identity, node_stream

ALICE = Actor(agent="alice")
CLAIM: Any = {"source": "hr.csv", "extraction_method": "parsed", "reliability": 0.9}


@pytest.fixture
def relay(postgres: Server) -> Iterator[RoundTrips]:
    with RoundTrips(postgres.port) as relay:
        yield relay


@pytest.fixture
def counted(relay: RoundTrips, pg_dsn: str) -> Iterator[PostgresEventLog]:
    """A log whose connections go through the relay."""
    with PostgresEventLog(relay.dsn(pg_dsn)) as log:
        yield log


def test_a_single_append_after_the_first_is_one_round_trip(
    relay: RoundTrips, counted: PostgresEventLog
) -> None:
    counted.append(ALICE, emitting(note("first", "thing:1")))  # reads the head under the lock
    relay.reset()
    for n in range(2, 6):
        outcome = counted.append(
            ALICE, emitting(note(f"n{n}", f"thing:{n}", "things")), idempotency_key=f"k{n}"
        )
        assert relay.reset() == 1, f"append {n}"
        assert [e.seq for e in outcome.events] == [n]
    assert [e.streams for e in counted.read(after_seq=3).events] == [
        {"thing:4": 1, "things": 3},
        {"thing:5": 1, "things": 4},
    ]
    assert counted.verify().ok


def test_the_first_append_reads_the_head_and_versions_under_the_lock(
    relay: RoundTrips, counted: PostgresEventLog
) -> None:
    relay.reset()
    counted.append(ALICE, emitting(note("first", "thing:1")))
    assert relay.reset() > 1


def test_an_append_after_another_process_appended_lands_in_its_place(
    relay: RoundTrips, counted: PostgresEventLog, pg_dsn: str
) -> None:
    counted.append(ALICE, emitting(note("ours", "shared")))
    with PostgresEventLog(pg_dsn) as other:
        other.append(ALICE, emitting(note("theirs", "shared")))
    relay.reset()
    outcome = counted.append(ALICE, emitting(note("ours again", "shared")))
    assert relay.reset() > 1  # the stale try, then the append from what it read
    assert [(e.seq, e.streams) for e in outcome.events] == [(3, {"shared": 3})]
    for n in range(KNOWN_MISS_WAIT):  # others append too: a few appends read first
        relay.reset()
        counted.append(ALICE, emitting(note(f"reads {n}", "shared")))
        assert relay.reset() > 1
    relay.reset()
    counted.append(ALICE, emitting(note("and again", "shared")))
    assert relay.reset() == 1  # then it tries what it knows again
    report = counted.verify()
    assert (report.ok, report.head_seq) == (True, 4 + KNOWN_MISS_WAIT)


def test_an_expected_version_is_checked_against_the_log_not_what_the_process_knew(
    counted: PostgresEventLog, pg_dsn: str
) -> None:
    counted.append(ALICE, emitting(note("v1", "doc")))
    with PostgresEventLog(pg_dsn) as other:
        other.append(ALICE, emitting(note("v2", "doc")))
    # this process last saw "doc" at 1; the log has it at 2: the write expecting 2 lands
    counted.append(ALICE, emitting(note("v3", "doc", expected={"doc": 2})))
    with pytest.raises(VersionConflict):
        counted.append(ALICE, emitting(note("stale", "doc", expected={"doc": 2})))
    assert [e.streams for e in counted.read().events] == [{"doc": 1}, {"doc": 2}, {"doc": 3}]


def test_a_stream_new_to_this_process_but_not_to_the_log_gets_its_next_version(
    counted: PostgresEventLog, pg_dsn: str
) -> None:
    counted.append(ALICE, emitting(note("ours", "mine")))
    with PostgresEventLog(pg_dsn) as other:
        other.append(ALICE, emitting(note("theirs", "mine")))
        other.append(ALICE, emitting(note("theirs too", "theirs")))
    counted.append(ALICE, emitting(note("ours", "mine")))  # reads: the head moved
    outcome = counted.append(ALICE, emitting(note("joins", "theirs")))
    assert outcome.events[0].streams == {"theirs": 2}
    assert counted.verify().ok


def test_a_key_another_process_used_is_answered_from_its_append(
    counted: PostgresEventLog, pg_dsn: str
) -> None:
    counted.append(ALICE, emitting(note("first", "a")))
    with PostgresEventLog(pg_dsn) as other:
        theirs = other.append(ALICE, emitting(note("keyed", "b")), idempotency_key="k", request=1)
    again = counted.append(ALICE, emitting(note("keyed", "b")), idempotency_key="k", request=1)
    assert again.replayed
    assert again.events == theirs.events
    with pytest.raises(IdempotencyKeyReused):
        counted.append(ALICE, emitting(note("other", "b")), idempotency_key="k", request=2)
    assert counted.head()[0] == 2


def test_a_gate_write_reads_the_nodes_it_names_at_once_and_then_commits(
    relay: RoundTrips, pg_dsn: str
) -> None:
    """Two round trips, whatever the batch's size: the rows of every node the write names
    (with their aliases and text documents), read before its checks; then the commit. The
    checks and the state read model ask again only what that read left out."""
    with Gate.open(relay.dsn(pg_dsn), default_actor=ALICE) as gate:
        gate.publish_schema("fixtures/seed000_schema.yaml")
        gate.write_node(label="Person", merge_keys={"name": "Ada"}, **CLAIM)
        relay.reset()
        grace = gate.write_node(label="Person", merge_keys={"name": "Grace"}, **CLAIM)
        assert (grace.status, relay.reset()) == ("written", 2)
        older = gate.write_node(
            label="Person", merge_keys={"name": "Grace"}, properties={"age": 85}, **CLAIM
        )
        assert (older.status, relay.reset()) == ("written", 2)
        items = [
            {"op": "write_node", "label": "Person", "merge_keys": {"name": f"p{n}"}, **CLAIM}
            for n in range(100)
        ]
        batch = gate.write_batch(items=items)
        assert (batch.status, relay.reset()) == ("written", 2)
        assert gate.log.verify().ok
        with gate.log.snapshot() as conn:
            assert gate.state.equals_replay(gate.log, conn)


def test_a_batch_after_another_process_appended_reads_its_streams_with_its_nodes(
    relay: RoundTrips, pg_dsn: str
) -> None:
    """Appended from what it reads (what this process knew is stale): the head, the schema's
    version, then every node's row and stream version in one round trip, and the commit."""
    with Gate.open(relay.dsn(pg_dsn), default_actor=ALICE) as gate:
        gate.publish_schema("fixtures/seed000_schema.yaml")
        gate.write_node(label="Person", merge_keys={"name": "Ada"}, **CLAIM)
        with PostgresEventLog(pg_dsn) as other:
            other.append(ALICE, emitting(note("theirs", "elsewhere")))
        gate.write_node(label="Person", merge_keys={"name": "Grace"}, **CLAIM)  # the stale try
        relay.reset()
        items = [
            {"op": "write_node", "label": "Person", "merge_keys": {"name": f"p{n}"}, **CLAIM}
            for n in range(100)
        ]
        assert gate.write_batch(items=items).status == "written"
        assert relay.reset() == 4
        assert gate.log.verify().ok
        with gate.log.snapshot() as conn:
            assert gate.state.equals_replay(gate.log, conn)


def test_the_versions_a_batch_was_served_from_what_its_process_knew_are_checked_together(
    relay: RoundTrips, pg_dsn: str
) -> None:
    """One statement checks every stream version the batch took from the last commit, not
    one a stream; and a version another process moved still fails it, in the database."""
    items = [
        {"op": "write_node", "label": "Person", "merge_keys": {"name": f"p{n}"}, **CLAIM}
        for n in range(100)
    ]
    with Gate.open(relay.dsn(pg_dsn), default_actor=ALICE) as gate:
        gate.publish_schema("fixtures/seed000_schema.yaml")
        gate.write_node(label="Person", merge_keys={"name": "Ada"}, **CLAIM)
        relay.reset()
        assert gate.write_batch(items=items).status == "written"
        checks = [q for q in relay.ran if "(SELECT 1 / (CASE WHEN COUNT(*) = 0" in q]
        assert len(checks) == 1  # its nodes', the schema's: with its writes, before them
        assert checks[0].startswith("WITH w0 AS (INSERT INTO events")
        with Gate.open(pg_dsn, default_actor=ALICE) as other:  # moves p5's stream
            other.write_node(
                label="Person", merge_keys={"name": "p5"}, properties={"age": 5}, **CLAIM
            )
        again = gate.write_batch(items=[{**item, "properties": {"age": 1}} for item in items[:10]])
        assert again.status == "written"
        (p5,) = gate.reader().open_nodes([{"label": "Person", "merge_keys": {"name": "p5"}}]).nodes
        assert (p5.version, p5.properties["age"]) == (3, 1)
        assert gate.log.verify().ok


def test_a_batch_writes_every_table_and_notifies_in_one_statement(
    relay: RoundTrips, pg_dsn: str
) -> None:
    """Held (``PgConnection.add_rows``, ``held``) and sent as one insert a table, its rows one
    JSON parameter, all in one statement: the chain's trigger still checks every event, in
    order, and the state read model equals its replay."""
    items = [
        {
            "op": "write_node",
            "label": "Person",
            "merge_keys": {"name": f"p{n}"},
            "properties": {"age": n, "motto": 'say "hi" \\ ünï'},
            **CLAIM,
        }
        for n in range(100)
    ]
    with Gate.open(relay.dsn(pg_dsn), default_actor=ALICE) as gate:
        gate.publish_schema("fixtures/seed000_schema.yaml")
        relay.reset()
        assert gate.write_batch(items=items).status == "written"
        (written,) = [q for q in relay.ran if q.startswith("WITH")]
        writes = Counter(re.findall(r"(?:INSERT INTO|DELETE FROM) \w+", written))
        assert writes == dict.fromkeys(
            [
                "INSERT INTO events",
                "INSERT INTO event_streams",
                "INSERT INTO state_nodes",
                "INSERT INTO state_facts",
                "DELETE FROM state_support",
                "INSERT INTO state_support",
                "INSERT INTO search_documents",
                "INSERT INTO state_counts",
                "INSERT INTO projection_checkpoints",
            ],
            1,
        )
        assert "pg_notify" in written
        assert not [q for q in relay.ran if q.startswith(("INSERT", "DELETE"))]
        assert [e.seq for e in gate.log.read(after_seq=1).events] == list(range(2, 102))
        assert gate.log.verify().ok
        (p7,) = gate.reader().open_nodes([{"label": "Person", "merge_keys": {"name": "p7"}}]).nodes
        assert (p7.properties["age"], p7.properties["motto"]) == (7, 'say "hi" \\ ünï')
        with gate.log.snapshot() as conn:
            assert gate.state.equals_replay(gate.log, conn)


def test_a_batch_naming_a_node_twice_keeps_its_last_write(relay: RoundTrips, pg_dsn: str) -> None:
    """Rows of one key held twice are one upsert's: the last write's row and support stand."""
    with Gate.open(relay.dsn(pg_dsn), default_actor=ALICE) as gate:
        gate.publish_schema("fixtures/seed000_schema.yaml")
        items = [
            {
                "op": "write_node",
                "label": "Person",
                "merge_keys": {"name": "Ada"},
                "properties": {"age": age},
                **CLAIM,
            }
            for age in (36, 37)
        ]
        assert gate.write_batch(items=items).status == "written"
        (ada,) = (
            gate.reader().open_nodes([{"label": "Person", "merge_keys": {"name": "Ada"}}]).nodes
        )
        assert (ada.version, ada.properties["age"]) == (2, 37)
        with gate.log.snapshot() as conn:
            assert gate.state.equals_replay(gate.log, conn)


def test_a_creating_write_under_resolution_reads_its_candidates_with_its_node(
    relay: RoundTrips, pg_dsn: str
) -> None:
    """Two round trips, as without resolution: the index rows a new name probes are read
    with the rows of the nodes the write names. A batch's later item asks again once an
    earlier one changed the index, so it meets the node created before it."""
    person = {"merge_keys": ["name"], "resolution": {"policy": "propose"}}
    with Gate.open(relay.dsn(pg_dsn), default_actor=ALICE) as gate:
        gate.publish_schema({"nodes": {"Person": person}})
        gate.write_node(label="Person", merge_keys={"name": "Ada Lovelace"}, **CLAIM)
        relay.reset()
        grace = gate.write_node(label="Person", merge_keys={"name": "Grace Hopper"}, **CLAIM)
        assert (grace.status, relay.reset()) == ("written", 2)
        near = gate.write_node(label="Person", merge_keys={"name": "Ada Lovelase"}, **CLAIM)
        assert isinstance(near, Rejected)
        assert near.error_code == "POSSIBLE_DUPLICATE"
        items = [
            {"op": "write_node", "label": "Person", "merge_keys": {"name": n}, **CLAIM}
            for n in ("Alan Turing", "Alan Turning")
        ]
        batch = gate.write_batch(items=items)
        assert isinstance(batch, Rejected)
        assert (batch.error_code, batch.details["item"]) == ("POSSIBLE_DUPLICATE", 1)
        with gate.log.snapshot() as conn:
            assert gate.state.equals_replay(gate.log, conn)


def test_a_write_that_reads_takes_its_nodes_versions_with_their_rows(
    relay: RoundTrips, pg_dsn: str
) -> None:
    """Where an append reads (what its process knew is stale, or in a commit group), a
    node's stream's version is read in the statement that reads its row, not in one of its
    own; a node deleted and written again goes on from its stream's version, which no row
    holds any more."""
    with Gate.open(relay.dsn(pg_dsn), default_actor=ALICE) as gate:
        gate.publish_schema("fixtures/seed000_schema.yaml")
        gate.write_node(label="Person", merge_keys={"name": "Ada"}, **CLAIM)
        with Gate.open(pg_dsn, default_actor=ALICE) as other:
            other.write_node(label="Person", merge_keys={"name": "Grace"}, **CLAIM)
            gone = other.delete_node(label="Person", merge_keys={"name": "Grace"}, **CLAIM)
            assert gone.status == "deleted", gone
        gate.write_node(label="Person", merge_keys={"name": "Lin"}, **CLAIM)  # the stale try
        relay.reset()
        again = gate.write_node(label="Person", merge_keys={"name": "Grace"}, **CLAIM)
        assert again.status == "written", again
        assert not [q for q in relay.ran if q.startswith("SELECT stream, MAX(version)")]
        assert [q for q in relay.ran if q.startswith("SELECT named.v")]
        grace = gate.log.read(after_seq=gate.log.head()[0] - 1).events[0]
        assert grace.streams[node_stream(node_identity("Person", {"name": "Grace"}))] == 3
        assert gate.log.verify().ok
