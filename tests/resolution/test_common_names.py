"""A name alone lands a write only where it identifies: among many Michaels and many Beckers,
a second "Michael Becker" is asked about, never landed (two people of one name are as likely
as one); a name with a word no other node holds still lands; and how common a word is, is
read in a bounded walk of the index, nothing kept for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected, WriteNodeResult
from writegate.gate.resolution.commonness import identifies, namesakes
from writegate.projections.state.blocking import SEP, holders, sound

SCHEMA = {
    "nodes": {
        "Person": {
            "merge_keys": ["key"],
            "properties": {"name": {"type": "string"}},
            "resolution": {"policy": "auto", "kind": "person", "name": "name"},
        }
    }
}
FIRST = ["Thomas", "Andreas", "Stefan", "Peter", "Klaus", "Jürgen", "Frank", "Uwe"]
LAST = ["Schmidt", "Müller", "Schneider", "Fischer", "Weber", "Wagner", "Hoffmann", "Koch"]


@pytest.fixture
def gate(any_db: str | Path) -> Iterator[Gate]:
    with Gate.open(any_db, default_actor=Actor(agent="a")) as g:
        assert g.publish_schema(SCHEMA).status == "published"
        for n, first in enumerate(FIRST):  # many Beckers, many Michaels: none of them one
            write(g, f"b{n}", f"{first} Becker", new=True)
        for n, last in enumerate(LAST):
            write(g, f"m{n}", f"Michael {last}", new=True)
        write(g, "mb", "Michael Becker", new=True)
        write(g, "gh", "Grace Hopper", new=True)
        yield g


def write(gate: Gate, key: str, name: str, *, new: bool = False) -> object:
    return gate.write_node(
        label="Person",
        merge_keys={"key": key},
        properties={"name": name},
        source="s",
        extraction_method="api",
        resolution="new" if new else None,
    )


def test_a_name_whose_every_word_is_common_is_asked_about_never_landed(gate: Gate) -> None:
    out = write(gate, "mb2", "michael becker")
    assert isinstance(out, Rejected), out
    assert out.error_code == "POSSIBLE_DUPLICATE"
    (candidate,) = out.details["candidates"]
    assert candidate["merge_keys"] == {"key": "mb"}
    assert candidate["verdict"] == "possible"
    (why,) = [r for r in candidate["reasons"] if "of this name to be expected" in r]
    assert "about 3.76 other Person nodes" in why  # of 17 others, 8 Beckers and 8 Michaels


def test_a_name_with_a_word_no_other_node_holds_still_lands(gate: Gate) -> None:
    out = write(gate, "gh2", "grace hopper")
    assert isinstance(out, WriteNodeResult), out
    assert out.merge_keys == {"key": "gh"}
    assert out.resolved_from is not None


def test_namesakes_are_the_others_expected_to_share_every_word() -> None:
    assert namesakes(18, [9, 9]) == pytest.approx(17 * (8 / 17) ** 2)  # the candidate one of 9
    assert namesakes(18, [9, 1]) == 0.0  # no other node holds the second word
    assert namesakes(1, [1, 1]) == 0.0
    assert identifies(0.0, 0.98)
    assert identifies(0.02, 0.98)
    assert not identifies(0.03, 0.98)


def test_a_word_is_counted_in_a_bounded_read_of_its_rows(gate: Gate) -> None:
    conn = gate.log.connection()
    block = f"Person/p:{sound('michael')}{SEP}"
    assert holders(conn, block, "michael", 100) == 9  # its 8 namesakes and Michael Becker
    assert holders(conn, block, "michael", 3) == 3  # a word held by more counts as the cap
    assert holders(conn, f"Person/p:{sound('hopper')}{SEP}", "hopper", 100) == 1
