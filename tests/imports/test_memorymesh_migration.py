"""Defect E: agents written for MemoryMesh keep working after the move.

The imported schema keeps the ``*.schema.json`` property names exactly (``homeBase`` stays
``homeBase``), so the generated ``add_robot`` takes the arguments it always took and its
relationship property still makes the edge; a memory file's ``Home Base: …`` metadata still
finds that property.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import yaml

from tests.conftest import FIXTURES
from tests.console import run as writegate_run
from tests.server.harness import stdio_agent
from writegate.gate import Gate
from writegate.gate.imports import import_file
from writegate.gate.memorymesh import memorymesh_schema

MESH = FIXTURES / "memorymesh"
ROBOT = 'Robot{"name":"R2"}'


def run(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = writegate_run(["--db", str(db), *args])
    assert done.returncode == 0, done.stderr
    return done


def test_converted_schema_keeps_the_files_property_names() -> None:
    robot = memorymesh_schema(MESH).nodes["Robot"]
    assert list(robot.properties) == ["name", "modelNumber", "homeBase", "observations"]
    assert robot.required == ["name", "modelNumber"]
    edge = robot.properties["homeBase"].relationship
    assert edge is not None
    assert (edge.type, edge.to, edge.key) == ("BASED_AT", "Location", "name")
    npc = memorymesh_schema(MESH).nodes["Npc"]
    assert "currentLocation" in npc.properties


def test_add_robot_over_mcp_takes_homeBase_and_makes_the_edge(tmp_path: Path) -> None:
    """Convert with the CLI, publish the converted file, then call the generated tool as a
    MemoryMesh agent would, through the official SDK client over stdio."""
    db = tmp_path / "robots.db"
    converted = tmp_path / "schema.yaml"
    run(db, "init")
    run(db, "schema", "import-memorymesh", str(MESH), "-o", str(converted))
    assert "homeBase" in yaml.safe_load(converted.read_text())["nodes"]["Robot"]["properties"]
    run(db, "schema", "publish", str(converted))

    async def call() -> dict[str, object]:
        async with stdio_agent(db, extra=("--tools", "all")) as agent:  # seed 001's tools
            out = await agent.call(
                "add_robot",
                {
                    "robot": {"name": "R2", "modelNumber": "R2-D2", "homeBase": "Tatooine"},
                    "source": "memorymesh-agent",
                    "extraction_method": "manual",
                },
            )
            assert not out.is_error, out.data
            return out.data

    anyio.run(call)
    with Gate.open(db, readonly=True) as gate:
        conn = gate.log.connection()
        robot = gate.state.node(conn, ROBOT)
        assert robot is not None
        assert robot.properties == {"name": "R2", "modelNumber": "R2-D2", "homeBase": "Tatooine"}
        assert gate.state.relationship_exists(
            conn, f'({ROBOT})-[BASED_AT]->(Location{{"name":"Tatooine"}})'
        )


def test_memory_file_metadata_finds_the_camel_case_property(db_path: Path) -> None:
    with Gate.open(db_path) as gate:
        assert gate.publish_schema(memorymesh_schema(MESH)).status == "published"
        import_file(gate, MESH / "memory.jsonl", "memorymesh", extraction_method="parsed")
        conn = gate.log.connection()
        robot = gate.state.node(conn, ROBOT)
        assert robot is not None
        assert robot.properties["modelNumber"] == "R2-D2"  # from "Model Number: R2-D2"
        assert robot.properties["homeBase"] == "Rivendell"  # from "Home Base: Rivendell"
        gandalf = gate.state.node(conn, 'Npc{"name":"Gandalf"}')
        assert gandalf is not None
        assert gandalf.properties["currentLocation"] == "Rivendell"
