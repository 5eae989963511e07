"""``schema diff`` is total: every key of the schema language is compared, worded, and a
change of any of them is named — none is ever reported as "no changes".

The comparison is driven by the document model's fields (``gate.schema.comparing.FIELDS``);
these tests hold it to the models, so a key added to the schema language later fails here
until it is compared and worded, and then must be named when it changes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any, get_args

import pytest
import yaml
from pydantic import BaseModel

from writegate.gate.limits import Limits
from writegate.gate.schema import parse_document
from writegate.gate.schema.authority import AuthorityDoc
from writegate.gate.schema.comparing import FIELDS, WHOLE, diff_documents
from writegate.gate.schema.document import (
    EvidenceDoc,
    NodeTypeDoc,
    PropertyDoc,
    RelationshipRef,
    RelationshipTypeDoc,
    ResolutionDoc,
    ReviewRule,
    SchemaDocument,
)

RICH = yaml.safe_load(
    """
    name: rich
    description: every key of the schema language set
    unknown_label_policy: reject
    fallback_label: Entity
    case_insensitive_remap: false
    conflict: supersede
    limits: {max_depth: 8, max_value_bytes: 1024, max_document_bytes: 4096, max_properties: 32, max_request_bytes: 65536, max_batch_items: 100}
    review_rules:
      - {extraction_methods: [llm], labels: [Person], until_approved: 2}
    identity_groups: {people: [Person, Member]}
    half_lives: {llm: P30D}
    authority: {methods: {manual: 3, llm: 1}, sources: {hr.csv: 3}, hold: [Person]}
    nodes:
      Person:
        description: a person
        merge_keys: [name]
        required: [name]
        remaps_from: [human]
        additional_properties: false
        conflict: reject
        review_below: 0.3
        scope: staff
        scopes: [staff, guests]
        resolution: {policy: propose, name: name, kind: person, identity: [email], auto_threshold: 0.97, propose_threshold: 0.7, stop_suffixes: [jr], evidence: {role: {compare: numeric, tolerance: 0.5, tolerance_days: 1, veto: false}, place: {compare: geo, latitude: lat, longitude: lng, tolerance_metres: 50}}}
        properties:
          name: {type: string}
          email: {type: string, conflict: review}
          score: {type: number}
          lat: {type: number}
          lng: {type: number}
          tags: {type: array, items: string, many: true, description: labels}
          role: {type: string, enum: [a, b]}
          employer: {type: string, relationship: {type: WORKS_FOR, to: Organization, key: name, description: where}}
      Member: {merge_keys: [name], required: [name], properties: {name: {type: string}}, resolution: {policy: propose}}
      Organization: {merge_keys: [name], required: [name], properties: {name: {type: string}, code: {type: string}}}
      Entity: {merge_keys: [name], properties: {name: {type: string}, code: {type: string}}}
    relationships:
      WORKS_FOR: {from: [Person], to: [Organization, Entity]}
      EMPLOYED_BY: {from: [Person], to: [Organization]}
      KNOWS:
        description: acquaintance
        from: [Person]
        to: [Person]
        remaps_from: [knows_of]
        required: [since]
        properties: {since: {type: integer}}
        additional_properties: false
        functional: true
        conflict: reject
        review_below: 0.2
