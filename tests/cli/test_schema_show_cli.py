"""``writegate schema show`` shows what a write is checked against and what happens to it:
each property's type and enum, and the conflict, review and resolution policies."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.cli.conftest import writegate
from tests.conftest import EXAMPLE_SCHEMA


def test_show_names_properties_enums_and_every_policy(tmp_path: Path) -> None:
    document = yaml.safe_load(EXAMPLE_SCHEMA.read_text())
    document["conflict"] = "keep_higher_confidence"
    document["review_rules"] = [{"extraction_methods": ["llm"], "until_approved": 5}]
    document["nodes"]["Person"]["review_below"] = 0.3
    document["nodes"]["Person"]["properties"]["email"]["conflict"] = "reject"
    path = tmp_path / "schema.yaml"
    path.write_text(yaml.safe_dump(document))
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(path))
    shown = writegate(db, "schema", "show", env={"COLUMNS": "250"}).stdout
    lines = [" ".join(line.replace("│", " ").split()) for line in shown.splitlines()]
    for expected in (
        "conflict policy: keep_higher_confidence (where a label, type or property sets none)",
        "review rule: holds llm writes, whatever its label or type, from an agent until 5 of "
        "its writes are approved",
        "Person.role string engineer, manager, designer, director, contractor",
        "Person.email string reject",
        "Service.tier integer 0, 1, 2, 3",
        "Person.employer string -> [WORKS_FOR] :Organization by name",
    ):
        assert expected in lines, (expected, shown)
    [person] = [line for line in lines if line.startswith(":Person ")]
    assert "review below 0.3" in person
    assert "resolution propose (person; proposes at 0.7, lands at 0.98; identity email)" in person
    assert "conflict keep_higher_confidence" in person


def test_show_of_one_label_is_get_schema_s_labels(tmp_path: Path) -> None:
    """``--label`` narrows to a label (a synonym names it) and the types touching it, as
    ``get_schema`` with ``labels`` does for an agent; a name the schema lacks is one line."""
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    shown = json.loads(writegate(db, "schema", "show", "--label", "App", "--json").stdout)
    assert list(shown["document"]["nodes"]) == ["Service"]
    assert set(shown["document"]["relationships"]) == {
        "OWNED_BY",
        "DEPENDS_ON",
        "MENTIONS",
        "RELATED_TO",
    }
    table = writegate(db, "schema", "show", "--label", "Service", env={"COLUMNS": "250"}).stdout
    assert ":Service" in table
    assert ":Person" not in table
    assert "[KNOWS]" not in table
    refused = writegate(db, "schema", "show", "--label", "Starship", code=1)
    assert refused.stderr.startswith("error: SCHEMA_UNKNOWN_LABEL: 'Starship' is no label")
    assert len(refused.stderr.splitlines()) == 1
