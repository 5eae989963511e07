"""The desk in a real browser: Debian's Chromium, headless, driven by Playwright (no
browser is downloaded). One browser for the module; each test its own context (cookies).

A reviewer approves one held write and rejects another; an auditor goes from a search hit
to the event and the observation behind a value in three clicks; a node named with markup
fires no dialog on any page; a reader's forged POST is refused. Every page is shot at a
desktop and a narrow width into ``build/desk-shots`` (kept as the run's artefacts)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Dialog, Page, expect, sync_playwright

from tests.conftest import ROOT
from tests.desk.conftest import CHAT, HOSTILE, HR, SAID, Desk
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.observations import ObservationResult

SHOTS = ROOT / "build" / "desk-shots"
WIDTHS = {"desktop": (1280, 800), "narrow": (390, 844)}


def chromium() -> str:
    """Debian's Chromium (``make test`` and ``.ci/run`` install it when missing)."""
    found = shutil.which("chromium")
    assert found is not None, "chromium is not installed: apt-get install chromium"
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield launched
        launched.close()


def node_url(desk: Desk, name: str) -> str:
    keys = json.dumps({"name": name}, separators=(",", ":"))
    return f"{desk.url}/node?" + urlencode({"label": "Person", "keys": keys})


def sign_in(browser: Browser, desk: Desk, role: str) -> Page:
    """A fresh browser context signed in as ``role``'s person, by keyboard."""
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.goto(desk.url + "/")
    expect(page).to_have_title("Sign in · writegate desk")
    page.keyboard.press("Tab")  # the skip link
    page.keyboard.press("Tab")
    page.keyboard.type(desk.tokens[role])
    page.keyboard.press("Enter")
    expect(page).to_have_title("Overview · writegate desk")
    return page


def proposal_of(page: Page, name: str) -> str:
    """The review form's action for the held write to Person ``name``."""
    article = page.locator("article.proposal", has_text=f'Person{{"name":"{name}"}}')
    action = article.locator("form.decide").get_attribute("action")
    assert action is not None
    return action


def test_a_reviewer_approves_a_held_write_and_the_node_shows_it_with_provenance(
    browser: Browser, desk: Desk
) -> None:
    page = sign_in(browser, desk, "reviewer")
    page.get_by_role("link", name="Review").click()
    article = page.locator("article.proposal", has_text='Person{"name":"Ada"}')
    expect(article).to_contain_text("engineer")  # what it would write
    expect(article).to_contain_text("Lisbon")  # beside what stands now
    article.get_by_label("Reason").fill("confirmed with Ada")
    page.keyboard.press("Tab")  # to Approve, by keyboard
    page.keyboard.press("Enter")
    expect(page.locator("#outcome")).to_contain_text("approved")
    page.goto(node_url(desk, "Ada"))
    expect(page.locator('td[data-property="role"]')).to_have_text("engineer")
    provenance = page.locator("dl.prov")
    expect(provenance).to_contain_text("chat-agent")
    expect(provenance).to_contain_text("llm")
    page.context.close()


def test_a_reviewer_rejects_a_held_write_and_it_never_appears(browser: Browser, desk: Desk) -> None:
    page = sign_in(browser, desk, "reviewer")
    page.goto(desk.url + "/review")
    article = page.locator("article.proposal", has_text='Person{"name":"Bob"}')
    article.get_by_label("Reason").fill("no such person")
    article.get_by_role("button", name="Reject").click()
    expect(page.locator("#outcome")).to_contain_text("rejected")
    expect(page.locator("article.proposal", has_text='Person{"name":"Bob"}')).to_have_count(0)
    page.goto(desk.url + "/search?q=Bob")
    expect(page.locator("main")).to_contain_text("Nothing found.")
    assert page.goto(node_url(desk, "Bob")).status == 404  # type: ignore[union-attr]
    page.context.close()


def test_an_auditor_goes_from_a_search_hit_to_the_event_and_observation_in_three_clicks(
    browser: Browser, desk: Desk
) -> None:
    page = sign_in(browser, desk, "auditor")
    page.goto(desk.url + "/search?q=Ada")
    page.locator("ol.hits a", has_text="Ada").first.click()  # 1: the node
    lisbon = page.locator("ol.timeline li", has_text="Lisbon")
    lisbon.get_by_role("link", name="event").first.click()  # 2: the event behind the value
    expect(page.locator("main")).to_contain_text("hr.csv")
    page.locator("main a", has_text="observation").first.click()  # 3: what was said
    expect(page.locator("blockquote.observed")).to_have_text(SAID)
    page.context.close()


