"""The example schema grown to many labels, for what a catalogue costs a label (the tests
and ``bench/bench_catalog.py`` grow it the same way)."""

from __future__ import annotations

from typing import Any

import yaml

from tests.conftest import EXAMPLE_SCHEMA


def grown(labels: int) -> dict[str, Any]:
    """The example schema with labels added until it has ``labels``: each like the
    example's, described, with four properties, an enum, a relationship property and a
    relationship type of its own."""
    document: dict[str, Any] = yaml.safe_load(EXAMPLE_SCHEMA.read_text())
    for n in range(labels - len(document["nodes"])):
        name, keeper = f"Asset{n:02d}", f"KEPT_BY_{n:02d}"
        document["nodes"][name] = {
            "description": f"An asset of kind {n} the organisation tracks.",
            "merge_keys": ["name"],
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "status": {"type": "string", "enum": ["planned", "active", "retired"]},
                "cost": {"type": "number"},
                "keeper": {
                    "type": "string",
                    "relationship": {"type": keeper, "to": "Person", "key": "name"},
                },
            },
        }
        document["relationships"][keeper] = {"from": [name], "to": ["Person"]}
    return document
