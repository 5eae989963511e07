"""``Gate.migrate``, on SQLite and PostgreSQL: a log written before its Person label was
declared personal is written again with every event kept, its personal values sealed and
its nodes named by pseudonyms, after which a receipt binds it to the old head, so anchors
taken before still prove; a log that fails ``verify`` is refused."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml

from tests.conftest import AGENT, FIXTURES, SEED_SCHEMA
from tests.personal import guessed, raw_bytes, works_at_acme
from tests.postgres import Server
from tests.projections.history import build_history
from writegate.eventlog import Actor
from writegate.eventlog.migrating import MIGRATED, old_hash
from writegate.eventlog.tables import APPEND_ONLY_TRIGGERS, create_tables
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult
from writegate.gate.migration import MigrateResult
from writegate.gate.models import Rejected
from writegate.gate.reads.reader import GraphReader

PERSONAL = yaml.safe_load((FIXTURES / "personal_schema.yaml").read_text())


def _plain() -> dict[str, Any]:
    """The same schema before anything in it was declared personal."""
    document = yaml.safe_load((FIXTURES / "personal_schema.yaml").read_text())
    document["nodes"]["Person"].pop("personal")
    document["nodes"]["Person"]["properties"]["email"].pop("personal")
    return dict(document)


@pytest.fixture
def db_path(any_db: str | Path) -> str | Path:
    return any_db


@pytest.fixture
def dest(db_path: str | Path, tmp_path: Path, request: pytest.FixtureRequest) -> str | Path:
    """Where the migrated log goes: a new file, or a new database on the same server."""
    if isinstance(db_path, Path):
        return tmp_path / "migrated.db"
    server: Server = request.getfixturevalue("postgres")
    return server.create_database(f"migrated_{os.urandom(4).hex()}")


@pytest.fixture
def old(db_path: str | Path) -> Iterator[tuple[Gate, str]]:
    """A log holding a person in the clear; then Person is declared personal."""
    marker = f"MARK{os.urandom(6).hex()}"
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(_plain()).status == "published"
        for properties in ({"email": f"{marker}@mail", "role": "engineer"}, {"role": "pilot"}):
            written = gate.write_node(
                label="Person",
                merge_keys={"name": marker},
                properties=properties,
                source="test",
                extraction_method="manual",
            )
            assert written.status == "written", written
        works_at_acme(gate, marker)
        assert gate.publish_schema(PERSONAL).status == "published"
        gate.refresh_schema_cache()
        yield gate, marker


def _stored(gate: Gate) -> str:
    events = gate.log.read(after_seq=0, limit=1000, sealed=True).events
    return "".join(str((e.streams, e.payload, e.request)) for e in events)


def test_a_migrated_log_keeps_every_event_with_its_personal_values_sealed(
    old: tuple[Gate, str], dest: str | Path
) -> None:
    gate, marker = old
    assert marker in _stored(gate)  # the test can fail
    before = list(gate.log.iter_events())
    anchor = gate.log.head()
    third = gate.log.hash_at(3)
    assert third is not None
    early = (3, third)

    done = gate.migrate(dest)
    assert isinstance(done, MigrateResult), done
    assert (done.from_head_seq, done.from_head_hash) == anchor
    assert done.subjects == 1
    assert done.resealed == 3  # the two node writes and the relationship
    with Gate.open(dest, default_actor=AGENT) as migrated:
        after = list(migrated.log.iter_events())
        assert [(e.seq, e.event_id, e.type, e.occurred_at) for e in after[:-1]] == [
            (e.seq, e.event_id, e.type, e.occurred_at) for e in before
        ]
        assert after[-1].type == MIGRATED
        assert after[-1].payload["from_head_hash"] == anchor[1]
        assert marker not in _stored(migrated)
        assert "Person~" in _stored(migrated)
        assert migrated.log.verify().ok
        assert migrated.verify().ok  # the read model is what a replay makes of it
        for seq, digest in (anchor, early):
            assert migrated.log.hash_at(seq) != digest  # chained anew
            assert old_hash(migrated.log, seq) == digest
            assert migrated.verify(expect_head=(seq, digest)).ok
        assert not migrated.verify(expect_head=(3, "0" * 64)).ok

        node = GraphReader(migrated.log, migrated.state).open_nodes(
            [{"label": "Person", "merge_keys": {"name": marker}}], migrated.current_schema()
        )
        assert node.nodes[0].properties == {
            "name": marker,
            "email": f"{marker}@mail",
            "role": "pilot",
        }
        forgotten = migrated.forget("Person", {"name": marker}, reason="asked")
        assert isinstance(forgotten, ForgetResult)
        assert forgotten.events == [2, 3, 5]
        assert migrated.verify().ok
    assert marker in _stored(gate)  # the old log is left as it was


def test_an_edited_kept_hash_fails_every_anchor_taken_before(
    old: tuple[Gate, str], dest: str | Path
) -> None:
    gate, _ = old
    anchor = gate.log.head()
    assert isinstance(gate.migrate(dest), MigrateResult)
    with Gate.open(dest, default_actor=AGENT) as migrated:
        assert migrated.verify(expect_head=anchor).ok
        _edit(dest, "UPDATE migrated_hashes SET hash = %s WHERE seq = 2", "0" * 64)
        assert old_hash(migrated.log, anchor[0]) is None
        assert not migrated.verify(expect_head=anchor).ok
        assert not migrated.verify(expect_head=(2, "0" * 64)).ok


def test_a_log_that_fails_verify_is_not_migrated(
    old: tuple[Gate, str], db_path: str | Path, dest: str | Path
) -> None:
    gate, _ = old
    _tamper(db_path, 2)
    refused = gate.migrate(dest)
    assert isinstance(refused, Rejected)
    assert "fails verify" in refused.message
    if isinstance(dest, Path):
        assert not dest.exists()
    else:
        with Gate.open(dest) as untouched:
            assert untouched.log.head()[0] == 0


def test_a_node_written_before_and_after_it_became_personal_is_refused(
    old: tuple[Gate, str], dest: str | Path
) -> None:
    gate, marker = old
    again = gate.write_node(
        label="Person",
        merge_keys={"name": marker},
        source="test",
        extraction_method="manual",
        resolution="new",  # not the clear node it resembles: a pseudonym of its own
    )
    assert again.status == "written", again
    refused = gate.migrate(dest)
    assert isinstance(refused, Rejected)
    assert "written both before and after" in refused.message


def _edit(db: str | Path, sql: str, *params: object) -> None:
    """A statement run on the database behind the log's back."""
    if isinstance(db, Path):
        with sqlite3.connect(db, isolation_level=None) as conn:
            conn.execute(sql.replace("%s", "?"), params)
        return
    with psycopg.connect(db, autocommit=True) as pg:
        pg.execute(sql.encode(), params)


