"""A graph server's store is rebuilt in place (no staging): a rebuild job killed half way
is resumed from the store's own checkpoint, not reset again, and ends with the graph an
uninterrupted rebuild makes (ArcadeDB over Bolt, a real ``writegate`` process)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.cli.conftest import writegate
from tests.conftest import SEED_SCHEMA
from tests.jobs.test_rebuild_jobs import half_way, job_on
from tests.server.harness import WRITEGATE
from writegate.gate import Gate
from writegate.projections.graph import BoltTarget

PEOPLE = 1200


def people_in(bolt: BoltTarget) -> list[dict[str, Any]]:
    with bolt.driver() as driver, driver.session(database=bolt.database) as session:
        rows = session.run("MATCH (n:Person) RETURN properties(n) AS p ORDER BY n.name")
        return [dict(row["p"]) for row in rows]


def test_a_graph_rebuild_killed_half_way_resumes_in_place_from_its_checkpoint(
    tmp_path: Path, bolt: BoltTarget
) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db) as gate:
        gate.publish_schema(SEED_SCHEMA)
        items = [
            {
                "op": "write_node",
                "label": "Person",
                "merge_keys": {"name": f"person {i:04}"},
                "properties": {"age": i % 90},
                "source": "census",
                "extraction_method": "manual",
                "reliability": 0.9,
            }
            for i in range(PEOPLE)
        ]
        assert gate.write_batch(items=items).status == "written"
    toml = tmp_path / "writegate.toml"
    toml.write_text(
        f'[projections.graph]\nkind = "graph"\nuri = "{bolt.uri}"\nuser = "{bolt.user}"\n'
        f'database = "{bolt.database}"\ndialect = "{bolt.dialect}"\nbatch = 50\n'
    )
    env = {"WRITEGATE_PROJECTIONS__GRAPH__PASSWORD": bolt.password}
    writegate(db, "--config", str(toml), "rebuild", "graph", env=env)
    uninterrupted = people_in(bolt)
    assert len(uninterrupted) == PEOPLE

    rebuilding = subprocess.Popen(
        [WRITEGATE, "--db", str(db), "--config", str(toml), "rebuild", "graph"],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        caught = half_way(db, "graph", rebuilding, past=0)
        os.kill(rebuilding.pid, signal.SIGKILL)
    finally:
        rebuilding.kill()
        rebuilding.wait()
    assert 0 < len(people_in(bolt)) < PEOPLE  # reset and half rebuilt: in place

    resumed = writegate(db, "--config", str(toml), "rebuild", "graph", env=env)
    ended = job_on(db, "graph")
    assert ended is not None
    assert (ended.id, ended.state, ended.attempts) == (caught.id, "completed", 2)
    applied = int(resumed.stdout.split("applied ")[1].split(" event")[0].replace(",", ""))
    assert 0 < applied < ended.total  # from its checkpoint, not reset again
    assert people_in(bolt) == uninterrupted
