"""Strict schema files: each mistake is one clear problem at its line, in YAML and in JSON,
and what a log already holds keeps loading (and keeps its version)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import EXAMPLE_SCHEMA, SEED_SCHEMA, plain_example, seed_document
from tests.console import run as writegate_run
from writegate.eventlog import Actor, Transaction
from writegate.gate import Gate, Rejected
from writegate.gate.schema import SchemaDocumentError, load_document, parse_document
from writegate.language import SchemaPublished, draft


def problems_of(path: Path) -> list[str]:
    with pytest.raises(SchemaDocumentError) as caught:
        load_document(path)
    return str(caught.value).split("; ")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_duplicate_yaml_key_is_refused_at_the_second_one(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "schema.yaml",
        "nodes:\n"
        "  Person:\n"
        "    merge_keys: [name]\n"
        "  Robot:\n"
        "    merge_keys: [name]\n"
        "  Person:\n"  # line 6: PyYAML alone would silently keep only this one
        "    merge_keys: [email]\n",
    )
    assert problems_of(path) == [
        f"{path}:6:3: nodes.Person: duplicate key 'Person' (first at line 2, column 3): "
        "each key once"
    ]


def test_a_duplicate_json_key_is_refused_at_its_line_tabs_or_not(tmp_path: Path) -> None:
    document = (
        '{\n\t"nodes": {\n\t\t"Person": {"merge_keys": ["name"]},\n\t\t"Person": {}\n\t}\n}\n'
    )
    path = write(tmp_path, "schema.json", document)
    assert problems_of(path) == [
        f"{path}:4:3: nodes.Person: duplicate key 'Person' (first at line 3, column 3): "
        "each key once"
    ]


def test_yaml_merge_keys_may_repeat_what_they_merge(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "schema.yaml",
        "nodes:\n"
        "  Person: &keyed\n"
        "    merge_keys: [name]\n"
        "    required: [name]\n"
        "  Robot:\n"
        "    <<: *keyed\n"
        "    required: [name]\n",  # overrides the merged key: YAML's rule, not a duplicate
    )
    assert load_document(path).nodes["Robot"].merge_keys == ["name"]


def test_an_undeclared_required_property_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "schema.yaml",
        "nodes:\n"
        "  Person:\n"
        "    merge_keys: [name]\n"
        "    required: [name, email]\n"
        "    properties:\n"
        "      name: {type: string}\n"
        "relationships:\n"
        "  KNOWS:\n"
        "    required: [since]\n",
    )
    assert problems_of(path) == [
        f"{path}:4:22: nodes.Person.required.1: 'email' is not a declared property of Person "
        "(declare it under properties, or as a merge key)",
        f"{path}:9:16: relationships.KNOWS.required.0: 'since' is not a declared property of "
        "KNOWS (declare it under properties)",
    ]


def test_merge_keys_count_as_declared_so_the_seed_fixtures_stay_valid() -> None:
    for fixture in (SEED_SCHEMA, EXAMPLE_SCHEMA):
        load_document(fixture)


def test_an_unknown_key_is_named_at_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path, "schema.yaml", "nodes:\n  Person:\n    merge_keys: [name]\n    colour: red\n"
    )
    assert problems_of(path) == [f"{path}:4:5: nodes.Person.colour: unknown key 'colour'"]


def test_remap_cycles_and_chains_are_one_problem_each(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "schema.yaml",
        "nodes:\n"
        "  A: {remaps_from: [B]}\n"
        "  B: {remaps_from: [A]}\n"
        "  C: {remaps_from: [D]}\n"
        "  D: {}\n",
    )
    assert problems_of(path) == [
        f"{path}:2:21: nodes.A.remaps_from.0: remap cycle: B -> A -> B",
        f"{path}:4:21: nodes.C.remaps_from.0: 'D' (-> 'C') is itself canonical: remaps do not "
        "chain (move D's own remaps_from to C and drop D, or drop this remap)",
    ]


def test_a_relationship_property_must_make_an_edge_the_schema_accepts(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "schema.yaml",
        "nodes:\n"
        "  Person:\n"
        "    merge_keys: [name]\n"
        "    properties:\n"
        "      employer: {relationship: {type: WORKS_FOR, to: Org, key: id}}\n"
        "  Org: {merge_keys: [name]}\n"
        "relationships:\n"
        "  WORKS_FOR: {from: [Org], to: [Org]}\n",
    )
    assert [p.split(": ", 2)[1:] for p in problems_of(path)] == [
        [
            "nodes.Person.properties.employer.relationship.type",
            "WORKS_FOR does not allow Person as its start",
        ],
        [
            "nodes.Person.properties.employer.relationship.key",
            "'id' is not the merge key of Org (name)",
        ],
    ]


def test_names_that_differ_only_in_case_are_refused_when_case_is_ignored() -> None:
    document = {"nodes": {"Person": {}, "Org": {"remaps_from": ["person"]}}}
    with pytest.raises(SchemaDocumentError, match="differs from the name Person only in case"):
        parse_document(document)
    parse_document({**document, "case_insensitive_remap": False})


def test_an_empty_schema_is_refused(tmp_path: Path) -> None:
    assert problems_of(write(tmp_path, "s.yaml", "nodes: {}\n")) == [
        f"{tmp_path / 's.yaml'}:1:1: nodes: declares no labels: a schema needs at least one"
    ]


def test_syntax_errors_carry_the_parsers_position(tmp_path: Path) -> None:
    bad_yaml = write(tmp_path, "s.yaml", "nodes:\n  Person: [unclosed\n")
    assert problems_of(bad_yaml)[0].startswith(f"{bad_yaml}:3:1: not valid YAML: ")
    bad_json = write(tmp_path, "s.json", '{"nodes": {"Person": {},}}')
    assert problems_of(bad_json) == [
        f"{bad_json}:1:25: not valid JSON: Expecting property name enclosed in double quotes"
    ]


def test_json_content_is_the_json_modules(tmp_path: Path) -> None:
    """PyYAML reads ``1e3`` as a string and escaped surrogate pairs as two characters; the
    document's values are what JSON says they are."""
    document = seed_document()
    document["description"] = "\U0001f916"
    document["limits"] = {"max_value_bytes": 1e3}
    path = write(tmp_path, "s.json", json.dumps(document))
    loaded = load_document(path)
    assert loaded.description == "\U0001f916"
    assert loaded.limits is not None
    assert loaded.limits.max_value_bytes == 1000


