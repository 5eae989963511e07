"""The graph store after a retention: it never held a superseded value live (a later write
replaced it), but ArcadeDB's index over the property keeps the old value in its files until
the index is rebuilt; applying the ``values.expired`` receipt rebuilds it."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from freezegun import freeze_time

from tests.conftest import AGENT, FIXTURES
from tests.projections.arcadedb import flush
from tests.projections.conftest import wipe
from writegate.gate import Gate
from writegate.gate.retention import RetainResult
from writegate.projections.graph import BoltTarget, GraphProjector
from writegate.projections.runner import replay

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _holding(root: Path, needle: bytes) -> list[str]:
    return sorted(str(f) for f in root.rglob("*") if f.is_file() and needle in f.read_bytes())


def test_an_expired_value_leaves_no_byte_in_an_index_of_the_graph_database(
    tmp_path: Path, arcadedb: BoltTarget, arcadedb_root: Path
) -> None:
    document: dict[str, Any] = yaml.safe_load((FIXTURES / "personal_schema.yaml").read_text())
    document["nodes"]["Person"]["properties"]["email"]["retention"] = "P30D"
    wipe(arcadedb)
    assert arcadedb.database is not None
    with arcadedb.driver() as driver, driver.session(database=arcadedb.database) as session:
        session.run("CREATE INDEX person_email IF NOT EXISTS FOR (n:Person) ON (n.email)").consume()
    old = f"MARK{os.urandom(6).hex()}@mail"
    files = arcadedb_root / "databases" / arcadedb.database
    with freeze_time(T0), Gate.open(tmp_path / "log.db", default_actor=AGENT) as gate:
        assert gate.publish_schema(document).status == "published"
        for email in (old, "now@mail"):
            written = gate.write_node(label="Person", merge_keys={"name": "Ada"},
                                      properties={"email": email}, source="test",
                                      extraction_method="manual")  # fmt: skip
            assert written.status == "written", written
        projector = GraphProjector(arcadedb, log=gate.log)
        try:
            replay(gate.log, projector)
            flush(arcadedb_root, arcadedb.password, arcadedb.database)
            assert any("idx" in f for f in _holding(files, old.encode()))  # the test can fail
            with freeze_time(T0 + timedelta(days=40)):
                done = gate.retain()
            assert isinstance(done, RetainResult)
            assert done.values == 1
            replay(gate.log, projector)
            flush(arcadedb_root, arcadedb.password, arcadedb.database)
            assert _holding(files, old.encode()) == []
            assert _holding(files, b"now@mail")
        finally:
            projector.close()
            with arcadedb.driver() as driver, driver.session(database=arcadedb.database) as s:
                s.run("DROP INDEX person_email IF EXISTS").consume()
