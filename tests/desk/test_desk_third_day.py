"""What a reviewer and an auditor met on the desk's third day: a held write about a personal
node made every held write's "Stands now" say "not set" (the queue opened the nodes by the
personal one's pseudonym, and the one refused read lost them all); a value past what the
log can hold — a seq or cursor SQLite cannot hold, a time that leaves the calendar once in
UTC, a merge key past 64 bits — was an Internal Server Error, not a page that says so."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.desk.conftest import Desk, signed_in
from tests.server.harness import http_server
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.server.tokens import create_token

SCHEMA = {
    "nodes": {
        "Person": {
            "personal": True,
            "merge_keys": ["name"],
            "review_below": 0.5,
            "properties": {"name": {"type": "string"}, "role": {"type": "string"}},
        },
        "Company": {
            "merge_keys": ["name"],
            "review_below": 0.5,
            "properties": {"name": {"type": "string"}, "city": {"type": "string"}},
        },
    },
    "relationships": {"WORKS_AT": {"from": ["Person"], "to": ["Company"]}},
}
SURE: dict[str, Any] = {"source": "hr.csv", "extraction_method": "parsed", "reliability": 0.95}
UNSURE: dict[str, Any] = {"source": "chat", "extraction_method": "llm", "reliability": 0.3}  # held


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    folder = tmp_path_factory.mktemp("third-day")
    db = folder / "desk.db"
    with Gate.open(db, create=True, default_actor=Actor(agent="hr-import")) as gate:
        assert gate.publish_schema(SCHEMA).status == "published"
        for label, keys, properties in (
            ("Company", {"name": "Initech"}, {"city": "Berlin"}),
            ("Person", {"name": "Ada"}, {"role": "engineer"}),
        ):
            assert gate.write_node(label=label, merge_keys=keys, properties=properties, **SURE)
        chat = Actor(agent="chat-agent")
        for label, keys, properties in (
            ("Company", {"name": "Initech"}, {"city": "Paris"}),
            ("Person", {"name": "Ada"}, {"role": "spy"}),  # personal: named by a pseudonym
        ):
            held = gate.write_node(
                label=label, merge_keys=keys, properties=properties, actor=chat, **UNSURE
            )
            assert held.status == "proposed", held
    tokens_file = Path(str(db) + ".tokens.json")
    tokens = {role: create_token(tokens_file, f"{role}-person", (role,)) for role in ("reviewer",)}
    tokens["auditor"] = create_token(tokens_file, "auditor-person", ("auditor",))
    with http_server(db) as server:
        yield Desk(server, db, tokens)


def _proposals(page: str) -> dict[str, str]:
    """Each held write's article on the review page, by the node its heading names."""
    found = re.findall(r'<article class="proposal"[^>]*>\s*<h2[^>]*>([^<]+)</h2>(.*?)</article>',
                       page, re.S)  # fmt: skip
    return {heading.strip(): body for heading, body in found}


def test_a_personal_nodes_held_write_leaves_every_node_standing_beside_its_own(
    desk: Desk,
) -> None:
    with signed_in(desk, "reviewer") as (client, _):
        page = client.get("/review").text
    shown = _proposals(page)
    company = shown["write_node Company{&#34;name&#34;:&#34;Initech&#34;}"]
    person = shown["write_node Person{&#34;name&#34;:&#34;Ada&#34;}"]  # not its pseudonym
    assert "Berlin" in company
    assert "engineer" in person
    assert "not set" not in company + person
    assert "A node not written yet" not in page


@pytest.mark.parametrize(
    "path",
    [
        "/event/99999999999999999999",
        "/log?cursor=99999999999999999999",
        "/log.json?cursor=99999999999999999999",
        "/log?since=9999-12-31T23:59:59-23:59",
        "/log?until=0001-01-01T00:00:00%2B14:00",
        '/node?label=Company&keys={"name":"Initech"}&cursor=99999999999999999999',
        '/node?label=Company&keys={"name":"Initech"}&as_of=9999-12-31T23:59:59-23:59',
        '/node?label=Company&keys={"name":99999999999999999999}',
        "/conflicts?since=9999-12-31T23:59:59-23:59",
        "/duplicates?until=0001-01-01T00:00:00%2B14:00",
    ],
)
def test_a_value_past_what_the_log_holds_is_a_page_saying_so(desk: Desk, path: str) -> None:
    with signed_in(desk, "auditor") as (client, _):
        answer = client.get(path)
        after = client.get("/log")  # the connection still serves
    assert answer.status_code != 500, answer.text
    said = re.sub(r"\s+", " ", answer.text)
    reasons = ("leaves the calendar once in UTC", "cursor is not one this tool returned",
               "past a 64-bit integer", "Not found", "Not understood")  # fmt: skip
    assert any(reason in said for reason in reasons), said[-1500:]
    assert after.status_code == 200