def test_versions_of_documents_without_new_fields_are_unchanged() -> None:
    """The digests existing logs recorded (computed before strict parsing existed)."""
    assert load_document(SEED_SCHEMA).version() == "sha256:87ede42265d5f9cc"
    assert parse_document(plain_example()).version() == "sha256:58923994fea2a8e3"


def test_a_schema_published_under_older_rules_still_loads(db_path: Path) -> None:
    """A log holds what was accepted then: ``required`` naming an undeclared property."""
    older: dict[str, Any] = {"nodes": {"Person": {"merge_keys": ["name"], "required": ["email"]}}}
    version = parse_document(older, strict=False).version()

    def publish_unchecked(tx: Transaction) -> None:
        tx.emit(draft(SchemaPublished(document=older, version=version), ["schema"]))

    with Gate.open(db_path) as gate:
        gate.log.append(Actor(agent="old-writer"), publish_unchecked)
        assert gate.current_schema().version == version
        refused = gate.publish_schema(older)  # publishing it again is held to today's rules
        assert isinstance(refused, Rejected)
        assert refused.error_code == "SCHEMA_INVALID"


def test_the_cli_names_the_file_and_line_in_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, "s.yaml", "nodes:\n  Person: {merge_keys: [name], required: [email]}\n")
    db = str(tmp_path / "l.db")
    assert writegate_run(["--db", db, "init"]).returncode == 0
    where = f"{path}:2:43: nodes.Person.required.0: 'email' is not a declared property"
    for command, prefix in (("publish", "error: SCHEMA_INVALID: "), ("diff", "error: ")):
        out = writegate_run(["--db", db, "schema", command, str(path)])
        assert out.returncode == 1
        assert out.stderr.count("\n") == 1, out.stderr
        assert out.stderr.startswith(prefix + where), out.stderr


def test_the_seed_document_round_trips_through_yaml(tmp_path: Path) -> None:
    path = write(tmp_path, "s.yml", yaml.safe_dump(seed_document()))
    assert load_document(path).version() == load_document(SEED_SCHEMA).version()
