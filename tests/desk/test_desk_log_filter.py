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


def test_the_log_filter_keeps_the_events_between_two_times(desk: Desk) -> None:
    """Issue 42, defect 11: the log filtered from and to a time, the boxes showing them and
    the next page and live-follow addresses carrying them."""
    with signed_in(desk, "auditor") as (client, _):
        every = client.get("/log").text.count("<tr><td>")
        since = client.get("/log", params={"since": "2000-01-01T00:00Z"})
        later = client.get("/log", params={"since": "2999-01-01T00:00Z"})
        before = client.get("/log", params={"until": "2000-01-01T00:00Z"})
        followed = client.get("/log.json", params={"until": "2000-01-01T00:00Z"})
    assert since.status_code == later.status_code == before.status_code == 200
    assert since.text.count("<tr><td>") == every > 0
    assert later.text.count("<tr><td>") == before.text.count("<tr><td>") == 0
    assert 'id="f-since" name="since" value="2000-01-01T00:00Z"' in since.text
    follow = re.search(r'data-follow="([^"]*)"', since.text)
    assert follow is not None
    assert "since=2000-01-01T00%3A00Z" in follow.group(1)
    assert followed.json()["events"] == []


def test_a_time_it_cannot_read_is_refused_in_words(desk: Desk) -> None:
    with signed_in(desk, "auditor") as (client, _):
        page = client.get("/log", params={"since": "yesterday"})
        followed = client.get("/log.json", params={"until": "31/01/2026"})
    assert page.status_code == 400
    assert "From &#39;yesterday&#39; is not a time" in page.text
    assert "ISO 8601" in page.text
    assert followed.status_code == 400
    assert "31/01/2026" in followed.json()["error"]
