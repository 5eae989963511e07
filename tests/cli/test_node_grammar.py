"""One way to name a node in every command (``cli.nodes``): ``Label:key=value``, or the
``Label{json}`` identity writegate prints, one shell word; a relationship is ``TYPE FROM
TO``. Each command that names a node answers the same to both words and to the spelling it
took before, which still works for one release with one note naming the new spelling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import writegate
from tests.conftest import EXAMPLE_SCHEMA
from writegate.cli.nodes import parse_node

ALICE, CAROL = "Person:name=Alice", "Person:name=Carol"
ALICE_ID, CAROL_ID = 'Person{"name":"Alice"}', 'Person{"name":"Carol"}'
THEN = ("--as-of", "2100-01-01T00:00:00Z")
JSON = ("--format", "json")

FROM_CAROL_TO_ALICE = ["--from", "Person", "-f", "name=Carol", "--to", "Person", "-t", "name=Alice"]
TO_INITECH = ["--to", "Organization", "-t", "name=Initech"]

# command -> (its words, the node words ({a}: Alice, {c}: Carol), the node words it took
# before (none: it is new), its options)
READS: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {
    "show node": (["show", "node"], ["{a}"], ["Person", "name=Alice"], [*THEN, *JSON]),
    "show relationship": (
        ["show", "relationship", "KNOWS"],
        ["{c}", "{a}"],
        FROM_CAROL_TO_ALICE,
        [*THEN, *JSON],
    ),
    "audit node": (["audit", "node"], ["{a}"], ["Person", "name=Alice"], [*JSON]),
    "audit relationship": (
        ["audit", "relationship", "KNOWS"],
        ["{c}", "{a}"],
        FROM_CAROL_TO_ALICE,
        [*JSON],
    ),
    "neighbors": (["neighbors"], ["{a}"], ["Person", "name=Alice"], [*JSON]),
    "open": (["open"], ["{a}", "{c}"], [], [*JSON]),
    "path": (
        ["path"],
        ["{c}", "Organization:name=Initech"],
        ["--from", "Person", "-f", "name=Carol", *TO_INITECH],
        [*JSON],
    ),
    "log --node": (["log", "--node"], ["{a}"], [], [*JSON]),
    "export dot --around": (["export", "dot", "--around"], ["{a}"], ["Person", "name=Alice"], []),
    "export mermaid --around": (
        ["export", "mermaid", "--around"],
        ["{a}"],
        ["Person", "name=Alice"],
        ["--depth", "2"],
    ),
}


@pytest.mark.parametrize("command", list(READS))
def test_each_read_names_a_node_by_either_word(history: Path, command: str) -> None:
    words, nodes, old, options = READS[command]

    def named(alice: str, carol: str) -> list[str]:
        return [alice if w == "{a}" else carol if w == "{c}" else w for w in nodes]

    said = writegate(history, *words, *named(ALICE, CAROL), *options)
    assert said.stderr == ""
    pasted = writegate(history, *words, *named(ALICE_ID, CAROL_ID), *options)
    assert pasted.stdout == said.stdout
    if old:  # the spelling the command took before: the same answer, and one note
        before = writegate(history, *words, *old, *options)
        assert before.stdout == said.stdout
        assert before.stderr.count("\n") == 1
        assert before.stderr.startswith("note: ")
        assert " is deprecated (it still works, for this release); now: " in before.stderr


CLAIM = ("--source", "hr.csv", "--method", "parsed")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "log.db"
    writegate(path, "init", "--schema", str(EXAMPLE_SCHEMA))
    return path


def _json(db: Path, *args: str) -> dict[str, object]:
    done = writegate(db, *args, *JSON)
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_every_write_names_a_node_by_the_one_grammar(db: Path) -> None:
    ada = _json(db, "write", "node", "Person:name=Ada Lovelace", "-p", "age=36", *CLAIM)
    assert (ada["label"], ada["merge_keys"]) == ("Person", {"name": "Ada Lovelace"})
    again = _json(db, "write", "node", 'Person{"name":"Ada Lovelace"}', "-p", "age=37", *CLAIM)
    assert (again["version"], again["created"]) == (2, False)
    old = writegate(db, "write", "node", "Person", "-k", "name=Ada Lovelace", *CLAIM, *JSON)
    assert json.loads(old.stdout)["version"] == 2  # the same values again: unchanged
    assert old.stderr == (
        "note: write node Person -k … is deprecated (it still works, for this release); now: "
        "write node 'Person:name=Ada Lovelace'\n"
    )
    ends = ("Person:name=Ada Lovelace", "Organization:name=Analytical Engines")
    wrote = _json(db, "write", "relationship", "WORKS_FOR", *ends, "--merge-endpoints", *CLAIM)
    assert wrote["stubs_created"] == [
        {"label": "Organization", "merge_keys": {"name": "Analytical Engines"}}
    ]
    deleted = _json(db, "delete", "relationship", "WORKS_FOR", *ends, *CLAIM)
    assert deleted["status"] == "deleted"
    gone = _json(db, "delete", "node", 'Organization{"name":"Analytical Engines"}', *CLAIM)
    assert gone["status"] == "deleted"


def test_a_near_duplicate_is_written_with_resolution_new(db: Path) -> None:
    writegate(db, "write", "node", "Person:name=Ada Lovelace", *CLAIM)
    refused = writegate(db, "write", "node", "Person:name=A. Lovelace", *CLAIM, code=1)
    assert refused.stderr.startswith("error: POSSIBLE_DUPLICATE: ")
    written = _json(db, "write", "node", "Person:name=A. Lovelace", "--resolution", "new", *CLAIM)
    assert (written["created"], written["merge_keys"]) == (True, {"name": "A. Lovelace"})
    exists = writegate(db, "write", "node", "Person:name=A. Lovelace", "--create-only", *CLAIM,
                       code=1)  # fmt: skip
    assert exists.stderr.startswith("error: NODE_ALREADY_EXISTS")


def test_merge_names_survivor_and_duplicate_as_node_words(db: Path) -> None:
    for name in ("Alan Turing", "alan turing"):
        writegate(db, "write", "node", f"Person:name={name}", "--resolution", "new", *CLAIM)
    merged = _json(db, "merge", "Person:name=Alan Turing", 'Person{"name":"alan turing"}', *CLAIM)
    assert (merged["survivor"], merged["merged"]) == (
        'Person{"name":"Alan Turing"}',
        'Person{"name":"alan turing"}',
    )
    undone = _json(db, "unmerge", str(merged["merge"]), *CLAIM)
    assert undone["restored"] == 'Person{"name":"alan turing"}'
    old = writegate(db, "merge", "Person", "-s", "name=Alan Turing", "-d", "name=alan turing",
                    *CLAIM)  # fmt: skip
    assert old.stderr == (
        "note: merge Person -s … -d … is deprecated (it still works, for this release); now: "
        "merge 'Person:name=Alan Turing' 'Person:name=alan turing'\n"
    )
    assert old.stdout.startswith('merged Person{"name":"alan turing"} into ')


@pytest.mark.parametrize(
    ("word", "message"),
    [
        ("Person", "NODE 'Person' is not Label:key=value[,key=value...] or Label{json keys}"),
        ("Person:", "NODE 'Person:' names no key: Person:key=value"),
        ("Person:name", "NODE 'Person:name': 'name' is not key=value"),
        ('Person:name="Ada', "NODE 'Person:name=\"Ada': the quoted value of name does not end"),
        ("Person{name:Ada}", "NODE 'Person{name:Ada}' is not Label{json keys}"),
    ],
)
def test_a_word_that_names_no_node_is_one_line(history: Path, word: str, message: str) -> None:
    refused = writegate(history, "neighbors", word, code=2)
    assert refused.stderr.startswith(f"error: {message}"), refused.stderr
    assert refused.stderr.count("\n") == 1


def test_values_read_as_json_when_they_can() -> None:
    """A comma inside quotes is the value's; a number is a number unless quoted."""
    assert parse_node('Person:name="Smith, John",born=1815').keys == {
        "name": "Smith, John",
        "born": 1815,
    }
    assert parse_node('Doc:id="1815",url=http://x/?a=b').keys == {
        "id": "1815",
        "url": "http://x/?a=b",
    }
    assert parse_node('Person{"name":"Ada"}').word == "Person:name=Ada"
    assert parse_node('Person:name="Smith, John"').word == 'Person:name="Smith, John"'


@pytest.mark.parametrize("command", ["show", "audit"])
def test_a_relationship_is_named_by_the_identity_writegate_prints(
    history: Path, command: str
) -> None:
    printed = f"({CAROL_ID})-[KNOWS]->({ALICE_ID})"
    options = [*THEN, *JSON] if command == "show" else [*JSON]
    by_words = writegate(history, command, "relationship", "KNOWS", CAROL, ALICE, *options)
    pasted = writegate(history, command, "relationship", printed, *options)
    assert pasted.stdout == by_words.stdout
    assert json.loads(pasted.stdout)["identity"] == printed
