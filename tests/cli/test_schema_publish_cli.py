"""Safe schema changes from the command line (issue 10, acceptance 3): ``schema diff``
shows what a file would change and harm; ``schema publish`` refuses the harmful change in
one line (the impact on stderr) and appends nothing, unless ``--force``; a broken file is
one line naming the file and line, for ``diff`` and ``publish`` alike."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLE_SCHEMA, SEED_SCHEMA, seed_document
from tests.console import run as writegate_run


def run(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return writegate_run(["--db", str(db), *args])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The seed schema, and Initech as a live Organization."""
    db = tmp_path / "memory.db"
    assert run(db, "init", "--schema", str(SEED_SCHEMA)).returncode == 0
    written = run(db, "write", "node", "Organization", "-k", "name=Initech",
                  "--source", "crm", "--method", "parsed")  # fmt: skip
    assert written.returncode == 0, written.stderr
    return db


@pytest.fixture
def dropped(tmp_path: Path) -> Path:
    """The seed schema without Organization (and the relationship type that ends there)."""
    document = seed_document()
    del document["nodes"]["Organization"]
    del document["relationships"]["WORKS_FOR"]
    path = tmp_path / "dropped.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def head(db: Path) -> str:
    return run(db, "verify", "--anchor").stdout.splitlines()[-1]


def test_diff_shows_the_dropped_label_and_its_live_nodes(db: Path, dropped: Path) -> None:
    table = run(db, "schema", "diff", str(dropped))
    assert table.returncode == 0, table.stderr
    assert "- label Organization: removed" in table.stdout
    assert "Organization: 1 node stranded (later writes to Organization become Entity)" in (
        table.stdout
    )
    assert "UNSAFE: 1 stranded, 0 invalidated" in table.stdout
    as_json = json.loads(run(db, "schema", "diff", str(dropped), "--format", "json").stdout)
    assert (as_json["safe"], as_json["stranded"]) == (False, ["Organization"])


def test_publish_refuses_in_one_line_and_appends_nothing(db: Path, dropped: Path) -> None:
    before = head(db)
    out = run(db, "schema", "publish", str(dropped))
    assert out.returncode == 1
    errors = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1
    assert errors[0].startswith("error: SCHEMA_CHANGE_UNSAFE: publishing ")
    assert "Organization: 1 node stranded" in out.stderr  # the impact, for the operator
    assert "Traceback" not in out.stderr
    assert head(db) == before
    forced = run(db, "schema", "publish", str(dropped), "--force", "--format", "json")
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["status"] == "published"
    assert "(published with --force)" in forced.stderr
    assert head(db) != before


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "nodes:\n  Person: {merge_keys: [name]}\n  Person: {merge_keys: [name]}\n",
            ":3:3: nodes.Person: duplicate key 'Person' (first at line 2, column 3)",
        ),
        (
            "nodes:\n  Person: {merge_keys: [name], required: [email]}\n",
            ":2:43: nodes.Person.required.0: 'email' is not a declared property",
        ),
    ],
)
def test_a_broken_file_is_one_line_naming_its_place(
    db: Path, tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    before = head(db)
    for command in ("diff", "publish"):
        out = run(db, "schema", command, str(path))
        assert out.returncode == 1, command
        assert out.stderr.count("\n") == 1, out.stderr
        assert f"{path}{problem}" in out.stderr, out.stderr
    assert head(db) == before


def test_diff_names_a_new_review_rule_and_the_live_nodes_it_would_hold(
    db: Path, tmp_path: Path
) -> None:
    """A rule that holds every parsed write changes no declaration: it is still a change, with
    its reach — never '(no changes) … safe' alone."""
    document = seed_document()
    document["review_rules"] = [{"extraction_methods": ["parsed"]}]
    path = tmp_path / "reviewed.yaml"
    path.write_text(yaml.safe_dump(document))
    table = run(db, "schema", "diff", str(path))
    assert table.returncode == 0, table.stderr
    assert "(no changes)" not in table.stdout
    assert "+ review rules: new rule holds parsed writes, whatever its label or type, always" in (
        table.stdout
    )
    assert "Organization: 1 of 1 node was last written as the new rule would hold" in (table.stdout)


def test_publishing_resolution_indexes_the_nodes_already_written(tmp_path: Path) -> None:
    document = yaml.safe_load(EXAMPLE_SCHEMA.read_text())
    del document["nodes"]["Organization"]["resolution"]
    plain = tmp_path / "plain.yaml"
    plain.write_text(yaml.safe_dump(document))
    db = tmp_path / "memory.db"
    assert run(db, "init", "--schema", str(plain)).returncode == 0
    claim = ("--source", "crm", "--method", "parsed")
    assert run(db, "write", "node", "Organization", "-k", "name=Initech", *claim).returncode == 0
    published = run(db, "schema", "publish", str(EXAMPLE_SCHEMA))
    assert published.returncode == 0, published.stderr
    assert "  indexed 1 live node for entity resolution" in published.stdout.splitlines()
    again = run(db, "write", "node", "Organization", "-k", "name=Initech Ltd", *claim)
    assert again.returncode != 0
    assert "POSSIBLE_DUPLICATE" in again.stderr


def test_publishing_a_property_kept_out_of_search_says_it_and_search_misses_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memory.db"
    assert run(db, "init", "--schema", str(EXAMPLE_SCHEMA)).returncode == 0
    claim = ("--source", "crm", "--method", "parsed")
    wrote = run(
        db, "write", "node", "Person", "-k", "name=Ada", "-p", "email=ada@zanzi.bar", *claim
    )
    assert wrote.returncode == 0, wrote.stderr
    assert "Person" in run(db, "search", "zanzi").stdout
    document = yaml.safe_load(EXAMPLE_SCHEMA.read_text())
    document["nodes"]["Person"]["properties"]["email"]["searchable"] = False
    hidden = tmp_path / "hidden.yaml"
    hidden.write_text(yaml.safe_dump(document))
    published = run(db, "schema", "publish", str(hidden))
    assert published.returncode == 0, published.stderr
    said = "  made the text index of Person again: its searchable properties changed"
    assert said in published.stdout.splitlines()
    assert "no longer searched" in published.stdout
    shown = run(db, "schema", "show")
    assert shown.returncode == 0, shown.stderr
    [row] = [line for line in shown.stdout.splitlines() if "Person.email" in line]
    assert "string, not searched" in row
    found = run(db, "search", "zanzi", "--format", "json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["nodes"] == []
