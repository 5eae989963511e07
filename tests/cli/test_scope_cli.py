"""Scopes from the command line: ``observe --scope`` and ``write node --scope`` put what
they write where the operator says, and a scope the schema does not allow is one line."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import writegate
from tests.gate.test_scope_choice import SCHEMA as CHOSEN
from tests.gate.test_scopes import SCHEMA
from writegate.gate import Gate

OBSERVE = ["observe", "--source", "chat", "--method", "llm"]
WRITE = ["--source", "cli", "--method", "manual"]


def test_observe_keeps_the_text_in_the_scope_named(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db) as gate:
        gate.publish_schema(SCHEMA)
    kept = writegate(db, *OBSERVE, "--scope", "b", "the harbour froze").stdout.strip()
    with Gate.open(db) as gate:
        event = gate.log.latest(f"obs:{kept}")
    assert event is not None
    assert event.payload["scope"] == "b"
    refused = writegate(db, *OBSERVE, "--scope", "nowhere", "the harbour froze", code=1)
    assert refused.stderr.count("\n") == 1
    assert "a, b, c, default" in refused.stderr


def test_write_node_puts_the_node_in_the_scope_named(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with Gate.open(db) as gate:
        gate.publish_schema(CHOSEN)
    writegate(db, "write", "node", "Note:name=memo", "--scope", "b", *WRITE)
    with Gate.open(db) as gate:
        event = gate.log.latest('node:Note{"name":"memo"}')
    assert event is not None
    assert event.payload["scope"] == "b"
    refused = writegate(db, "write", "node", "Note:name=memo", "--scope", "c", *WRITE, code=1)
    assert refused.stderr.count("\n") == 1
    assert "a, b" in refused.stderr
