"""The text index merged as a job (``writegate optimize``, ``job_start``'s ``optimize``), on
SQLite and on PostgreSQL: it runs, every answer is the same after it, and on SQLite each
kind's FTS5 table is left as one segment."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.conftest import AGENT, SEED_SCHEMA, person
from writegate.cli.optimize import optimize_kind
from writegate.gate import Gate
from writegate.gate.jobs import Jobs
from writegate.projections.search.bm25 import KINDS

QUESTIONS = ("ada", "turing lovelace", "knows ada", "person 7", "notes about ada")


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


def filled(gate: Gate) -> None:
    """Writes one at a time: each adds its own segment to the index."""
    names = ["Ada Lovelace", "Alan Turing", *(f"Person {i}" for i in range(20))]
    for name in names:
        assert gate.write_node(**person(name)).status == "written"
    for other in names[1:8]:
        written = gate.write_relationship(
            type="KNOWS",
            from_label="Person",
            from_keys={"name": "Ada Lovelace"},
            to_label="Person",
            to_keys={"name": other},
            source="test",
            extraction_method="manual",
        )
        assert written.status == "written", written
    for n in range(3):
        said = gate.record_observation(
            text=f"notes about Ada, page {n}", source="test", extraction_method="manual"
        )
        assert said.status == "recorded", said


def answers(gate: Gate) -> list[str]:
    reader, observations = gate.reader(), gate.observation_reader()
    return [
        answer.model_dump_json()
        for q in QUESTIONS
        for answer in (
            reader.search_nodes(q, neighbors=100),
            reader.graph_query(q),
            observations.search_observations(q),
        )
    ]


def segments(gate: Gate) -> dict[str, int]:
    conn = gate.log.connection()
    assert isinstance(conn, sqlite3.Connection)
    sql = "SELECT count(DISTINCT segid) FROM search_fts_{}_idx"
    return {kind: conn.execute(sql.format(kind)).fetchone()[0] for kind in KINDS}


def test_the_job_merges_the_index_and_changes_no_answer(gate: Gate) -> None:
    filled(gate)
    before = answers(gate)
    on_sqlite = isinstance(gate.log.connection(), sqlite3.Connection)
    if on_sqlite:
        assert segments(gate)["node"] > 1
    jobs = Jobs(gate.log, {"optimize": optimize_kind(gate)})
    job = jobs.run(jobs.start(AGENT, "optimize", gate.log.describe(), {}))
    assert job.state == "completed", job.outcome
    assert job.done == job.total == (len(KINDS) if on_sqlite else 1)
    assert job.outcome is not None
    assert job.outcome.startswith(f"optimized the text index of {gate.log.describe()}")
    assert answers(gate) == before
    if on_sqlite:
        assert segments(gate) == dict.fromkeys(KINDS, 1)
    assert gate.state.equals_replay(gate.log, gate.log.connection())


def test_writegate_optimize_runs_it_as_a_job(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db, default_actor=AGENT) as gate:
        gate.publish_schema(SEED_SCHEMA)
        filled(gate)
    done = writegate(db, "optimize")
    assert done.stdout.startswith(f"optimized the text index of {db}: 3 parts merged in")
    listed = json.loads(writegate(db, "jobs", "list", "--format", "json").stdout)
    assert [(j["kind"], j["state"]) for j in listed] == [("optimize", "completed")]
