"""Write commands say what they did in a few lines a person reads (what was written,
remapped, resolved, superseded, held), and ``--format json`` (or ``--json``) prints the
tool's result for scripts; a batch of thousands is a short summary, not a line of its
every result. ``token list`` shows who holds tokens, never a token."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.cli.conftest import writegate
from tests.conftest import EXAMPLE_SCHEMA

CLAIM = ("--source", "hr.csv", "--method", "parsed")


def test_a_write_says_what_it_wrote_superseded_and_remapped(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    first = writegate(db, "write", "node", "user_profile:name=Ada", "-p", "age=36", *CLAIM)
    [wrote, remapped] = first.stdout.splitlines()
    assert wrote.startswith('wrote Person{"name":"Ada"} (created) at seq 2, confidence 0.')
    assert remapped == "  remapped from :user_profile"
    again = writegate(db, "write", "node", "Person:name=Ada", "-p", "age=37", *CLAIM)
    assert "(updated to version 2) at seq 3" in again.stdout
    assert again.stdout.splitlines()[1].startswith("  superseded age: 36 (set by operator:")
    as_json = json.loads(writegate(db, "write", "node", "Person:name=Ada", *CLAIM, "--json").stdout)
    assert (as_json["status"], as_json["version"]) == ("unchanged", 2)  # said again: nothing new
    same_text = writegate(db, "write", "node", "Person:name=Ada", *CLAIM).stdout
    assert same_text.startswith('unchanged Person{"name":"Ada"}: version 2 holds these values')
    other = writegate(
        db, "write", "node", "Person:name=Ada", "--source", "crm", "--method", "parsed"
    )
    assert other.stdout.startswith('corroborated Person{"name":"Ada"} (still version 2) at seq 4')
    same = json.loads(
        writegate(db, "write", "node", "Person:name=Ada", *CLAIM, "--format", "json").stdout
    )
    assert same.keys() == as_json.keys()


def test_a_batch_of_two_thousand_is_a_short_summary(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    items = [
        {
            "op": "write_node",
            "label": "Service",
            "merge_keys": {"name": f"svc-{i}"},
            "properties": {"tier": i % 4},
            "source": "inventory.csv",
            "extraction_method": "parsed",
        }
        for i in range(2000)
    ]
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps(items))
    done = writegate(db, "write", "batch", str(batch), "--idempotency-key", "b1")
    assert len(done.stdout) < 500, done.stdout
    assert done.stdout.splitlines() == [
        "wrote a batch of 2,000 items at seq 2 to 2001: 2,000 node writes",
        "  created 2,000 nodes; remapped 0, resolved onto existing nodes 0, values "
        "superseded 0, held for review 0",
    ]
    retried = writegate(db, "write", "batch", str(batch), "--idempotency-key", "b1", "--json")
    assert len(json.loads(retried.stdout)["results"]) == 2000
    again = writegate(db, "write", "batch", str(batch)).stdout.splitlines()[0]  # a new key
    assert (
        again == "changed nothing: a batch of 2,000 items at seq 2 to 2001: 2,000 unchanged nodes"
    )


def test_a_held_write_names_its_proposal_and_the_command_deciding_it(tmp_path: Path) -> None:
    schema = tmp_path / "schema.yaml"
    schema.write_text(
        "nodes:\n  Person:\n    merge_keys: [name]\n    review_below: 0.6\n"
        "    properties: {name: {type: string}}\n"
    )
    db = tmp_path / "log.db"
    writegate(db, "init", "--schema", str(schema))
    held = writegate(db, "--as", "chat-agent", "write", "node", "Person:name=Eve",
                     "--source", "chat", "--method", "llm")  # fmt: skip
    [said, hint] = held.stdout.splitlines()
    proposal = said.split("proposal ")[1].split(" ")[0]
    assert len(proposal) == 32
    assert hint == f"  a reviewer decides: writegate review approve {proposal} (or reject)"
    approved = writegate(db, "review", "approve", proposal[:8]).stdout.splitlines()
    assert approved[0].startswith(f"approved proposal {proposal} at seq ")
    assert approved[1].startswith('  wrote Person{"name":"Eve"} (created) at seq ')


def test_token_list_shows_each_token_but_never_the_token(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    writegate(db, "init")
    token = writegate(db, "token", "create", "ingest-bot", "--role", "writer", "--note", "nightly")
    secret = token.stdout.strip()
    writegate(db, "token", "create", "auditor-1", "--role", "auditor")
    listed = writegate(db, "token", "list")
    assert secret not in listed.stdout
    lines = listed.stdout.splitlines()
    assert lines[0] == f"2 tokens in {db}.tokens.json"
    assert lines[1].startswith("ingest-bot  roles writer  scopes default  created ")
    assert lines[1].endswith("  (nightly)")
    assert lines[2] == f"  id {hashlib.sha256(secret.encode()).hexdigest()}"
    assert lines[3].startswith("auditor-1  roles auditor  scopes default  created ")
    shown = json.loads(writegate(db, "token", "list", "--format", "json").stdout)
    assert [(t["agent"], t["roles"], t["note"]) for t in shown["tokens"]] == [
        ("ingest-bot", ["writer"], "nightly"),
        ("auditor-1", ["auditor"], ""),
    ]
    assert secret not in json.dumps(shown)


def test_publishing_a_schema_says_what_it_published(tmp_path: Path) -> None:
    """init --schema and schema publish are writes too: a summary for people (it was 4 KB
    of JSON on one line), the result with --format json."""
    db = tmp_path / "log.db"
    init = writegate(db, "init", "--schema", str(EXAMPLE_SCHEMA))
    [ready, published] = init.stdout.splitlines()
    assert ready == f"log ready at {db} (head seq 0)"
    assert published.startswith("published schema sha256:")
    assert published.endswith("at seq 1: 5 labels, 8 relationship types")
    again = writegate(db, "schema", "publish", str(EXAMPLE_SCHEMA))
    assert again.stdout.startswith("schema sha256:")
    assert "is already the log's (5 labels, 8 relationship types)" in again.stdout
    (line,) = writegate(
        tmp_path / "b.db", "init", "--schema", str(EXAMPLE_SCHEMA), "--json"
    ).stdout.splitlines()  # one JSON value: the log made ready, and the schema published
    as_json = json.loads(line)["schema"]
    assert (as_json["status"], as_json["seq"], as_json["labels"]) == ("published", 1, 5)


def test_a_first_schema_with_an_unsearchable_property_makes_nothing_again(
    tmp_path: Path,
) -> None:
    """Issue 42: ``init`` on an empty log said it made the text index of a label again."""
    schema = tmp_path / "schema.yaml"
    schema.write_text(
        "nodes:\n  Paper:\n    merge_keys: [doi]\n    properties:\n"
        "      doi: {type: string}\n      abstract: {type: string, searchable: false}\n"
    )
    said = writegate(tmp_path / "log.db", "init", "--schema", str(schema)).stdout.splitlines()
    assert len(said) == 2, said
    assert said[1].startswith("published schema sha256:")
