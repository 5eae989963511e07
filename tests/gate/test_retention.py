"""Retention through the gate, on SQLite and PostgreSQL: a personal property's superseded
values and personal observations' text are forgotten once the schema's period has passed
(``Gate.retain``), leaving no byte of them in the log's files while the subjects' current
values stay readable, the chain verifies and reports them erased, and a second run finds
nothing new; a retention declared where values are not sealed is refused when published."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from freezegun import freeze_time

from tests.conftest import AGENT, ROOT
from tests.personal import person, raw_bytes
from writegate.eventlog import EventLog, open_log
from writegate.eventlog.copying import copy_log
from writegate.eventlog.tables import APPEND_ONLY_TRIGGERS, create_tables
from writegate.gate import Gate
from writegate.gate.models import Rejected
from writegate.gate.reads.reader import GraphReader
from writegate.gate.retention import RetainResult
from writegate.projections.prov import ProvProjector
from writegate.projections.runner import replay
from writegate.projections.state import StateProjection

SCHEMA = ROOT / "fixtures" / "personal_schema.yaml"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def _document(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(SCHEMA.read_text())
    document["nodes"]["Person"]["properties"]["email"]["retention"] = "P30D"
    document["personal_observations"] = True
    document["observation_retention"] = "P7D"
    document.update(changes)
    return document


def _email(gate: Gate, name: str) -> Any:
    found = GraphReader(gate.log, gate.state).open_nodes(
        [{"label": "Person", "merge_keys": {"name": name}}], gate.current_schema()
    )
    return found.nodes[0].properties.get("email")


def _retain(gate: Gate, *, dry_run: bool = False) -> RetainResult:
    result = gate.retain(dry_run=dry_run)
    assert isinstance(result, RetainResult), result
    return result


def _tamper(gate: Gate, seq: int, request: pytest.FixtureRequest) -> None:
    """Edit event ``seq``'s payload behind the log's guards."""
    log = gate.log
    if isinstance(log, EventLog):
        conn = sqlite3.connect(log.path, isolation_level=None)
        try:
            conn.execute("BEGIN")
            for trigger in APPEND_ONLY_TRIGGERS:
                conn.execute(f"DROP TRIGGER {trigger}")
            conn.execute("UPDATE events SET payload = '{\"x\":1}' WHERE seq = ?", (seq,))
            create_tables(conn)
            conn.execute("COMMIT")
        finally:
            conn.close()
        return
    with psycopg.connect(str(request.getfixturevalue("pg_dsn"))) as pg:
        pg.execute("ALTER TABLE events DISABLE TRIGGER USER")
        pg.execute("UPDATE events SET payload = '{\"x\":1}' WHERE seq = %s", (seq,))
        pg.execute("ALTER TABLE events ENABLE TRIGGER USER")


def test_a_superseded_personal_value_is_forgotten_once_its_retention_has_passed(
    any_db: str | Path, request: pytest.FixtureRequest
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    old, new = f"{marker}old@mail", f"{marker}new@mail"
    with freeze_time(T0), Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(_document()).status == "published"
        assert person(gate, "Ada", email=old, role="engineer").status == "written"
    with freeze_time(T0 + DAY), Gate.open(any_db, create=False, default_actor=AGENT) as gate:
        assert person(gate, "Ada", email=new).status == "written"
    with freeze_time(T0 + 20 * DAY), Gate.open(any_db, create=False, default_actor=AGENT) as gate:
        early = _retain(gate)  # superseded 19 days ago: kept
        assert (early.values, early.seq) == (0, None)
        assert early.policy == {"Person.email": "P30D", "observations": "P7D"}
    with freeze_time(T0 + 40 * DAY), Gate.open(any_db, create=False, default_actor=AGENT) as gate:
        assert old.encode() in raw_bytes(gate, request)  # the test can fail
        dry = _retain(gate, dry_run=True)
        assert (dry.dry_run, dry.values, dry.seq) == (True, 1, None)
        assert len(dry.events) == 2  # the write that set it and the one that superseded it
        done = _retain(gate)
        assert (done.values, done.events) == (1, dry.events)
        assert done.seq is not None
        assert done.counts["sealed_values"] == 1

        raw = raw_bytes(gate, request)
        assert old.encode() not in raw
        assert new.encode() in raw
        assert _email(gate, "Ada") == new  # the subject's key stays: current values read
        chain = gate.log.verify()
        assert chain.ok, chain
        assert chain.erased == len(done.events)
        report = gate.verify()  # the read model is what a replay makes of the log now
        assert report.ok, report.checks

        again = _retain(gate)
        assert (again.values, again.seq) == (0, None)
        _tamper(gate, done.events[0], request)
        assert not gate.log.verify().ok  # an expired event's edit is still caught


def test_a_value_set_again_is_current_and_never_expires(any_db: str | Path) -> None:
    with freeze_time(T0), Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(_document()).status == "published"
        assert person(gate, "Ada", email="first@mail").status == "written"
        assert person(gate, "Ada", email="second@mail").status == "written"
        assert person(gate, "Ada", email="first@mail").status == "written"
    with freeze_time(T0 + 40 * DAY), Gate.open(any_db, create=False, default_actor=AGENT) as gate:
        done = _retain(gate)
        assert done.values == 1  # second@mail; first@mail stands again
        assert _email(gate, "Ada") == "first@mail"
        assert gate.log.verify().ok


def test_a_personal_observation_is_forgotten_once_its_retention_has_passed(
    any_db: str | Path, request: pytest.FixtureRequest
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    with freeze_time(T0), Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(_document()).status == "published"
        heard = gate.record_observation(
            text=f"{marker} told us", source="chat", extraction_method="manual"
        )
        assert heard.status == "recorded", heard
    with freeze_time(T0 + 5 * DAY), Gate.open(any_db, create=False, default_actor=AGENT) as gate:
        kept = gate.record_observation(
            text="a recent remark", source="chat", extraction_method="manual"
        )
        assert kept.status == "recorded", kept
        assert _retain(gate, dry_run=True).values == 0
    with freeze_time(T0 + 8 * DAY), Gate.open(any_db, create=False, default_actor=AGENT) as gate:
        done = _retain(gate)
        assert done.values == 1
        assert done.counts["state_observations"] == 1
        raw = raw_bytes(gate, request)
        assert marker.encode() not in raw
        assert b"a recent remark" in raw
        found = gate.observation_reader().search_observations("recent", 5)
        assert [o.text for o in found.observations] == ["a recent remark"]
        chain = gate.log.verify()
        assert chain.ok, chain
        assert chain.erased == 1
        assert gate.verify().ok


@pytest.mark.parametrize(
    ("where", "change"),
    [
        ("role", lambda d: d["nodes"]["Person"]["properties"]["role"].update(retention="P1D")),
        ("observations", lambda d: d.update(personal_observations=False)),
    ],
)
def test_a_retention_on_values_that_are_not_sealed_is_refused_when_published(
    any_db: str | Path, where: str, change: Any
) -> None:
    document = _document()
    change(document)
    with Gate.open(any_db, default_actor=AGENT) as gate:
        refused = gate.publish_schema(document)
        assert isinstance(refused, Rejected), (where, refused)
        assert "a retention needs sealed values" in refused.message


def test_a_file_projection_reaching_a_retention_is_rebuilt_without_the_values(
    tmp_path: Path,
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    path = tmp_path / "graph.nt"
    with freeze_time(T0), Gate.open(tmp_path / "log.db", default_actor=AGENT) as gate:
        assert gate.publish_schema(_document()).status == "published"
        assert person(gate, "Ada", email=f"{marker}@mail").status == "written"
        assert person(gate, "Ada", email="now@mail").status == "written"
        projector = ProvProjector(path, log=gate.log)
        try:
            assert replay(gate.log, projector).notes == ()
            assert marker.encode() in path.read_bytes()  # the test can fail
            with freeze_time(T0 + 40 * DAY):
                assert _retain(gate).values == 1
            (note,) = replay(gate.log, projector).notes
            assert note.endswith("rebuilt from the log to let go of them")
        finally:
            projector.close()
    assert marker.encode() not in path.read_bytes()
    assert b"now@mail" in path.read_bytes()


def test_a_copy_continued_past_a_retention_expires_the_values_too(
    any_db: str | Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    if isinstance(any_db, Path):
        copy_at: str | Path = tmp_path / "copy.db"
    else:
        copy_at = request.getfixturevalue("postgres").create_database(f"c{os.urandom(4).hex()}")

    def copy(gate: Gate) -> None:
        with open_log(copy_at, inline=[StateProjection()]) as dest:
            copy_log(gate.log, dest)

    with freeze_time(T0), Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(_document()).status == "published"
        assert person(gate, "Ada", email=f"{marker}@mail").status == "written"
        assert person(gate, "Ada", email="now@mail").status == "written"
        copy(gate)
        with freeze_time(T0 + 40 * DAY):
            done = _retain(gate)
        assert done.values == 1
        copy(gate)
        head = gate.log.head()
    with Gate.open(copy_at, create=False, default_actor=AGENT) as copied:
        assert copied.log.head() == head
        assert _email(copied, "Ada") == "now@mail"
        report = copied.verify()  # the read model is what a replay makes of the log now
        assert report.ok, report.checks
        assert copied.log.verify().erased == len(done.events)
    if isinstance(copy_at, Path):
        wal = Path(f"{copy_at}-wal")
        raw = copy_at.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
        assert marker.encode() not in raw
        assert b"now@mail" in raw


def test_a_retention_of_no_time_is_refused_when_published(tmp_path: Path) -> None:
    document = _document()
    document["nodes"]["Person"]["properties"]["email"]["retention"] = "P0D"
    with Gate.open(tmp_path / "log.db", default_actor=AGENT) as gate:
        refused = gate.publish_schema(document)
        assert isinstance(refused, Rejected), refused
        assert "a retention must be positive" in refused.message
