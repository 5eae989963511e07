"""The log cannot be edited through SQL, and an edit made anyway is caught by verify."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from tests.conftest import person
from writegate.cli.main import cli
from writegate.eventlog import EventLog
from writegate.eventlog.canonical import chain_hash, event_body
from writegate.eventlog.tables import APPEND_ONLY_TRIGGERS
from writegate.gate import Gate


def file_of(gate: Gate) -> Path:
    """The log's SQLite file: these are SQLite's own defences (PostgreSQL's are tested in
    ``test_postgres_roles``)."""
    assert isinstance(gate.log, EventLog)
    return gate.log.path


@pytest.fixture
def written(gate: Gate) -> Gate:
    for name in ("Alice", "Bob", "Carol"):
        gate.write_node(**person(name))
    gate.write_node(**person("Dan", idempotency_key="dan-1"))
    return gate


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET payload = '{}' WHERE seq = 2",
        "DELETE FROM events WHERE seq = 3",
        "DELETE FROM events",
        "UPDATE event_streams SET version = 9",
        "DELETE FROM idempotency",
        "INSERT INTO events (seq, event_id, type, occurred_at, actor, streams, payload, provenance,"
        " request, idempotency_key, prev_hash, hash) VALUES (99, 'x', 't', 'now', '{}', '{}', '{}',"
        " 'null', 'null', NULL, 'bogus', 'bogus')",
    ],
)
def test_sql_cannot_rewrite_history(written: Gate, statement: str) -> None:
    conn = sqlite3.connect(file_of(written))
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(statement)
    conn.close()
    assert written.log.verify().ok


def _tamper(path: object, *statements: str) -> None:
    conn = sqlite3.connect(str(path), isolation_level=None)
    for trigger in APPEND_ONLY_TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for statement in statements:
        conn.execute(statement)
    conn.close()


def test_verify_names_the_altered_seq(written: Gate) -> None:
    _tamper(
        file_of(written),
        """UPDATE events SET payload = json_set(payload, '$.properties.age', 99) WHERE seq = 3""",
    )
    report = written.log.verify()
    assert not report.ok
    assert report.first_bad_seq == 3
    assert "altered" in (report.problem or "")
    assert written.log.missing_triggers() == list(APPEND_ONLY_TRIGGERS)


def test_verify_names_a_deleted_seq(written: Gate) -> None:
    _tamper(file_of(written), "DELETE FROM events WHERE seq = 2")
    report = written.log.verify()
    assert (report.ok, report.first_bad_seq) == (False, 2)


def test_verify_catches_a_rehashed_event_by_the_next_link(written: Gate) -> None:
    """Re-computing an altered event's own hash still breaks the link to its successor."""

    conn = sqlite3.connect(file_of(written))
    row = conn.execute("SELECT * FROM events WHERE seq = 3").fetchone()
    conn.close()
    payload = orjson.loads(row[6])
    payload["properties"]["age"] = 99
    new_payload = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS).decode()
    parts = {
        "actor": row[4].encode(),
        "event_id": orjson.dumps(row[1]),
        "idempotency_key": orjson.dumps(row[9]),
        "occurred_at": orjson.dumps(row[3]),
        "payload": new_payload.encode(),
        "prev_hash": orjson.dumps(row[10]),
        "provenance": row[7].encode(),
        "request": row[8].encode(),
        "seq": b"3",
        "streams": row[5].encode(),
        "type": orjson.dumps(row[2]),
    }
    new_hash = chain_hash(row[10], event_body(parts))
    _tamper(
        file_of(written),
        f"UPDATE events SET payload = '{new_payload}', hash = '{new_hash}' WHERE seq = 3",
    )
    report = written.log.verify()
    assert (report.ok, report.first_bad_seq) == (False, 4)


def test_cli_verify_fails_with_one_line_naming_the_seq(written: Gate) -> None:
    written.close()
    _tamper(file_of(written), "UPDATE events SET type = 'node.deleted' WHERE seq = 4")
    result = CliRunner().invoke(cli, ["--db", str(file_of(written)), "verify"])
    assert result.exit_code == 1
    assert "error: hash chain: chain broken at seq 4" in result.output


def test_cli_verify_reports_dropped_triggers_and_edited_state(written: Gate) -> None:
    written.close()
    _tamper(file_of(written))  # triggers dropped, nothing else
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", str(file_of(written)), "verify"])
    assert result.exit_code == 1
    assert "append-only triggers: missing" in result.output

    conn = sqlite3.connect(file_of(written))
    conn.execute("""UPDATE state_nodes SET properties = '{"name":"Alice","age":1}'
                    WHERE identity = 'Person{"name":"Alice"}'""")
    conn.commit()
    conn.close()
    result = runner.invoke(cli, ["--db", str(file_of(written)), "verify"])
    assert "FAIL  state read model: differs from a replay" in result.output


def test_opening_does_not_repair_dropped_triggers(written: Gate) -> None:
    written.close()
    _tamper(file_of(written))
    with Gate.open(file_of(written), create=False) as reopened:
        assert reopened.log.missing_triggers() == list(APPEND_ONLY_TRIGGERS)
