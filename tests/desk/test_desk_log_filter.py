"""The desk's log filter says what it was given and what it did not understand (issue 42,
defect 2): the merge keys box shows the keys typed, not a Python object, and so does the
live-follow address; a label without keys, or keys that are not JSON, is refused in words
rather than answered with every event."""

from __future__ import annotations

import re

from tests.desk.conftest import Desk, signed_in


def test_the_log_filter_shows_the_keys_it_was_given(desk: Desk) -> None:
    with signed_in(desk, "auditor") as (client, _):
        page = client.get("/log", params={"label": "Person", "keys": '{"name":"Ada"}'})
        every = client.get("/log")
    assert page.status_code == 200, page.text
    assert "built-in method" not in page.text
    box = re.search(r'id="f-keys" name="keys" value="([^"]*)"', page.text)
    assert box is not None
    assert box.group(1) == "{&#34;name&#34;:&#34;Ada&#34;}"
    follow = re.search(r'data-follow="([^"]*)"', page.text)
    assert follow is not None
    assert "keys=%7B%22name%22%3A%22Ada%22%7D" in follow.group(1)
    assert 0 < page.text.count("<tr><td>") < every.text.count("<tr><td>")  # Ada's events


def test_a_node_filter_it_cannot_read_is_refused_in_words(desk: Desk) -> None:
    with signed_in(desk, "auditor") as (client, _):
        alone = client.get("/log", params={"label": "Person"})
        not_json = client.get("/log", params={"label": "Person", "keys": "name=Ada"})
        followed = client.get("/log.json", params={"label": "Person", "keys": "{"})
    for answer in (alone, not_json):
        assert answer.status_code == 400
        assert "merge keys as JSON" in answer.text
    assert followed.status_code == 400
    assert "merge keys as JSON" in followed.json()["error"]
