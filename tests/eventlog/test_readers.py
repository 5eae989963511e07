"""Reading the log: from a seq, by entity, by actor, by time range, paginated."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from freezegun import freeze_time

from tests.conftest import person
from writegate.eventlog import Actor, Event, EventCore
from writegate.gate import Gate
from writegate.language import node_stream

T0 = datetime(2031, 3, 1, 12, 0, tzinfo=UTC)  # after the fixture publishes its schema


def _history(g: Gate) -> None:
    a, b = Actor(agent="agent-a"), Actor(agent="agent-b")
    with freeze_time(T0) as clock:
        for i in range(10):
            clock.tick(timedelta(minutes=1))
            g.write_node(actor=a if i % 2 == 0 else b, **person(f"P{i % 3}", properties={"age": i}))


def test_pages_cover_everything_once_in_order(gate: Gate) -> None:
    _history(gate)
    seen: list[int] = []
    cursor: int | None = 0
    while cursor is not None:
        page = gate.log.read(after_seq=cursor, limit=3)
        seen += [e.seq for e in page.events]
        cursor = page.next_after
    assert seen == list(range(1, 12))  # seq 1 is the schema


def test_by_entity_by_actor_and_by_type(gate: Gate) -> None:
    _history(gate)
    p0 = gate.log.read(stream=node_stream('Person{"name":"P0"}'), limit=100).events
    assert [e.payload["properties"]["age"] for e in p0] == [0, 3, 6, 9]
    assert [e.streams[node_stream('Person{"name":"P0"}')] for e in p0] == [1, 2, 3, 4]
    by_a = gate.log.read(agent="agent-a", limit=100).events
    assert [e.payload["properties"]["age"] for e in by_a] == [0, 2, 4, 6, 8]
    assert [e.type for e in gate.log.read(types=["schema.published"]).events] == [
        "schema.published"
    ]


def test_time_range_is_inclusive_and_time_never_runs_backwards(gate: Gate) -> None:
    _history(gate)
    page = gate.log.read(since=T0 + timedelta(minutes=3), until=T0 + timedelta(minutes=5))
    assert [e.payload["properties"]["age"] for e in page.events] == [2, 3, 4]
    with freeze_time(T0 - timedelta(days=1)):  # a writer whose clock is behind
        late = gate.write_node(**person("Late"))
    event = gate.log.read(after_seq=late.seq - 1, limit=1).events[0]  # type: ignore[union-attr]
    assert event.occurred_at == T0 + timedelta(minutes=10)
    assert gate.log.last_seq_at(T0 + timedelta(minutes=2, seconds=30)) == 3


def test_events_read_back_equal_validated_events(gate: Gate) -> None:
    """Reads skip validation for speed; what they build must equal what validation builds."""
    gate.write_node(**person("Ada"))
    for event in gate.log.iter_events():
        assert Event.model_validate(event.model_dump()) == event
        assert event.model_dump() == Event.model_validate(event.model_dump()).model_dump()
        assert event.actor == Actor.model_validate(event.actor.model_dump())
        assert event.model_fields_set == set(Event.model_fields)


def test_a_copy_of_a_read_event_changes_nothing_shared(gate: Gate) -> None:
    """Read events share their fields-set; pydantic's copies must not write through it."""
    gate.write_node(**person("Ada"))
    first, second = gate.log.iter_events()
    copy = first.model_copy(update={"payload": {"changed": True}})
    assert copy.payload == {"changed": True}
    assert first.payload != copy.payload
    assert first.model_fields_set == second.model_fields_set == set(Event.model_fields)


def test_replays_read_what_events_hold_but_the_request_and_chain(gate: Gate) -> None:
    _history(gate)
    events = list(gate.log.iter_events())
    replayed = list(gate.log.iter_replayed(page=4))  # several pages
    assert [r.model_dump() for r in replayed] == [
        e.model_dump(include=set(EventCore.model_fields)) for e in events
    ]
    assert all(EventCore.model_validate(r.model_dump()) == r for r in replayed)
    assert [r.seq for r in gate.log.iter_replayed(after_seq=3, to_seq=7)] == [4, 5, 6, 7]
    assert list(gate.log.iter_replayed(after_seq=len(events))) == []


def test_event_ids_are_random_version_4_uuids(gate: Gate) -> None:
    gate.write_node(**person("Ada"))
    gate.write_node(**person("Bob"))
    ids = [e.event_id for e in gate.log.iter_events()]
    assert all(uuid.UUID(hex=i).version == 4 and uuid.UUID(hex=i).hex == i for i in ids)
    assert len(set(ids)) == len(ids)