def _tamper(db: str | Path, seq: int) -> None:
    forged = '{"text":"forged"}'
    if isinstance(db, Path):
        conn = sqlite3.connect(db, isolation_level=None)
        try:
            conn.execute("BEGIN")
            for trigger in APPEND_ONLY_TRIGGERS:
                conn.execute(f"DROP TRIGGER {trigger}")
            conn.execute("UPDATE events SET payload = ? WHERE seq = ?", (forged, seq))
            create_tables(conn)
            conn.execute("COMMIT")
        finally:
            conn.close()
        return
    with psycopg.connect(db) as pg:
        pg.execute("ALTER TABLE events DISABLE TRIGGER USER")
        pg.execute("UPDATE events SET payload = %s WHERE seq = %s", (forged, seq))
        pg.execute("ALTER TABLE events ENABLE TRIGGER USER")


def test_held_approved_and_deleted_writes_are_sealed_too(
    db_path: str | Path, dest: str | Path
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"
    plain = _plain()
    plain["nodes"]["Person"]["review_below"] = 0.5
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(plain).status == "published"
        held = gate.write_node(
            label="Person",
            merge_keys={"name": marker},
            properties={"email": f"{marker}@mail"},
            source="chat",
            extraction_method="llm",
            reliability=0.4,
        )
        assert held.status == "proposed", held
        decided = gate.reviews.decide(held.proposal, "approve", Actor(agent="reviewer"))
        assert decided.status == "decided", decided
        gone = gate.delete_node(
            label="Person", merge_keys={"name": marker}, source="test", extraction_method="manual"
        )
        assert gone.status == "deleted", gone
        assert gate.publish_schema(PERSONAL).status == "published"
        gate.refresh_schema_cache()
        done = gate.migrate(dest)
        assert isinstance(done, MigrateResult), done
        assert done.resealed == 3  # proposed, written (approved), deleted
    with Gate.open(dest, default_actor=AGENT) as migrated:
        assert marker not in _stored(migrated)
        assert migrated.verify().ok
        forgotten = migrated.forget("Person", {"name": marker}, reason="asked")
        assert isinstance(forgotten, ForgetResult)
        assert forgotten.events == [2, 4, 5]
        assert migrated.verify().ok


def test_a_history_of_stubs_remaps_batches_and_deletions_migrates_and_forgets(
    db_path: str | Path, dest: str | Path
) -> None:
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(SEED_SCHEMA).status == "published"
        build_history(gate)
        personal = yaml.safe_load(SEED_SCHEMA.read_text())
        personal["nodes"]["Person"]["personal"] = True
        assert gate.publish_schema(personal).status == "published"
        gate.refresh_schema_cache()
        done = gate.migrate(dest)
        assert isinstance(done, MigrateResult), done
        assert done.subjects == 4  # Alice, Bob, Carol and Dan
    with Gate.open(dest, default_actor=AGENT) as migrated:
        assert "Alice" not in _stored(migrated)
        assert migrated.verify().ok
        for name in ("Carol", "Alice", "Bob"):
            assert isinstance(migrated.forget("Person", {"name": name}, reason="x"), ForgetResult)
            report = migrated.verify()
            assert report.ok, (name, report.checks)


def test_a_migrated_log_answers_a_retry_and_keeps_the_refusals(
    db_path: str | Path, dest: str | Path
) -> None:
    def ada(gate: Gate) -> Any:
        return gate.write_node(label="Company", merge_keys={"name": "Acme"}, source="test",
                               extraction_method="manual", idempotency_key="k-1")  # fmt: skip

    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(PERSONAL).status == "published"
        first = ada(gate)
        assert first.status == "written", first
        refused = gate.write_node(label="Person", merge_keys={"name": "Ada"},
                                  properties={"nickname": "x"}, source="test",
                                  extraction_method="manual")  # fmt: skip
        assert isinstance(refused, Rejected)
        kept = [r.model_dump(exclude={"id"}) for r in gate.rejections.read()]
        assert len(kept) == 1
        done = gate.migrate(dest)
        assert isinstance(done, MigrateResult), done
        assert (done.idempotency, done.rejections) == (1, 1)
    with Gate.open(dest, default_actor=AGENT) as migrated:
        head = migrated.log.head()
        again = ada(migrated)
        assert again.model_dump() == first.model_dump()  # the first append's answer
        assert migrated.log.head() == head  # nothing appended
        assert [r.model_dump(exclude={"id"}) for r in migrated.rejections.read()] == kept


def test_a_migrated_record_of_a_personal_write_holds_no_digest_to_guess_it_from(
    db_path: str | Path, dest: str | Path
) -> None:
    marker = f"MARK{os.urandom(6).hex()}"

    def ada(gate: Gate) -> Any:
        return gate.write_node(label="Person", merge_keys={"name": marker}, source="test",
                               extraction_method="manual", idempotency_key="p-1")  # fmt: skip

    def acme(gate: Gate) -> Any:
        return gate.write_node(label="Company", merge_keys={"name": "Acme"}, source="test",
                               extraction_method="manual", idempotency_key="c-1")  # fmt: skip

    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(_plain()).status == "published"
        assert ada(gate).status == "written"
        company = acme(gate)
        assert gate.publish_schema(PERSONAL).status == "published"
        gate.refresh_schema_cache()
        assert isinstance(gate.migrate(dest), MigrateResult)
    with Gate.open(dest, default_actor=AGENT) as migrated:
        assert guessed(migrated, ["Ada", marker]) == set()
        head = migrated.log.head()
        retried = ada(migrated)
        assert isinstance(retried, Rejected)
        assert retried.error_code == "IDEMPOTENCY_KEY_REUSED"
        assert acme(migrated).model_dump() == company.model_dump()  # nothing personal: kept
        assert migrated.log.head() == head


def test_a_gate_migrates_by_the_schema_it_has_just_published(
    db_path: str | Path, dest: str | Path
) -> None:
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(_plain()).status == "published"
        assert gate.write_node(label="Person", merge_keys={"name": "Ada"}, source="test",
                               extraction_method="manual").status == "written"  # fmt: skip
        published = gate.publish_schema(PERSONAL)
        assert published.status == "published"
        assert gate.current_schema().version == published.schema_version
        done = gate.migrate(dest)
        assert isinstance(done, MigrateResult), done
        assert done.resealed == 1  # Ada's write, sealed: not the old schema's "nothing"


def test_a_refusal_of_a_persons_write_is_sealed_in_the_migrated_log(
    db_path: str | Path, dest: str | Path, request: pytest.FixtureRequest
) -> None:
    """Refused before Person was personal, kept in the clear; sealed as it is carried, so
    forgetting the person takes it, and no byte of the person is left."""
    marker = f"MARK{os.urandom(6).hex()}"
    with Gate.open(db_path, default_actor=AGENT) as gate:
        assert gate.publish_schema(_plain()).status == "published"
        person: dict[str, Any] = {"label": "Person", "merge_keys": {"name": marker}}
        claim: dict[str, Any] = {"source": "test", "extraction_method": "manual"}
        assert gate.write_node(**person, properties={"role": "pilot"}, **claim).status == "written"
        refused = gate.write_node(
            label="Person",
            merge_keys={"name": marker},
            properties={"email": f"{marker}@mail", "shoe": 41},  # no such property
            source="test",
            extraction_method="manual",
        )
        assert isinstance(refused, Rejected), refused
        works_at_acme(gate, marker)
        assert gate.publish_schema(PERSONAL).status == "published"
        gate.refresh_schema_cache()
        done = gate.migrate(dest)
        assert isinstance(done, MigrateResult), done
        assert done.rejections == 1
    with Gate.open(dest, default_actor=AGENT) as migrated:
        with migrated.log.snapshot() as conn:
            stored = conn.execute("SELECT message, request FROM rejections").fetchall()
        assert len(stored) == 1
        assert marker not in str(stored)  # sealed, as the write it refused would be
        (read,) = migrated.rejections.read()  # an auditor still reads it, until forgotten
        assert marker in read.request
        forgotten = migrated.forget("Person", {"name": marker}, reason="asked")
        assert isinstance(forgotten, ForgetResult), forgotten
        assert forgotten.counts["rejections"] == 1
        assert list(migrated.rejections.read()) == []
        if isinstance(dest, Path):  # (raw_bytes reads a server's first database, not dest)
            assert marker.encode() not in raw_bytes(migrated, request)
