"""The desk's guards, asked over HTTP of ``writegate serve --http``: who signs in, what a
reader sees, which POSTs are refused (appending nothing), and how an agent's markup comes
out. The browser tests (``test_desk_browser``) show the same from a real page."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import pytest

from tests.desk.conftest import HOSTILE, HR, SCRIPT, Desk, signed_in
from tests.server.harness import http_agent
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.server.tokens import create_token, revoke_agent


def test_a_page_asks_a_stranger_to_sign_in_first(desk: Desk) -> None:
    answer = httpx2.get(desk.url + "/", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/desk/signin"


def test_a_token_signs_in_into_an_httponly_strict_cookie(desk: Desk) -> None:
    with signed_in(desk, "auditor") as (client, _):
        cookie = next(c for c in client.cookies.jar if c.name == "wg_desk")
        assert cookie.has_nonstandard_attr("HttpOnly")
        assert cookie.get_nonstandard_attr("SameSite") == "strict"
        assert "auditor-person" in client.get("/").text


def test_an_unknown_token_signs_nobody_in(desk: Desk) -> None:
    with httpx2.Client(base_url=desk.url, timeout=30) as client:
        form = client.get("/signin").text
        check = re.search(r'name="csrf" value="([^"]+)"', form)
        assert check is not None
        answer = client.post("/signin", data={"csrf": check.group(1), "token": "wg_not-a-token"})
        assert answer.status_code == 401
        assert "wg_desk" not in {c.name for c in client.cookies.jar}


def test_a_reader_sees_no_review_controls_and_no_queue(desk: Desk) -> None:
    with signed_in(desk, "reader") as (client, _):
        home = client.get("/").text
        assert "/desk/review" not in home
        assert client.get("/review").status_code == 404
        node = client.get("/node", params={"label": "Person", "keys": '{"name":"Ada"}'})
        assert node.status_code == 200
        assert "Approve" not in node.text


def test_a_readers_decision_is_refused_and_appends_nothing(desk: Desk) -> None:
    with signed_in(desk, "reviewer") as (reviewer, _):
        proposal = re.search(r'action="/desk/review/([0-9a-f]+)"', reviewer.get("/review").text)
    assert proposal is not None
    before = desk.head()
    with signed_in(desk, "reader") as (client, csrf):
        answer = client.post(
            f"/review/{proposal.group(1)}",
            data={"csrf": csrf, "decision": "approve", "note": "looks fine"},
        )
    assert answer.status_code == 403
    assert desk.head() == before


def test_a_decision_without_the_csrf_token_is_refused_and_appends_nothing(desk: Desk) -> None:
    before = desk.head()
    with signed_in(desk, "reviewer") as (client, csrf):
        proposal = re.search(r'action="/desk/review/([0-9a-f]+)"', client.get("/review").text)
        assert proposal is not None
        target = f"/review/{proposal.group(1)}"
        missing = client.post(target, data={"decision": "approve", "note": "forged"})
        wrong = client.post(target, data={"csrf": csrf[::-1], "decision": "approve"})
        elsewhere = client.post(
            target,
            data={"csrf": csrf, "decision": "approve"},
            headers={"Origin": "http://evil.example"},
        )
    assert (missing.status_code, wrong.status_code, elsewhere.status_code) == (403, 403, 403)
    assert desk.head() == before


def test_an_agents_markup_comes_out_as_text(desk: Desk) -> None:
    with signed_in(desk, "auditor") as (client, _):
        pages = [
            client.get("/search", params={"q": "onerror"}),
            client.get("/node", params={"label": "Person", "keys": '{"name":"Ada"}'}),
            client.get("/node", params={"label": "Person", "keys": f'{{"name":"{HOSTILE}"}}'}),
            client.get("/log"),
        ]
    for page in pages:
        assert page.status_code == 200, page.text
        assert "<img src=x" not in page.text
        assert "<script>alert" not in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in pages[0].text
    assert SCRIPT.replace("<", "&lt;").replace(">", "&gt;") in pages[2].text


def test_a_node_page_shows_the_facts_as_they_stood_at_a_moment(desk: Desk) -> None:
    ada = {"label": "Person", "keys": '{"name":"Ada"}'}
    with signed_in(desk, "auditor") as (client, _):
        now = client.get("/node", params=ada)
        before = client.get("/node", params={**ada, "as_of": "2000-01-01T00:00:00Z"})
        later = client.get("/node", params={**ada, "as_of": "2999-01-01T00:00:00Z"})
        unreadable = client.get("/node", params={**ada, "as_of": "yesterday"})
    assert now.status_code == 200
    assert "Lisbon" in now.text
    assert before.status_code == 404  # Ada was not yet written
    assert later.status_code == 200
    assert "as the log knew them at 2999-01-01T00:00:00Z" in later.text
    assert "Lisbon" in later.text
    assert unreadable.status_code == 400


def test_an_auditor_sees_a_superseded_value_beside_who_had_held_it(desk: Desk) -> None:
    with signed_in(desk, "auditor") as (client, _):
        home = client.get("/").text
        page = client.get("/conflicts")
        duplicates = client.get("/duplicates")
    assert "/desk/conflicts" in home
    assert page.status_code == 200
    row = next(r for r in page.text.split("<tr>") if "Porto" in r)
    assert "superseded" in row
    assert "hr-import" in row
    assert duplicates.status_code == 200


def test_a_reader_has_no_audit_pages(desk: Desk) -> None:
    with signed_in(desk, "reader") as (client, _):
        home = client.get("/").text
        answers = [client.get(p).status_code for p in ("/conflicts", "/duplicates", "/log")]
    assert "/desk/conflicts" not in home
    assert answers == [404, 404, 404]


def test_signing_out_ends_the_session_for_its_cookie(desk: Desk) -> None:
    with signed_in(desk, "auditor") as (client, csrf):
        cookie = client.cookies.get("wg_desk")
        assert client.post("/signout", data={"csrf": csrf}).url.path == "/desk/signin"
        again = httpx2.get(desk.url + "/", cookies={"wg_desk": cookie or ""})
    assert again.status_code == 303  # back to the sign-in form


def test_a_revoked_token_signs_its_sessions_out(desk: Desk) -> None:
    token = create_token(Path(str(desk.db) + ".tokens.json"), "short-lived", ("auditor",))
    with httpx2.Client(base_url=desk.url, timeout=30) as client:
        form = client.get("/signin").text
        check = re.search(r'name="csrf" value="([^"]+)"', form)
        assert check is not None
        client.post("/signin", data={"csrf": check.group(1), "token": token})
        assert client.get("/").status_code == 200
        revoke_agent(Path(str(desk.db) + ".tokens.json"), "short-lived")
        assert client.get("/").status_code == 303


def test_the_overview_counts_again_once_the_log_has_moved(desk: Desk) -> None:
    head = re.compile(r'id="head-seq">(\d+)<')
    with signed_in(desk, "auditor") as (client, _):
        before = head.search(client.get("/").text)
        with Gate.open(desk.db) as gate:
            written = gate.write_node(
                label="Organization",
                merge_keys={"name": "Initech"},
                actor=Actor(agent="hr-import"),
                **HR,
            )
        assert written.status == "written", written
        after = client.get("/").text
    assert before is not None
    moved = head.search(after)
    assert moved is not None
    assert int(moved.group(1)) == int(before.group(1)) + 1
    assert "<td>Organization</td><td>1</td>" in after


MERGE = {"label": "Person", "survivor_keys": '{"name":"Dee"}', "duplicate_keys": '{"name":"Eve"}'}


def test_a_reviewer_merges_a_duplicate_and_undoes_it(desk: Desk) -> None:
    with signed_in(desk, "reviewer") as (client, csrf):
        dee = client.get("/node", params={"label": "Person", "keys": '{"name":"Dee"}'}).text
        assert 'action="/desk/merge"' in dee
        merged = client.post("/merge", data={**MERGE, "csrf": csrf, "reason": "the same person"})
        assert merged.status_code == 200, merged.text
        assert "Merged Person" in merged.text
        undo = re.search(r'name="merge" value="([^"]+)"', merged.text)
        assert undo is not None
        gone = client.get("/search", params={"q": "Eve"}).text
        back = client.post("/unmerge", data={"csrf": csrf, "merge": undo.group(1), "reason": "no"})
        assert back.status_code == 200, back.text
        assert "Undid merge" in back.text
        eve = client.get("/node", params={"label": "Person", "keys": '{"name":"Eve"}'})
    assert "Oslo" in eve.text
    assert "Person: Eve</a>" not in gone  # folded into Dee while merged


def test_a_readers_merge_is_refused_and_appends_nothing(desk: Desk) -> None:
    before = desk.head()
    with signed_in(desk, "reader") as (client, csrf):
        dee = client.get("/node", params={"label": "Person", "keys": '{"name":"Dee"}'}).text
        refused = client.post("/merge", data={**MERGE, "csrf": csrf, "reason": "forged"})
    assert 'action="/desk/merge"' not in dee
    assert refused.status_code == 403
    assert desk.head() == before


def test_the_report_draws_each_agents_writes_and_refusals(desk: Desk) -> None:
    with signed_in(desk, "auditor") as (client, _):
        page = client.get("/report")
    assert page.status_code == 200, desk.server.said()[-3000:]
    assert 'aria-label="writes by hr-import"' in page.text
    assert 'aria-label="writes refused for hr-import"' in page.text
    chart = page.text.split('<figure class="chart">')[1].split("</figure>")[0]
    assert "<figcaption>hr-import: " in chart
    assert '<rect class="w"' in chart  # its writes drawn over time, server-side


@pytest.mark.anyio
async def test_the_logs_json_is_the_audit_events_tools_answer(desk: Desk) -> None:
    """A page shows what the tool answers: the log's page, as JSON, is ``audit_events``'
    structured result for the same token."""
    async with http_agent(desk.server.url, desk.tokens["auditor"]) as agent:
        outcome = await agent.call("audit_events", {"agent": "hr-import"})
    with signed_in(desk, "auditor") as (client, _):
        page = client.get("/log.json", params={"agent": "hr-import"})
    assert not outcome.is_error
    assert page.json() == outcome.data


def test_the_overview_names_the_agents_writing_now_to_an_auditor_only(desk: Desk) -> None:
    with signed_in(desk, "auditor") as (client, _):
        home = client.get("/").text
    with signed_in(desk, "reader") as (client, _):
        read = client.get("/").text
    table = home.split('<table id="writers">')[1].split("</table>")[0]
    assert "hr-import</a></td>" in table
    assert "chat-agent</a></td>" in table
    lasts = [int(seq) for seq in re.findall(r'href="/desk/event/(\d+)"', table)]
    assert lasts == sorted(lasts, reverse=True)  # the latest writer first
    assert "Writing now" not in read


def test_no_template_puts_tojson_in_an_attribute() -> None:
    """``tojson`` leaves ``"`` as it is (issue 42, defect 10): it belongs in a script's
    JSON only; an attribute takes ``keys_json``, which autoescape quotes."""
    templates = Path(__file__).resolve().parents[2] / "gate" / "desk" / "templates"
    for template in templates.glob("*.html"):
        assert not re.search(r'="[^"]*\|\s*tojson', template.read_text()), template.name