def test_the_logs_last_page_shows_new_events_as_they_are_appended(
    browser: Browser, desk: Desk
) -> None:
    page = sign_in(browser, desk, "auditor")
    page.goto(desk.url + "/log?agent=late-agent")
    expect(page.locator("table.log tbody tr")).to_have_count(0)
    with Gate.open(desk.db) as gate:
        heard = gate.record_observation(
            text=HOSTILE, actor=Actor(agent="late-agent"), source="chat", extraction_method="llm"
        )
    assert isinstance(heard, ObservationResult)
    row = page.locator("table.log tbody tr")
    expect(row).to_have_count(1, timeout=15_000)
    expect(row).to_contain_text("late-agent")
    expect(row).to_contain_text(str(heard.seq))
    page.context.close()


def test_a_node_named_with_markup_fires_no_dialog_on_any_page(browser: Browser, desk: Desk) -> None:
    page = sign_in(browser, desk, "admin")
    dialogs: list[str] = []

    def heard(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", heard)
    pages = ["/", "/search?q=onerror", "/log", "/review"]
    for path in pages:
        page.goto(desk.url + path)
    page.goto(node_url(desk, HOSTILE))
    expect(page.locator("h1")).to_contain_text(HOSTILE)  # shown as text
    page.goto(node_url(desk, "Ada"))
    expect(page.locator("#graph canvas").first).to_be_attached()  # the drawing ran
    events = page.locator("ol.timeline a", has_text="event").all()
    for href in [link.get_attribute("href") or "" for link in events[:3]]:
        page.goto(desk.url + href.removeprefix("/desk"))
    assert dialogs == []
    assert page.locator("img[src='x']").count() == 0
    page.context.close()


def test_a_readers_forged_post_is_refused_in_the_browser_and_appends_nothing(
    browser: Browser, desk: Desk
) -> None:
    reviewer = sign_in(browser, desk, "reviewer")
    reviewer.goto(desk.url + "/review")
    held = reviewer.locator("form.decide").first.get_attribute("action")
    reviewer.context.close()
    page = sign_in(browser, desk, "reader")
    expect(page.get_by_role("link", name="Review")).to_have_count(0)
    before = desk.head()
    statuses = page.evaluate(
        """async (action) => {
            const csrf = document.querySelector('input[name=csrf]').value;
            const post = (body) => fetch(action, {method: 'POST', body: new URLSearchParams(body)});
            const forged = await post({decision: 'approve'});
            const reader = await post({decision: 'approve', csrf: csrf});
            return [forged.status, reader.status];
        }""",
        held,
    )
    assert statuses == [403, 403]
    assert desk.head() == before
    page.context.close()


def test_every_page_has_a_title_and_landmarks_and_is_shot_at_two_widths(
    browser: Browser, desk: Desk
) -> None:
    page = sign_in(browser, desk, "admin")
    pages = {
        "overview": "/",
        "verify": "/verify",
        "report": "/report",
        "search": "/search?q=Ada",
        "node": node_url(desk, "Ada").removeprefix(desk.url),
        "log": "/log",
        "conflicts": "/conflicts",
        "duplicates": "/duplicates",
        "review": "/review",
        "event": "/event/3",
    }
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, path in pages.items():
        for width, (w, h) in WIDTHS.items():
            page.set_viewport_size({"width": w, "height": h})
            assert page.goto(desk.url + path).status == 200, path  # type: ignore[union-attr]
            assert page.title().endswith("· writegate desk")
            for landmark in ("banner", "navigation", "main"):
                expect(page.get_by_role(landmark).first).to_be_visible()
            page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    assert len(list(SHOTS.glob("*.png"))) >= 2 * len(pages)
    page.goto(desk.url + "/report")
    expect(page.get_by_role("img", name="hr-import:")).to_be_visible()  # an SVG chart, drawn
    page.goto(desk.url + "/")
    expect(page.locator("#writers").get_by_role("link", name="hr-import")).to_be_visible()
    page.context.close()


QUOTED = 'x" accesskey=x onclick=alert(8) y="'


def test_a_reviewer_merges_from_a_node_page_and_a_hostile_name_adds_no_attribute(
    browser: Browser, desk: Desk
) -> None:
    """Issue 42, defect 10: the merge form's survivor keys are the node's keys as JSON,
    whole, in the attribute (a quote in a name neither cuts them short nor adds one)."""
    with Gate.open(desk.db) as gate:
        named = gate.write_node(
            label="Person", merge_keys={"name": QUOTED}, actor=Actor(agent="hr-import"), **HR
        )
    assert named.status == "written", named
    page = sign_in(browser, desk, "reviewer")
    for name in (QUOTED, HOSTILE):
        page.goto(node_url(desk, name))
        survivor = page.locator("input[name=survivor_keys]")
        assert json.loads(survivor.get_attribute("value") or "") == {"name": name}
        assert survivor.evaluate("e => e.getAttributeNames()") == ["type", "name", "value"]
        assert page.locator("main [onclick], main [accesskey], main img").count() == 0
    page.goto(node_url(desk, "Dee"))
    page.get_by_label("The duplicate's merge keys (JSON)").fill('{"name":"Eve"}')
    page.get_by_label("Reason").fill("the same person")
    page.get_by_role("button", name="Merge").click()
    expect(page.locator("#outcome")).to_contain_text('Merged Person{"name":"Eve"}')
    page.get_by_label("Reason").fill("not the same after all")
    page.get_by_role("button", name="Undo this merge").click()
    expect(page.locator("#outcome")).to_contain_text("Undid merge")
    page.context.close()


def test_a_change_is_shown_value_by_value_old_beside_new_with_who_and_how_sure(
    browser: Browser, desk: Desk
) -> None:
    """Issue 42, defect 11: a node's history and a held write's card show each property
    changed, what stood beside what was written, by whom and at what confidence; no JSON."""
    with Gate.open(desk.db) as gate:
        held = gate.write_node(
            label="Person",
            merge_keys={"name": "Dee"},
            properties={"city": "Braga"},
            actor=Actor(agent="chat-agent"),
            **CHAT,
        )
    assert held.status == "proposed", held
    page = sign_in(browser, desk, "reviewer")
    page.goto(node_url(desk, "Dee"))
    city = page.locator("ol.timeline tr[data-property=city]")
    moved = city.filter(has_text="Porto").filter(has_text="Faro")
    expect(moved.locator("td.before")).to_contain_text("Porto · hr-import · 0.")
    expect(moved.locator("td.after")).to_contain_text("Faro · hr-import · 0.")
    first = page.locator("ol.timeline li").first.locator("tr[data-property=city]")
    expect(first.locator("td.before")).to_have_text("not set")
    expect(page.locator("ol.timeline pre")).to_have_count(0)
    page.goto(desk.url + "/review")
    card = page.locator("article.proposal", has_text='Person{"name":"Dee"}')
    row = card.locator("tr[data-property=city]")
    expect(row.locator("td.before")).to_contain_text("Faro · hr-import · 0.")
    expect(row.locator("td.after")).to_contain_text("Braga · chat-agent · 0.")
    expect(card.locator("pre")).to_have_count(0)
    page.context.close()


def test_the_reports_agent_column_keeps_each_name_on_one_line(browser: Browser, desk: Desk) -> None:
    """Issue 42, desk rough edges: an agent's name is never broken into pieces, at a desktop
    width or a narrow one."""
    page = sign_in(browser, desk, "auditor")
    for w, h in WIDTHS.values():
        page.set_viewport_size({"width": w, "height": h})
        page.goto(desk.url + "/report")
        agents = page.locator("table", has_text="Agents").locator("tbody td:first-child")
        expect(agents.first).to_have_text(re.compile(r"^[a-z-]+$"))
        lines = agents.evaluate_all(
            """cells => cells.map(c => {
                const r = document.createRange(); r.selectNodeContents(c);
                return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size;
            })"""
        )
        assert lines == [1] * len(lines), (w, lines)
    page.context.close()


def test_an_edges_label_overlaps_no_nodes_label(browser: Browser, desk: Desk) -> None:
    """Issue 42, desk rough edges: in the drawn neighbourhood, every relationship's type is
    read clear of every node's name (their label boxes, as cytoscape rendered them)."""
    page = sign_in(browser, desk, "auditor")
    page.goto(node_url(desk, "Ada"))
    expect(page.locator("#graph canvas").first).to_be_attached()
    overlaps = page.evaluate(
        """() => {
            const cy = document.getElementById("graph").cy;
            const box = (el) => el.boundingBox({includeNodes: false, includeEdges: false,
                includeLabels: true, includeSourceLabels: false, includeTargetLabels: false});
            const meet = (a, b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
            const found = [];
            cy.edges().forEach(e => cy.nodes().forEach(n => {
                if (meet(box(e), box(n))) { found.push(e.data("name") + " / " + n.data("name")); }
            }));
            return [cy.edges().length, found, cy.elements().map(el => [el.data("name"), box(el), el.isNode() ? el.position() : null])];
        }"""
    )
    assert overlaps[0] >= 1
    assert overlaps[1] == [], overlaps[2]
    page.context.close()
