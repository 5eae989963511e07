"""Nothing of a forgotten person is left behind (issue 40): not in the PROV-O file, whose
replay and rebuild let go of the person's values (and whose checkpoint never passes a
forgetting it failed to let go of); not in a backup brought up to date with ``copy``, whose
refusals forget the person as the log's do; not in a refusal of a retry after the
forgetting, which is sealed as the write it refuses would be and found by the next
``forget``; and no file holding graph data — the log, its ``-wal`` and ``-shm``, a copy, a
backup — is readable by anyone but its owner, whatever the umask."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import as_json, writegate
from tests.conftest import AGENT, FIXTURES
from tests.personal import CLAIM, raw_bytes
from writegate.eventlog import EventLog
from writegate.gate import Gate
from writegate.gate.forgetting import ForgetResult
from writegate.gate.models import Rejected
from writegate.projections.prov import ProvProjector
from writegate.projections.runner import follow

SCHEMA = FIXTURES / "personal_schema.yaml"


@pytest.fixture
def marker() -> str:
    return f"MARK{os.urandom(6).hex()}"


def _on_disk(db: Path) -> bytes:
    """Every byte a SQLite log keeps: its file and whatever SQLite keeps beside it."""
    return b"".join(p.read_bytes() for p in sorted(db.parent.glob(f"{db.name}*")))


# -- 1. the PROV-O projection --------------------------------------------------------------


def _observed_person(
    tmp_path: Path, marker: str, db: str | Path | None = None
) -> tuple[str | Path, Path, str]:
    """A log (at ``db``, by default a new SQLite file) of a Person whose write cites an
    observation of her (both sealed), a PROV-O projection of it configured, and the
    observation's text."""
    schema = tmp_path / "schema.yaml"
    schema.write_text("personal_observations: true\n" + SCHEMA.read_text())
    toml = tmp_path / "writegate.toml"
    toml.write_text(f'[projections.prov]\nkind = "prov"\npath = "{tmp_path / "prov.nt"}"\n')
    db = tmp_path / "log.db" if db is None else db
    text = f"{marker} wrote from {marker}@example.org"
    writegate(db, "init", "--schema", str(schema))
    observed = writegate(db, "observe", text, "--source", "mail", "--method", "parsed")
    writegate(
        db,
        "write",
        "node",
        f"Person:name={marker}",
        "-p",
        f"email={marker}@example.org",
        "--source",
        "hr.csv",
        "--method",
        "parsed",
        "--observation",
        observed.stdout.strip(),
    )
    writegate(db, "--config", str(toml), "replay", "prov")
    return db, toml, text


def test_replay_and_rebuild_of_prov_let_go_of_a_forgotten_person(
    any_db: str | Path, tmp_path: Path, marker: str
) -> None:
    db, toml, text = _observed_person(tmp_path, marker, any_db)
    prov = tmp_path / "prov.nt"
    assert f"{marker}@example.org".encode() in prov.read_bytes()  # the test can fail
    assert text.encode() in prov.read_bytes()
    writegate(db, "forget", f"Person:name={marker}")
    replayed = writegate(db, "--config", str(toml), "replay", "prov")
    assert "rebuilt from the log to let go of them" in replayed.stdout
    for command in ("replay", "rebuild"):
        writegate(db, "--config", str(toml), command, "prov")
        kept = prov.read_bytes()
        assert marker.encode() not in kept, command
        assert b"urn:writegate:observation/" in kept  # the observation is still an entity
    status = as_json(db, "--config", str(toml), "status", "--format", "json")
    (row,) = [row for row in status["projections"] if row["name"] == "prov"]
    assert row["lag"] == 0, row
    writegate(db, "--config", str(toml), "verify")


