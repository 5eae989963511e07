"""What an agent sees (issue 10): every tool defined by its models, described field by field,
with compact schemas; and ``serve --tools`` choosing the families."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLE_SCHEMA, SEED_SCHEMA
from tests.server.conftest import NPC_SCHEMA, published
from tests.server.harness import stdio_agent
from writegate.gate.schema import FileSchemaSource
from writegate.gate.server.catalog import build_catalog
from writegate.gate.server.tools import ToolSpec, compact

METHODS = ("api", "llm", "manual", "parsed")


def catalog(schema: Path, choice: str = "all") -> dict[str, ToolSpec]:
    return build_catalog(FileSchemaSource(schema).load(), METHODS, choice)


def properties(schema: dict[str, Any], where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    for name, spec in schema.get("properties", {}).items():
        yield f"{where}{name}", spec
        yield from properties(spec, f"{where}{name}.")
        if isinstance(spec.get("items"), dict):
            yield from properties(spec["items"], f"{where}{name}[].")


@pytest.mark.parametrize("schema", [EXAMPLE_SCHEMA, SEED_SCHEMA, NPC_SCHEMA])
def test_each_input_schema_is_the_validating_model_s_own(schema: Path) -> None:
    for spec in catalog(schema).values():
        assert spec.input_schema() == compact(spec.arguments.model_json_schema(by_alias=True))


@pytest.mark.parametrize("schema", [EXAMPLE_SCHEMA, SEED_SCHEMA, NPC_SCHEMA])
def test_every_input_field_is_described(schema: Path) -> None:
    undescribed = [
        f"{spec.name}: {path}"
        for spec in catalog(schema).values()
        for path, field in properties(spec.input_schema())
        if not field.get("description")
    ]
    assert undescribed == []


def test_methods_and_reliability_carry_their_bounds() -> None:
    write_node = catalog(SEED_SCHEMA)["write_node"].input_schema()["properties"]
    assert write_node["extraction_method"]["enum"] == list(METHODS)
    assert (write_node["reliability"]["minimum"], write_node["reliability"]["maximum"]) == (0, 1)
    add = catalog(SEED_SCHEMA)["add_person"].input_schema()["properties"]
    assert add["extraction_method"]["enum"] == list(METHODS)


def test_output_schemas_are_one_flat_object() -> None:
    """Each result's fields by type, and a ``status`` naming the refusal too: a rejection
    (and a held write's proposal) validates against it without its fields repeated."""
    for spec in catalog(EXAMPLE_SCHEMA).values():
        schema = spec.output_schema()
        text = repr(schema)
        assert schema["type"] == "object"
        assert "$ref" not in text
        assert "required" not in schema
        assert "rejected" in schema["properties"]["status"]["enum"]
        assert not spec.holds or "proposed" in schema["properties"]["status"]["enum"]


def test_descriptions_read_as_sentences() -> None:
    tools = catalog(SEED_SCHEMA)
    assert tools["add_entity"].description.startswith("Add an Entity")
    assert tools["delete_entity"].description.startswith("Delete an Entity")
    assert tools["add_person"].description.startswith("Add a Person")
    for spec in tools.values():
        assert spec.description[:1].isupper()
        assert spec.description.endswith(".")


def test_tool_families_choose_the_write_tools() -> None:
    every = set(catalog(SEED_SCHEMA, "all"))
    generic = set(catalog(SEED_SCHEMA, "generic"))
    labels = set(catalog(SEED_SCHEMA, "labels"))
    reads = {
        "get_schema",
        "search_nodes",
        "graph_query",
        "open_nodes",
        "neighbors",
        "find_path",
        "node_history",
    }
    assert reads <= generic & labels
    assert "write_node" in generic - labels
    assert "add_person" in labels - generic
    assert generic | labels == every


@pytest.mark.anyio
async def test_serve_tools_generic_offers_no_per_label_tools(db_path: Path) -> None:
    published(db_path)
    async with stdio_agent(db_path, extra=("--tools", "generic")) as agent:
        names = await agent.tool_names()
    assert "write_node" in names
    assert not [n for n in names if n.startswith(("add_", "update_", "delete_person"))]
