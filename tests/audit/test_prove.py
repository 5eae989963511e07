"""``writegate prove``: a graph_query answer saved over MCP is proven against a copy of the
log taken later, fails naming the event once a cited event is edited, and says which fact
is no longer current after a later deletion (issue 43), on both backends."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.conftest import SEED_SCHEMA
from tests.projections.history import ADA, prov
from tests.server.harness import stdio_agent
from writegate.eventlog.tables import APPEND_ONLY_TRIGGERS, create_tables
from writegate.gate import Gate, ObservationResult

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _works(name: str) -> dict[str, object]:
    return {
        "type": "WORKS_FOR",
        "from_label": "Person",
        "from_keys": {"name": name},
        "to_label": "Organization",
        "to_keys": {"name": "Initech"},
        "endpoint_policy": "merge_endpoints",
        **prov(),
    }


def _copy(db: str | Path, dest: Path) -> None:
    """A copy of the log as a SQLite file: a backup of a file, a copy of PostgreSQL."""
    if isinstance(db, Path):
        writegate(db, "backup", str(dest))
    else:
        writegate(db, "copy", db, str(dest))


def _tamper(db: Path, seq: int) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN")
        for trigger in APPEND_ONLY_TRIGGERS:
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute(
            "UPDATE events SET payload = replace(payload, 'Initech', 'Initrode') WHERE seq = ?",
            (seq,),
        )
        create_tables(conn)
        conn.execute("COMMIT")
    finally:
        conn.close()


async def test_an_answer_is_proven_later_and_fails_once_tampered(
    any_db: str | Path, tmp_path: Path
) -> None:
    with Gate.open(any_db) as gate:
        assert gate.publish_schema(SEED_SCHEMA).status == "published"
        heard = gate.record_observation(
            text="Alice works for Initech.",
            source="https://example.org/team",
            extraction_method="parsed",
        )
        assert isinstance(heard, ObservationResult), heard
        for name in ("Alice", "Bob"):
            cites = [heard.observation_id] if name == "Alice" else None
            said = gate.write_relationship(actor=ADA, observations=cites, **_works(name))  # type: ignore[arg-type]
            assert said.status == "written", said
    tokens = {"WRITEGATE_TOKENS": str(tmp_path / "tokens.json")}  # PostgreSQL's has no file
    async with stdio_agent(any_db, "reader-1", ("reader",), env=tokens) as agent:
        found = await agent.call("graph_query", {"query": "Initech", "topK": 5})
    assert not found.is_error, found.data
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps(found.data))
    at = found.data["answeredAt"]
    triplets = found.data["triplets"]
    assert len(triplets) == 2
    assert all(t["provenance"]["seq"] <= at["seq"] for t in triplets)
    with Gate.open(any_db) as gate:  # the log grows: Bob's fact is taken back
        gone = {k: v for k, v in _works("Bob").items() if k != "endpoint_policy"}
        assert gate.delete_relationship(actor=ADA, **gone).status == "deleted"  # type: ignore[arg-type]
        gate.write_relationship(actor=ADA, **_works("Carol"))  # type: ignore[arg-type]
    backup = tmp_path / "backup.db"
    _copy(any_db, backup)

    proven = json.loads(writegate(backup, "prove", str(answer), "--format", "json").stdout)
    assert proven["ok"], proven
    assert proven["seq"] == at["seq"]
    facts = {f["fact"].split(" ")[0]: f for f in proven["facts"]}
    alice = facts['Person{"name":"Alice"}']
    assert alice["current"]
    assert alice["citations"] == [heard.event_id]
    bob = facts['Person{"name":"Bob"}']
    assert not bob["current"]
    assert bob["replaced_how"] == "relationship.deleted"
    assert bob["replaced_at"] > at["seq"]
    shown = writegate(backup, "prove", str(answer)).stdout
    assert "no longer current (relationship.deleted" in shown
    assert "Bob" in shown

    cited = triplets[0]["provenance"]
    _tamper(backup, cited["seq"])
    failed = writegate(backup, "prove", str(answer), code=1)
    assert f"not proven: event {cited['eventId']} (seq {cited['seq']})" in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1


async def test_an_answer_from_another_log_is_not_proven(tmp_path: Path) -> None:
    first, other = tmp_path / "a.db", tmp_path / "b.db"
    for db, name in ((first, "Alice"), (other, "Dan")):
        with Gate.open(db) as gate:
            gate.publish_schema(SEED_SCHEMA)
            gate.write_relationship(actor=ADA, **_works(name))  # type: ignore[arg-type]
    async with stdio_agent(first, "reader-1", ("reader",)) as agent:
        found = await agent.call("graph_query", {"query": "Initech"})
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps(found.data))
    failed = writegate(other, "prove", str(answer), code=1)
    assert "not proven:" in failed.stderr
    writegate(first, "prove", str(answer))


async def test_a_file_that_is_no_answer_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
    no_triplet = '{"answeredAt": {"seq": 0, "headHash": ""}, "triplets": [{"provenance": {}}]}'
    for text in ('{"answeredAt": {"seq": "x"}}', no_triplet, "[1]", "not json"):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        failed = writegate(db, "prove", str(bad), code=1)
        assert "Traceback" not in failed.stderr
        assert len(failed.stderr.strip().splitlines()) == 1, failed.stderr
