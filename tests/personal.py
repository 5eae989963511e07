"""What the tests of personal data write: people who work at Acme (``fixtures/personal_schema.yaml``)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.postgres import Server
from writegate.eventlog import EventLog
from writegate.eventlog.canonical import canonical_json
from writegate.gate import Gate

CLAIM: dict[str, Any] = {"source": "test", "extraction_method": "manual"}


def person(gate: Gate, name: str, **properties: Any) -> Any:
    """A Person named ``name`` written with ``properties``: the gate's answer."""
    return gate.write_node(
        label="Person", merge_keys={"name": name}, properties=properties, **CLAIM
    )


def works_at_acme(gate: Gate, *names: str) -> None:
    """The company Acme, and each person ``names`` names WORKS_AT it."""
    gate.write_node(label="Company", merge_keys={"name": "Acme"}, **CLAIM)
    for name in names:
        linked = gate.write_relationship(
            type="WORKS_AT",
            from_label="Person",
            from_keys={"name": name},
            to_label="Company",
            to_keys={"name": "Acme"},
            **CLAIM,
        )
        assert linked.status == "written", linked


SEAL = re.compile(r'\{"\$sealed":"[^"]*"\}')


def digests(gate: Gate) -> set[str]:
    """The request digests the log's idempotency records hold."""
    with gate.log.snapshot() as conn:
        return {str(row[0]) for row in conn.execute("SELECT request_hash FROM idempotency")}


def guessed(gate: Gate, guesses: list[str]) -> set[str]:
    """The guesses an attacker holding the files confirms: each put where the stored
    requests hold a seal, the request's plain digest looked for among the records."""
    records = digests(gate)
    confirmed = set()
    for event in gate.log.read(after_seq=0, limit=1000, sealed=True).events:
        text = canonical_json(event.request).decode()
        if not SEAL.search(text):
            continue  # nothing sealed in it to guess
        for guess in guesses:
            filled = SEAL.sub(canonical_json(guess).decode().replace("\\", "\\\\"), text)
            if hashlib.sha256(filled.encode()).hexdigest() in records:
                confirmed.add(guess)
    return confirmed


def raw_bytes(gate: Gate, request: pytest.FixtureRequest) -> bytes:
    """Every byte the log's database keeps on disk (its file and -wal; a server's files)."""
    log = gate.log
    if isinstance(log, EventLog):
        return stored_bytes(log.path, request)
    return stored_bytes(str(request.getfixturevalue("pg_dsn")), request)


def stored_bytes(address: str | Path, request: pytest.FixtureRequest) -> bytes:
    """Every byte the log at ``address`` keeps on disk: a SQLite file and its -wal, or the
    files of a PostgreSQL database once vacuumed (what an operator runs after a forgetting)."""
    if isinstance(address, Path):
        wal = Path(f"{address}-wal")
        return address.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    server: Server = request.getfixturevalue("postgres")
    with psycopg.connect(address, autocommit=True) as conn:
        conn.execute("VACUUM FULL")
        conn.execute("CHECKPOINT")
        row = conn.execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    folder = Path(server.data) / "base" / str(row[0])
    return b"".join(f.read_bytes() for f in sorted(folder.iterdir()) if f.is_file())