"""
)
Doc = dict[str, Any]


def _person(doc: Doc) -> Doc:
    person: Doc = doc["nodes"]["Person"]
    return person


def _prop(name: str) -> Callable[[Doc], Doc]:
    return lambda doc: _person(doc)["properties"][name]


def _set(where: Callable[[Doc], Doc], key: str, value: Any) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        if value is None:
            where(doc).pop(key, None)
        else:
            where(doc)[key] = value

    return mutate


def _top(doc: Doc) -> Doc:
    return doc


def _knows(doc: Doc) -> Doc:
    knows: Doc = doc["relationships"]["KNOWS"]
    return knows


def _resolution(doc: Doc) -> Doc:
    resolution: Doc = _person(doc)["resolution"]
    return resolution


def _evidence(doc: Doc) -> Doc:
    evidence: Doc = _resolution(doc)["evidence"]["role"]
    return evidence


def _geo(doc: Doc) -> Doc:
    geo: Doc = _resolution(doc)["evidence"]["place"]
    return geo


def _authority(doc: Doc) -> Doc:
    authority: Doc = doc["authority"]
    return authority


def _rule(doc: Doc) -> Doc:
    rule: Doc = doc["review_rules"][0]
    return rule


def _edge(doc: Doc) -> Doc:
    edge: Doc = _prop("employer")(doc)["relationship"]
    return edge


def _limits(doc: Doc) -> Doc:
    limits: Doc = doc["limits"]
    return limits


def _rekeyed(doc: Doc) -> None:
    """The edge's key, and the target's merge key (which the key must be) with it."""
    _edge(doc)["key"] = "code"
    doc["nodes"]["Organization"].update(merge_keys=["code"], required=["code"])


def _personal_email(doc: Doc) -> None:
    """A personal property needs a personal label: both become so."""
    _person(doc)["personal"] = True
    _person(doc)["properties"]["email"]["personal"] = True


def _retained_email(doc: Doc) -> None:
    """A retention needs sealed values: the property (and its label) personal too."""
    _personal_email(doc)
    _person(doc)["properties"]["email"]["retention"] = "P30D"


def _retained_observations(doc: Doc) -> None:
    doc.update(personal_observations=True, observation_retention="P7D")


# (model, field) -> a change of that field alone, from RICH to another valid document
CHANGES: dict[tuple[type[BaseModel], str], Callable[[Doc], None]] = {
    (SchemaDocument, "name"): _set(_top, "name", "richer"),
    (SchemaDocument, "description"): _set(_top, "description", "another"),
    (SchemaDocument, "unknown_label_policy"): _set(_top, "unknown_label_policy", "remap"),
    (SchemaDocument, "fallback_label"): _set(_top, "fallback_label", "Organization"),
    (SchemaDocument, "case_insensitive_remap"): _set(_top, "case_insensitive_remap", True),
    (SchemaDocument, "nodes"): lambda doc: doc["nodes"].update(Place={"merge_keys": ["name"]}),
    (SchemaDocument, "relationships"): lambda doc: doc["relationships"].pop("EMPLOYED_BY"),
    (SchemaDocument, "limits"): _set(_top, "limits", None),
    (SchemaDocument, "conflict"): _set(_top, "conflict", "review"),
    (SchemaDocument, "review_rules"): lambda doc: doc["review_rules"].append({}),
    (SchemaDocument, "identity_groups"): _set(_top, "identity_groups", None),
    (SchemaDocument, "half_lives"): _set(_top, "half_lives", {"llm": "P10D"}),
    (SchemaDocument, "personal_observations"): _set(_top, "personal_observations", True),
    (SchemaDocument, "authority"): _set(_top, "authority", None),
    (AuthorityDoc, "methods"): _set(_authority, "methods", {"manual": 2}),
    (AuthorityDoc, "sources"): _set(_authority, "sources", None),
    (AuthorityDoc, "agents"): _set(_authority, "agents", {"chat-agent": 1}),
    (AuthorityDoc, "hold"): _set(_authority, "hold", ["KNOWS"]),
    (SchemaDocument, "observation_retention"): _retained_observations,
    **{
        (Limits, f): _set(_limits, f, v)
        for f, v in (
            ("max_depth", 9),
            ("max_value_bytes", 2048),
            ("max_document_bytes", 8192),
            ("max_properties", 33),
            ("max_request_bytes", 65537),
            ("max_batch_items", 101),
        )
    },
    (NodeTypeDoc, "description"): _set(_person, "description", "someone"),
    (NodeTypeDoc, "merge_keys"): _set(_person, "merge_keys", ["name", "email"]),
    (NodeTypeDoc, "required"): _set(_person, "required", ["name", "email"]),
    (NodeTypeDoc, "remaps_from"): _set(_person, "remaps_from", ["human", "man"]),
    (NodeTypeDoc, "properties"): lambda doc: _person(doc)["properties"].pop("score"),
    (NodeTypeDoc, "additional_properties"): _set(_person, "additional_properties", True),
    (NodeTypeDoc, "conflict"): _set(_person, "conflict", "supersede"),
    (NodeTypeDoc, "review_below"): _set(_person, "review_below", 0.5),
    (NodeTypeDoc, "self_review"): _set(_person, "self_review", True),
    (NodeTypeDoc, "scope"): _set(_person, "scope", "guests"),
    (NodeTypeDoc, "scopes"): _set(_person, "scopes", ["staff", "crew"]),
    (NodeTypeDoc, "personal"): _set(_person, "personal", True),
    (NodeTypeDoc, "resolution"): lambda doc: doc["nodes"]["Organization"].update(
        resolution={"policy": "auto", "kind": "organisation"}
    ),
    (RelationshipTypeDoc, "description"): _set(_knows, "description", "friends"),
    (RelationshipTypeDoc, "from_labels"): _set(_knows, "from", ["Person", "Member"]),
    (RelationshipTypeDoc, "to_labels"): _set(_knows, "to", []),
    (RelationshipTypeDoc, "remaps_from"): _set(_knows, "remaps_from", None),
    (RelationshipTypeDoc, "required"): _set(_knows, "required", None),
    (RelationshipTypeDoc, "properties"): lambda doc: _knows(doc)["properties"].update(w={}),
    (RelationshipTypeDoc, "additional_properties"): _set(_knows, "additional_properties", True),
    (RelationshipTypeDoc, "functional"): _set(_knows, "functional", False),
    (RelationshipTypeDoc, "conflict"): _set(_knows, "conflict", "keep_higher_confidence"),
    (RelationshipTypeDoc, "review_below"): _set(_knows, "review_below", None),
    (RelationshipTypeDoc, "self_review"): _set(_knows, "self_review", True),
    (PropertyDoc, "type"): _set(_prop("score"), "type", "integer"),
    (PropertyDoc, "items"): _set(_prop("tags"), "items", "integer"),
    (PropertyDoc, "enum"): _set(_prop("role"), "enum", ["a", "b", "c"]),
    (PropertyDoc, "description"): _set(_prop("tags"), "description", "badges"),
    (PropertyDoc, "relationship"): _set(_prop("employer"), "relationship", None),
    (PropertyDoc, "conflict"): _set(_prop("email"), "conflict", "reject"),
    (PropertyDoc, "many"): _set(_prop("tags"), "many", None),
    (PropertyDoc, "personal"): _personal_email,
    (PropertyDoc, "retention"): _retained_email,
    (PropertyDoc, "searchable"): _set(_prop("email"), "searchable", False),
    (ResolutionDoc, "policy"): _set(_resolution, "policy", "auto"),
    (ResolutionDoc, "name"): _set(_resolution, "name", None),
    (ResolutionDoc, "kind"): _set(_resolution, "kind", "organisation"),
    (ResolutionDoc, "identity"): _set(_resolution, "identity", None),
    (ResolutionDoc, "auto_threshold"): _set(_resolution, "auto_threshold", 0.99),
    (ResolutionDoc, "propose_threshold"): _set(_resolution, "propose_threshold", 0.8),
    (ResolutionDoc, "stop_suffixes"): _set(_resolution, "stop_suffixes", ["sr"]),
    (ResolutionDoc, "evidence"): _set(_resolution, "evidence", {"email": {"compare": "exact"}}),
    (EvidenceDoc, "compare"): _set(_evidence, "compare", "similar"),
    (EvidenceDoc, "tolerance"): _set(_evidence, "tolerance", 1.0),
    (EvidenceDoc, "tolerance_days"): _set(_evidence, "tolerance_days", 2),
    (EvidenceDoc, "veto"): _set(_evidence, "veto", True),
    (EvidenceDoc, "tolerance_metres"): _set(_geo, "tolerance_metres", 75.0),
    (EvidenceDoc, "latitude"): _set(_geo, "latitude", "lng"),
    (EvidenceDoc, "longitude"): _set(_geo, "longitude", "lat"),
    (ReviewRule, "extraction_methods"): _set(_rule, "extraction_methods", ["llm", "manual"]),
    (ReviewRule, "labels"): _set(_rule, "labels", None),
    (ReviewRule, "until_approved"): _set(_rule, "until_approved", 3),
    (RelationshipRef, "type"): _set(_edge, "type", "EMPLOYED_BY"),
    (RelationshipRef, "to"): _set(_edge, "to", "Entity"),
    (RelationshipRef, "key"): _rekeyed,
    (RelationshipRef, "description"): _set(_edge, "description", "who pays"),
}


def _models(model: type[BaseModel]) -> Iterator[type[BaseModel]]:
    """``model`` and every model its fields hold, however nested (lists, dicts, options)."""
    yield model
    for field in model.model_fields.values():
        stack: list[Any] = [field.annotation]
        while stack:
            kind = stack.pop()
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                yield from _models(kind)
            stack += get_args(kind)


LANGUAGE = {(m, f) for m in set(_models(SchemaDocument)) for f in m.model_fields}


def test_every_key_of_the_schema_language_is_compared_its_own_way() -> None:
    """A field without a comparison of its own would only be reported as 'changed' with its
    raw values; one inside a model compared whole (a review rule) is compared with it."""
    uncompared = {(m.__name__, f) for m, f in LANGUAGE if (m, f) not in FIELDS and m not in WHOLE}
    assert uncompared == set()


def test_the_change_table_here_covers_the_whole_language() -> None:
    assert {(m.__name__, f) for m, f in LANGUAGE - CHANGES.keys()} == set()


KEYS = sorted(CHANGES, key=lambda k: (k[0].__name__, k[1]))


@pytest.mark.parametrize("key", KEYS, ids=[f"{m.__name__}.{f}" for m, f in KEYS])
def test_a_change_of_any_key_is_named_in_words_of_its_own(key: tuple[type[BaseModel], str]) -> None:
    before = parse_document(RICH)
    changed = copy.deepcopy(RICH)
    CHANGES[key](changed)
    after = parse_document(changed)
    assert after.version() != before.version(), "the change table changes nothing"
    changes = diff_documents(before, after)
    assert changes, f"{key[0].__name__}.{key[1]} changed and the diff names nothing"
    assert [c.describe() for c in changes if c.kind == "changed"] == []
