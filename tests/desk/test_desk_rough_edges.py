"""The desk's rough edges of issue 42: a node's key is listed once, a list reads as its
items (not Python's ``['a', 'b']``), and a write refused as a probable duplicate is not a
link to a node that was never written ("Not found")."""

from __future__ import annotations

import re
from pathlib import Path

from tests.desk.conftest import HR, Desk, signed_in
from writegate.eventlog import Actor
from writegate.gate import Gate, Rejected
from writegate.gate.audit.duplicates import audit_duplicates
from writegate.gate.desk.app import _environment, node_href

ROWS = re.compile(r'<th scope="row">([^<]+)</th>')


def test_a_node_page_lists_its_key_once_and_a_list_as_its_items(desk: Desk) -> None:
    with Gate.open(desk.db) as gate:
        written = gate.write_node(
            label="Person",
            merge_keys={"name": "Fay"},
            properties={"nicknames": ["mathematics", "programming"]},
            actor=Actor(agent="hr-import"),
            **HR,
        )
    assert written.status == "written", written
    with signed_in(desk, "auditor") as (client, _):
        page = client.get("/node", params={"label": "Person", "keys": '{"name":"Fay"}'}).text
    facts = page.split('<table class="facts-table">')[1].split("</table>")[0]
    assert ROWS.findall(facts) == ["name (key)", "nicknames"]
    assert "mathematics, programming" in facts
    assert "[&#39;mathematics&#39;" not in page


def test_a_write_refused_as_a_duplicate_is_named_without_a_link(tmp_path: Path) -> None:
    schema = {
        "nodes": {
            "Person": {
                "merge_keys": ["name"],
                "properties": {"name": {"type": "string"}},
                "resolution": {"policy": "propose"},
            }
        }
    }
    with Gate.open(tmp_path / "d.db", create=True, default_actor=Actor(agent="a")) as gate:
        assert gate.publish_schema(schema).status == "published"
        gate.write_node(label="Person", merge_keys={"name": "Alan Turing"}, **HR)
        refused = gate.write_node(label="Person", merge_keys={"name": "alan  turing"}, **HR)
        assert isinstance(refused, Rejected), refused
        found = audit_duplicates(gate.log)
    html = _environment().get_template("duplicates.html").render(found=found, may={}, title="D")
    asked = node_href("Person", {"name": "alan  turing"}).replace("&", "&amp;")
    assert asked not in html  # never written: its page is "Not found"
    assert "alan  turing" in html
    assert node_href("Person", {"name": "Alan Turing"}).replace("&", "&amp;") in html


def test_a_nodes_history_pages_on_to_its_later_writes(desk: Desk) -> None:
    """History is oldest first: its next page holds the later writes, and what stood before
    the first of them is on the page before (never said to be "not set")."""
    with Gate.open(desk.db) as gate:
        for n in range(52):
            written = gate.write_node(
                label="Person",
                merge_keys={"name": "Gus"},
                properties={"city": f"City {n}"},
                actor=Actor(agent="hr-import"),
                **HR,
            )
            assert written.status == "written", written
    gus = {"label": "Person", "keys": '{"name":"Gus"}'}
    with signed_in(desk, "auditor") as (client, _):
        first = client.get("/node", params=gus).text
        later = re.search(r'<a href="([^"]+)">Later writes</a>', first)
        assert later is not None, first
        second = client.get(later.group(1).replace("&amp;", "&").removeprefix("/desk")).text
    history = second.split('id="history-h"')[1]
    assert "City 51" in history
    assert "City 51" not in first.split('id="history-h"')[1]
    assert history.index("on an earlier page") < history.index("City 50")
    assert "not set" not in history