def test_a_replay_that_cannot_let_go_of_a_forgetting_leaves_its_checkpoint_before_it(
    any_db: str | Path, tmp_path: Path, marker: str
) -> None:
    db, toml, _ = _observed_person(tmp_path, marker, any_db)
    before = json.loads((tmp_path / "prov.nt.checkpoint.json").read_bytes())["checkpoint"]
    writegate(db, "forget", f"Person:name={marker}")
    (tmp_path / ".prov.nt.staged").mkdir()  # where the rebuild stages its file: in the way
    failed = writegate(db, "--config", str(toml), "replay", "prov", code=1)
    assert failed.stderr.count("\n") == 1, failed.stderr
    assert "Traceback" not in failed.stderr
    meta = json.loads((tmp_path / "prov.nt.checkpoint.json").read_bytes())
    assert meta["checkpoint"] == before  # not past the receipt: the next replay tries again
    (tmp_path / ".prov.nt.staged").rmdir()
    writegate(db, "--config", str(toml), "replay", "prov")
    assert marker.encode() not in (tmp_path / "prov.nt").read_bytes()


def test_a_follower_that_cannot_let_go_of_a_forgetting_leaves_its_checkpoint_before_it(
    tmp_path: Path, marker: str
) -> None:
    db, _, _ = _observed_person(tmp_path, marker)
    writegate(db, "forget", f"Person:name={marker}")
    (tmp_path / ".prov.nt.staged").mkdir()
    with EventLog(db) as log:
        projector = ProvProjector(tmp_path / "prov.nt", log=log)
        before = projector.checkpoint()
        assert before < log.head()[0]
        with pytest.raises(OSError):  # noqa: PT011 - the directory in the way, whatever errno
            follow(log, {"prov": projector}, stop=threading.Event())
        assert ProvProjector(tmp_path / "prov.nt", log=log).checkpoint() == before


# -- 3. a backup brought up to date ----------------------------------------------------------


def _refused(db: Path, marker: str) -> None:
    writegate(
        db,
        "write",
        "node",
        f"Person:name={marker}",
        "-p",
        "shoe=41",
        "-p",
        f"email={marker}@example.org",
        "--source",
        "hr.csv",
        "--method",
        "parsed",
        code=1,
    )


def test_a_backup_brought_up_to_date_forgets_the_persons_refusals(
    tmp_path: Path, marker: str
) -> None:
    db, backup = tmp_path / "log.db", tmp_path / "backup.db"
    writegate(db, "init", "--schema", str(SCHEMA))
    writegate(
        db,
        "write",
        "node",
        f"Person:name={marker}",
        "-p",
        f"email={marker}@example.org",
        "--source",
        "hr.csv",
        "--method",
        "parsed",
    )
    _refused(db, marker)
    writegate(db, "backup", str(backup))
    with sqlite3.connect(backup) as conn:  # a refusal an older version recorded in the clear
        conn.execute(
            "INSERT INTO rejections (at, agent, transport, operation, error_code, message, "
            "request) VALUES ('2024-01-01T00:00:00Z', 'old', 'cli', 'write_node', 'X', 'm', ?)",
            (json.dumps({"label": "Person", "merge_keys": {"name": marker}}),),
        )
    assert marker.encode() in _on_disk(backup)  # the test can fail
    writegate(db, "forget", f"Person:name={marker}")
    copied = writegate(db, "copy", str(db), str(backup))
    assert "applied 1 forgetting(s)" in copied.stdout
    with sqlite3.connect(backup) as conn:
        kept = [row[0] for row in conn.execute("SELECT request FROM rejections")]
    assert kept == []  # both were the person's: the sealed one and the one in the clear
    assert marker.encode() not in _on_disk(backup)
    writegate(backup, "verify")


# -- 4. a refused retry after the forgetting ---------------------------------------------------


