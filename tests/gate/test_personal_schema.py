"""What a schema may declare personal: a label (its nodes are subjects) and its properties;
a personal property of a plain label, or of a relationship, is refused where it is written."""

from __future__ import annotations

from typing import Any

import pytest

from writegate.gate.schema.document import SchemaDocumentError, parse_document
from writegate.gate.schema.registry import Schema


def _doc(person: dict[str, Any], knows: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "nodes": {"Person": {"merge_keys": ["name"], **person}},
        "relationships": {"KNOWS": {"from": ["Person"], "to": ["Person"], **(knows or {})}},
    }


def test_a_personal_label_and_its_personal_property_reach_the_registry() -> None:
    doc = _doc({"personal": True, "properties": {"email": {"personal": True}, "role": {}}})
    entry = Schema(parse_document(doc)).get_entry("Person")
    assert entry is not None
    assert entry.personal
    assert [n for n, p in entry.properties.items() if p.personal] == ["email"]


def test_a_schema_without_personal_keeps_its_version() -> None:
    plain = parse_document(_doc({}))
    said = parse_document(_doc({"personal": False}))
    assert plain.version() == said.version()
    assert "personal" not in plain.model_dump()["nodes"]["Person"]


def test_a_personal_property_of_a_plain_label_is_refused_where_it_is() -> None:
    with pytest.raises(SchemaDocumentError) as refused:
        parse_document(_doc({"properties": {"email": {"personal": True}}}))
    assert "nodes.Person.properties.email.personal" in str(refused.value)
    assert "needs a personal label" in str(refused.value)


def test_a_relationship_property_cannot_be_personal() -> None:
    with pytest.raises(SchemaDocumentError) as refused:
        parse_document(_doc({"personal": True}, {"properties": {"note": {"personal": True}}}))
    assert "relationships.KNOWS.properties.note.personal" in str(refused.value)
