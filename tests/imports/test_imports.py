"""Existing agent memories moved under the gate: held to the schema, stamped, idempotent."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.conftest import FIXTURES
from tests.imports.memory_file import generate
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.imports import ImportSummary, import_file
from writegate.gate.memorymesh import memorymesh_schema

OPERATOR = Actor(agent="operator:migration", transport="cli")


@pytest.fixture
def memory_file(tmp_path: Path) -> Path:
    """A file the real MCP memory server wrote, plus two lines no server would write."""
    out = tmp_path / "memory.jsonl"
    anyio.run(generate, out)
    with out.open("a") as handle:
        handle.write('\n{"type":"entity","name":"broken"\n{"type":"thing","name":"x"}\n')
    return out


def counts(summary: ImportSummary) -> tuple[int, ...]:
    return (
        summary.items,
        summary.accepted,
        summary.remapped,
        summary.rejected,
        summary.malformed,
        summary.events_appended,
    )


def test_mcp_memory_import(example_gate: Gate, memory_file: Path) -> None:
    gate = example_gate
    head = gate.log.head()
    rehearsal = import_file(
        gate, memory_file, "mcp-memory", extraction_method="llm", actor=OPERATOR, dry_run=True
    )
    assert gate.log.head() == head  # a dry run writes nothing
    real = import_file(gate, memory_file, "mcp-memory", extraction_method="llm", actor=OPERATOR)
    assert counts(rehearsal) == counts(real)
    assert rehearsal.problems == real.problems

    assert real.items == 9
    assert real.rejected == 2  # the Service without a tier, the unknown INSPIRED_BY type
    assert real.malformed == 2
    assert [(p.line, p.error_code) for p in real.problems] == [
        (4, "SCHEMA_MISSING_REQUIRED_PROPERTY"),
        (9, "SCHEMA_UNKNOWN_LABEL"),
        (10, "MALFORMED_LINE"),  # the server ends its file without a newline: these follow it
        (11, "MALFORMED_LINE"),
    ]
    assert real.accepted == 7
    assert real.remapped == 4  # person, company, machine (to the fallback), "works at"
    assert real.events_appended == gate.log.head()[0] - head[0]

    ada = gate.state.node(gate.log.connection(), 'Person{"name":"Ada Lovelace"}')
    assert ada is not None
    assert ada.properties["role"] == "engineer"  # "role: engineer" -> a declared property
    assert ada.properties["age"] == 36  # typed as the schema declares
    assert ada.properties["observations"] == ["Wrote the first published algorithm"]
    assert ada.provenance is not None
    assert ada.provenance.source == "memory.jsonl"
    assert ada.provenance.extraction_method == "llm"
    events = list(gate.log.iter_events(after_seq=head[0]))
    assert {e.actor.agent for e in events} == {"operator:migration"}

    again = import_file(gate, memory_file, "mcp-memory", extraction_method="llm", actor=OPERATOR)
    assert again.events_appended == 0  # idempotency keys from the file and its lines
    assert gate.log.head()[0] == head[0] + real.events_appended


def test_memorymesh_schemas_and_file(db_path: Path) -> None:
    with Gate.open(db_path) as gate:
        document = memorymesh_schema(FIXTURES / "memorymesh")
        assert gate.publish_schema(document).status == "published"
        assert sorted(document.nodes) == ["Location", "Npc", "Robot"]
        npc = document.nodes["Npc"]
        assert npc.required == ["name", "role", "status"]
        assert npc.properties["currentLocation"].relationship is not None
        path = FIXTURES / "memorymesh" / "memory.jsonl"
        rehearsal = import_file(gate, path, "memorymesh", extraction_method="parsed", dry_run=True)
        real = import_file(gate, path, "memorymesh", extraction_method="parsed")
        assert counts(rehearsal) == counts(real)
        assert [(p.line, p.error_code) for p in real.problems] == [
            (3, "SCHEMA_ENUM_VIOLATION"),  # Bilbo the Burglar: not a role the schema knows
            (8, "MALFORMED_LINE"),
            (9, "SCHEMA_UNKNOWN_LABEL"),  # FRIEND_OF is no relationship type of the schema
        ]
        conn = gate.log.connection()
        gandalf = gate.state.node(conn, 'Npc{"name":"Gandalf"}')
        assert gandalf is not None
        assert gandalf.properties["role"] == "Wizard"
        assert gandalf.properties["traits"] == ["wise", "patient"]
        assert gandalf.properties["observations"] == ["Arrived in a cart full of fireworks"]
        assert gate.state.relationship_exists(
            conn, '(Npc{"name":"Gandalf"})-[LOCATED_IN]->(Location{"name":"Rivendell"})'
        )
        mordor = gate.state.node(conn, 'Location{"name":"Mordor"}')
        assert mordor is not None
        assert mordor.properties["region"] == "Mordor"
        assert mordor.properties["observations"] == ["Shadows lie there"]
