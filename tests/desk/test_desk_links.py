"""A desk page links only where its viewer may follow (issue 42, defect 11): a reviewer
deciding on a change may see the events behind it (the policy grants reviewers
``audit_events``, over MCP as at the desk), and a reader, who may not, is shown the event's
number without a link that would answer "Not found"."""

from __future__ import annotations

import re

import pytest

from tests.desk.conftest import Desk, signed_in
from tests.server.harness import http_agent

ADA = {"label": "Person", "keys": '{"name":"Ada"}'}
EVENT_LINK = re.compile(r'href="/desk(/event/\d+)"')


def test_a_reviewer_follows_every_event_link_of_a_node_page_and_the_review_page(
    desk: Desk,
) -> None:
    with signed_in(desk, "reviewer") as (client, _):
        node = client.get("/node", params=ADA).text
        review = client.get("/review").text
        links = set(EVENT_LINK.findall(node)) | set(EVENT_LINK.findall(review))
        answers = {link: client.get(link).status_code for link in links}
    assert len(EVENT_LINK.findall(node)) >= 2  # the current version's and its history's
    assert EVENT_LINK.findall(review)
    assert set(answers.values()) == {200}, answers


def test_a_reader_is_shown_no_link_it_could_not_follow(desk: Desk) -> None:
    with signed_in(desk, "reader") as (client, _):
        node = client.get("/node", params=ADA)
        followed = client.get("/event/1").status_code
    assert node.status_code == 200
    assert followed == 404  # not the reader's to see
    assert EVENT_LINK.findall(node.text) == []
    assert re.search(r"event \d+", node.text)  # still said which event


@pytest.mark.anyio
async def test_the_reviewers_agent_reads_the_same_events_over_mcp(desk: Desk) -> None:
    """One policy (``policies.cedar``): what the reviewer follows at the desk, its token's
    agent may call over MCP."""
    async with http_agent(desk.server.url, desk.tokens["reviewer"]) as agent:
        assert "audit_events" in await agent.tool_names()
        page = await agent.call("audit_events", {"limit": 1})
    assert not page.is_error, page.data
