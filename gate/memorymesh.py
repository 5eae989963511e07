"""MemoryMesh's schema files as one writegate schema document, so that its memory files
import under the gate (``gate.imports``) with the tools its agents already call."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from writegate.gate.imports import relationship_type
from writegate.gate.schema import SchemaDocument, parse_document


def memorymesh_schema(folder: str | Path, name: str = "memorymesh") -> SchemaDocument:
    """MemoryMesh's ``*.schema.json`` files (seed 001 §3) as one writegate schema document.

    ``add_npc`` becomes the label ``Npc`` (the entity type ``npc`` remaps to it); properties
    keep their names exactly (``homeBase`` stays ``homeBase``: agents written for MemoryMesh
    call the generated tools as they called MemoryMesh's), their types, enums and
    descriptions; ``required`` ones become required; a property with a ``relationship``
    becomes a relationship property whose edge type is the upper-snake ``edgeType`` from the
    label to the target type's label.
    """
    folder = Path(folder)
    files = sorted(folder.glob("*.schema.json"))
    if not files:
        raise ValueError(f"no *.schema.json files in {folder}")
    raw = {}
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        tool = data.get("name", "")
        if not isinstance(tool, str) or not tool.startswith("add_"):
            raise ValueError(f"{file.name}: 'name' must start with 'add_' (seed 001 §3.3)")
        raw[tool.removeprefix("add_")] = data

    def label(entity_type: str) -> str:
        return "".join(
            part[:1].upper() + part[1:] for part in re.split(r"[_\W]+", entity_type) if part
        )

    nodes: dict[str, Any] = {}
    relationships: dict[str, Any] = {}
    for entity_type, data in raw.items():
        properties, required = {}, []
        for prop, spec in (data.get("properties") or {}).items():
            kind = spec.get("type", "string")
            doc: dict[str, Any] = {
                "type": kind if kind in ("string", "array") else "string",
                "description": spec.get("description", ""),
            }
            if kind == "array":
                doc["items"] = "string"
            if spec.get("enum"):
                doc["enum"] = list(spec["enum"])
            if rel := spec.get("relationship"):
                rtype = relationship_type(rel["edgeType"])
                target = label(rel.get("nodeType") or entity_type)
                doc["relationship"] = {"type": rtype, "to": target, "key": "name"}
                entry = relationships.setdefault(rtype, {"from": [], "to": []})
                entry["from"] = sorted({*entry["from"], label(entity_type)})
                entry["to"] = sorted({*entry["to"], target})
            properties[prop] = doc
            if spec.get("required"):
                required.append(prop)
        nodes[label(entity_type)] = {
            "description": data.get("description", ""),
            "merge_keys": ["name"],
            "required": list(dict.fromkeys(["name", *required])),
            "remaps_from": [entity_type] if entity_type != label(entity_type) else [],
            "properties": {
                "name": {"type": "string"},
                **properties,
                "observations": {"type": "array", "items": "string"},
            },
            "additional_properties": bool(data.get("additionalProperties", True)),
        }
    for target in {r for rel in relationships.values() for r in rel["to"]} - set(nodes):
        nodes[target] = {
            "merge_keys": ["name"],
            "required": ["name"],
            "properties": {"name": {"type": "string"}},
        }
    return parse_document(
        {
            "name": name,
            "description": f"imported from MemoryMesh schemas in {folder.name}",
            "nodes": nodes,
            "relationships": relationships,
        },
        str(folder),
    )
