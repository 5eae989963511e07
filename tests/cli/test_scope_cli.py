"""Scopes from the command line: ``observe --scope`` and ``write node --scope`` put what
they write where the operator says, a scope the schema does not allow is one line, and
``writegate --scope A`` reads as an agent granted only A."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import as_json, writegate
from tests.gate.scoped import SCHEMA
from tests.gate.test_scope_choice import SCHEMA as CHOSEN
from tests.server.test_scope_grants import SECRETS, scoped_log
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


def test_the_reads_keep_to_the_scopes_named(tmp_path: Path) -> None:
    """``--scope`` reads as an agent granted only those scopes would over MCP."""
    db = Path(scoped_log(tmp_path / "log.db"))
    kept = writegate(db, *OBSERVE, "--scope", "b", "the thicket by the hedgerow").stdout.strip()
    as_a = ("--scope", "a")
    found = as_json(db, *as_a, "search", "apple", "--format", "json")
    assert {n["merge_keys"]["name"] for n in found["nodes"]} == {"apple one", "apple two"}
    assert found["withheld"] == {"b": 2}
    everything = as_json(db, "search", "apple", "--format", "json")
    assert len(everything["nodes"]) == 4  # without --scope: the operator's every scope
    for args in (
        ("query", "blackthorn hedgerow apple", "--format", "json"),
        ("search", "--observations", "thicket", "--format", "json"),
        ("export", "mermaid"),
    ):
        answer = writegate(db, *as_a, *args).stdout
        assert not any(s.lower() in answer.lower() for s in SECRETS), args
        assert "apple" in answer.lower() or "thicket" in args, args
    refused = writegate(db, *as_a, "show", "observation", kept, code=1)
    assert refused.stderr.startswith("error: OBSERVATION_NOT_FOUND")
    assert refused.stderr.count("\n") == 1


def test_a_grant_of_a_scope_the_schema_does_not_declare_is_one_line(tmp_path: Path) -> None:
    """``writegate --scope opz`` read an empty graph, and ``serve --scope opz`` served
    one, without a word: a mistyped scope grants nothing."""
    db = tmp_path / "log.db"
    with Gate.open(db) as gate:
        gate.publish_schema(SCHEMA)
    said = "error: no such scope: opz; the schema declares a, b, c (and the implicit 'default')\n"
    for command in (("--scope", "opz", "search", "harbour"), ("serve", "--scope", "opz")):
        refused = writegate(db, *command, code=2, input="")
        assert refused.stderr == said
