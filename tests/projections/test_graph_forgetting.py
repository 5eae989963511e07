"""The graph store after a forgetting: a personal node is found by its pseudonym, the live
store takes the subject's values out when it applies the receipt, what is left is what a
rebuild makes of the log, and no byte of the values stays in the database's files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import AGENT, FIXTURES, SEED_SCHEMA
from tests.personal import works_at_acme
from tests.projections.arcadedb import flush, server_command
from tests.projections.conftest import wipe
from tests.projections.history import build_history
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult
from writegate.projections.contract import ProjectionError
from writegate.projections.graph import BoltTarget, GraphProjector
from writegate.projections.runner import rebuild, replay

SCHEMA = FIXTURES / "personal_schema.yaml"


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


@pytest.fixture
def people(db_path: str | Path) -> Iterator[Gate]:
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        yield gate


def _write(gate: Gate, marker: str) -> None:
    """Two people working at one company, one of them written twice."""
    for name, properties in (
        (marker, {"email": f"{marker}@mail", "role": "engineer"}),
        (marker, {"email": f"{marker}@other"}),
        ("Ada", {"email": "ada@mail", "role": "admiral"}),
    ):
        written = gate.write_node(
            label="Person",
            merge_keys={"name": name},
            properties=properties,
            source="test",
            extraction_method="manual",
        )
        assert written.status == "written", written
    works_at_acme(gate, marker, "Ada")


def _people(snapshot: Any) -> dict[str, dict[str, Any]]:
    """role -> the properties of the Person node holding it."""
    return {p["role"]: p for labels, p in snapshot["nodes"] if labels == ["Person"]}


def test_a_forgotten_person_leaves_the_live_graph_as_a_rebuild_makes_it(
    people: Gate, bolt: BoltTarget
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    _write(people, marker)
    projector = GraphProjector(bolt, log=people.log)
    try:
        replay(people.log, projector)
        before = _people(projector.snapshot())
        assert before["engineer"]["name"] == marker  # the test can fail
        assert before["engineer"]["email"] == f"{marker}@other"

        done = people.forget("Person", {"name": marker}, reason="asked by the person")
        assert isinstance(done, ForgetResult)
        assert done.seq is not None
        replay(people.log, projector)
        patched = projector.snapshot()
        assert marker not in repr(patched)
        engineer, admiral = _people(patched)["engineer"], _people(patched)["admiral"]
        assert "name" not in engineer
        assert "email" not in engineer
        assert engineer["_pseudonym"] == before["engineer"]["_pseudonym"]
        assert (admiral["name"], admiral["email"]) == ("Ada", "ada@mail")
        works = [(a, b["name"]) for kind, _, a, _, b, _ in patched["relationships"]
                 if kind == "WORKS_AT"]  # fmt: skip
        assert sorted(a.get("role") for a, company in works if company == "Acme") == [
            "admiral",
            "engineer",
        ]

        rebuild(people.log, projector)
        assert projector.snapshot() == patched
    finally:
        projector.close()


def test_a_forgotten_stub_keeps_its_relationship_and_loses_its_keys(
    people: Gate, bolt: BoltTarget
) -> None:
    _write(people, "Grace")
    marker = f"MARK{os.urandom(6).hex()}"
    linked = people.write_relationship(
        type="WORKS_AT",
        from_label="Person",
        from_keys={"name": marker},
        to_label="Company",
        to_keys={"name": "Acme"},
        source="test",
        extraction_method="manual",
        endpoint_policy="merge_endpoints",
    )
    assert linked.status == "written", linked
    projector = GraphProjector(bolt, log=people.log)
    try:
        replay(people.log, projector)
        assert marker in repr(projector.snapshot())  # the test can fail
        people.forget("Person", {"name": marker}, reason="asked")
        replay(people.log, projector)
        patched = projector.snapshot()
        assert marker not in repr(patched)
        stubs = [a for kind, _, a, _, _, _ in patched["relationships"] if a.get("_stub")]
        assert len(stubs) == 1
        assert "name" not in stubs[0]
        rebuild(people.log, projector)
        assert projector.snapshot() == patched
    finally:
        projector.close()


def test_a_relationship_of_personal_nodes_is_deleted_alone(people: Gate, bolt: BoltTarget) -> None:
    _write(people, "Grace")
    deleted = people.delete_relationship(
        type="WORKS_AT",
        from_label="Person",
        from_keys={"name": "Ada"},
        to_label="Company",
        to_keys={"name": "Acme"},
        source="test",
        extraction_method="manual",
    )
    assert deleted.status == "deleted", deleted
    projector = GraphProjector(bolt, log=people.log)
    try:
        replay(people.log, projector)
        works = [a["name"] for kind, _, a, _, _, _ in projector.snapshot()["relationships"]
                 if kind == "WORKS_AT"]  # fmt: skip
    finally:
        projector.close()
    assert works == ["Grace"]


def test_a_graph_without_its_log_refuses_a_forgetting_in_one_line(
    people: Gate, bolt: BoltTarget
) -> None:
    _write(people, "Grace")
    people.forget("Person", {"name": "Grace"}, reason="asked")
    projector = GraphProjector(bolt)
    try:
        with pytest.raises(ProjectionError, match="rebuild the graph from the log"):
            replay(people.log, projector)
    finally:
        projector.close()


def _holding(root: Path, needle: bytes) -> list[str]:
    """The files under ``root`` holding ``needle``."""
    return sorted(str(f) for f in root.rglob("*") if f.is_file() and needle in f.read_bytes())


def test_no_byte_of_a_forgotten_person_stays_in_the_graph_databases_files(
    people: Gate, arcadedb: BoltTarget, arcadedb_root: Path
) -> None:
    """In a database of its own, holding nothing but this test's graph (the shared one, with
    an index on the key, is the test above)."""
    database = f"forget{os.urandom(4).hex()}"
    server_command(arcadedb_root, arcadedb.password, f"create database {database}")
    own = replace(arcadedb, database=database)
    marker = f"MARK{os.urandom(6).hex()}"
    _write(people, marker)
    projector = GraphProjector(own, log=people.log)
    try:
        replay(people.log, projector)
        flush(arcadedb_root, arcadedb.password, database)
        files = arcadedb_root / "databases" / database
        assert _holding(files, marker.encode())  # the test can fail
        people.forget("Person", {"name": marker}, reason="asked")
        replay(people.log, projector)
    finally:
        projector.close()
    flush(arcadedb_root, arcadedb.password, database)  # what an operator does after forget
    assert _holding(files, marker.encode()) == []
    assert _holding(files, b"ada@mail")


def test_a_forgotten_person_leaves_no_byte_in_an_index_of_the_shared_graph_database(
    people: Gate, arcadedb: BoltTarget, arcadedb_root: Path
) -> None:
    """In the database the other tests share, with an index on the personal merge key (as an
    operator makes one), whose files keep a key set to null until the index is rebuilt:
    applying the receipt rebuilds the indexes over the keys it set to null."""
    wipe(arcadedb)
    assert arcadedb.database is not None
    with arcadedb.driver() as driver, driver.session(database=arcadedb.database) as session:
        session.run("CREATE INDEX person_name IF NOT EXISTS FOR (n:Person) ON (n.name)").consume()
    marker = f"MARK{os.urandom(6).hex()}"
    _write(people, marker)
    projector = GraphProjector(arcadedb, log=people.log)
    files = arcadedb_root / "databases" / arcadedb.database
    try:
        replay(people.log, projector)
        flush(arcadedb_root, arcadedb.password, arcadedb.database)
        assert any("idx" in f for f in _holding(files, marker.encode()))  # the test can fail
        people.forget("Person", {"name": marker}, reason="asked")
        replay(people.log, projector)
        flush(arcadedb_root, arcadedb.password, arcadedb.database)
        assert _holding(files, marker.encode()) == []
        assert _holding(files, b"ada@mail")
    finally:
        projector.close()
        with arcadedb.driver() as driver, driver.session(database=arcadedb.database) as session:
            session.run("DROP INDEX person_name IF EXISTS").consume()  # the others' as it was


def test_a_forgotten_history_leaves_the_graph_as_a_rebuild_makes_it(
    db_path: str | Path, bolt: BoltTarget
) -> None:
    personal = yaml.safe_load(SEED_SCHEMA.read_text())
    personal["nodes"]["Person"]["personal"] = True
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(personal).status == "published"
        build_history(gate)  # stubs, a remap, a batch, deletions of a node and a relationship
        projector = GraphProjector(bolt, log=gate.log)
        try:
            replay(gate.log, projector)
            assert "Carol" in repr(projector.snapshot())  # the test can fail
            for name in ("Carol", "Alice"):
                gate.forget("Person", {"name": name}, reason="asked")
            replay(gate.log, projector)
            patched = projector.snapshot()
            assert "Carol" not in repr(patched)
            assert "Alice" not in repr(patched)
            assert "Bob" in repr(patched)
            rebuild(gate.log, projector)
            assert projector.snapshot() == patched
        finally:
            projector.close()