@pytest.fixture
def people(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        yield gate


def _write(gate: Gate, marker: str) -> object:
    return gate.write_node(
        label="Person",
        merge_keys={"name": marker},
        properties={"email": f"{marker}@example.org"},
        idempotency_key="hr-row-1",
        **CLAIM,
    )


def _stored_refusals(gate: Gate) -> list[str]:
    """The refusals as the database stores them (not as reads open them)."""
    with gate.log.snapshot() as conn:
        rows = conn.execute("SELECT message, request FROM rejections").fetchall()
    return [f"{message} {request}" for message, request in rows]


def test_a_refused_retry_of_a_forgotten_persons_write_is_sealed_and_forgotten_again(
    people: Gate, marker: str, request: pytest.FixtureRequest
) -> None:
    assert getattr(_write(people, marker), "status", None) == "written"
    assert isinstance(people.forget("Person", {"name": marker}, reason="asked"), ForgetResult)
    retried = _write(people, marker)
    assert isinstance(retried, Rejected), retried
    assert retried.error_code == "IDEMPOTENCY_KEY_REUSED"
    (stored,) = _stored_refusals(people)
    assert marker not in stored  # sealed, as the write it refuses would be
    (read,) = people.rejections.read()  # an auditor reads it in the clear until forgotten
    assert json.loads(read.request)["merge_keys"] == {"name": marker}
    again = people.forget("Person", {"name": marker}, reason="asked again")
    assert isinstance(again, ForgetResult), again
    assert again.seq is not None
    assert again.counts["rejections"] == 1
    assert _stored_refusals(people) == []
    assert marker.encode() not in raw_bytes(people, request)
    assert people.log.verify().ok


def test_a_refusal_naming_a_person_keeps_no_personal_value_in_the_clear(
    people: Gate, marker: str, request: pytest.FixtureRequest
) -> None:
    refused = people.write_node(
        label="Person",
        merge_keys={"name": marker},
        properties={"email": 41, "role": "engineer"},  # a type mismatch quotes the value
        **CLAIM,
    )
    assert isinstance(refused, Rejected), refused
    (stored,) = _stored_refusals(people)
    assert marker not in stored
    assert " 41" not in stored
    (read,) = people.rejections.read()
    assert "41" in read.message
    assert json.loads(read.request)["properties"] == {"email": 41, "role": "engineer"}
    done = people.forget("Person", {"name": marker}, reason="asked")
    assert isinstance(done, ForgetResult), done
    assert done.counts["rejections"] == 1
    assert marker.encode() not in raw_bytes(people, request)


@pytest.fixture
def observing(any_db: str | Path, tmp_path: Path) -> Iterator[Gate]:
    document = tmp_path / "schema.yaml"
    document.write_text("personal_observations: true\n" + SCHEMA.read_text())
    with Gate.open(any_db, default_actor=AGENT) as gate:
        assert gate.publish_schema(document).status == "published"
        yield gate


def test_a_refused_observation_of_personal_text_keeps_no_text(
    observing: Gate, marker: str, request: pytest.FixtureRequest
) -> None:
    """Its text has no subject to be sealed with and forgotten by: it is not kept at all."""
    text = f"{marker} wrote from {marker}@example.org " + "x" * 4_200_000  # over max_document_bytes
    refused = observing.record_observation(text=text, source="mail", extraction_method="parsed")
    assert isinstance(refused, Rejected), refused
    assert refused.error_code == "LIMIT_EXCEEDED"
    (read,) = observing.rejections.read()
    assert json.loads(read.request)["text"] == f"(personal text of {len(text)} characters)"
    assert json.loads(read.request)["source"] == "mail"  # the rest is kept for an auditor
    assert marker.encode() not in raw_bytes(observing, request)


# -- 5. permissions ----------------------------------------------------------------------------


def _modes(folder: Path) -> dict[str, str]:
    return {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in sorted(folder.iterdir())}


@pytest.mark.usefixtures("open_umask")
def test_the_log_its_copy_and_its_backup_are_owner_only(tmp_path: Path, marker: str) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    db = logs / "log.db"
    writegate(db, "init", "--schema", str(SCHEMA))
    writegate(db, "write", "node", f"Person:name={marker}", "--source", "s", "--method", "parsed")
    writegate(db, "backup", str(logs / "backup.db"))
    writegate(db, "copy", str(db), str(logs / "copy.db"))
    with EventLog(db) as log:  # while open, SQLite keeps its -wal and -shm beside the file
        log.head()
        found = _modes(logs)
        assert {"log.db", "log.db-wal", "log.db-shm", "backup.db", "copy.db"} <= set(found)
        assert set(found.values()) == {"0o600"}, found
    os.chmod(db, 0o644)  # as an older version made it
    writegate(db, "write", "node", "Company:name=Acme", "--source", "s", "--method", "parsed")
    assert set(_modes(logs).values()) == {"0o600"}, _modes(logs)
