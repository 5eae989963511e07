"""At the desk, a reviewer may not decide a write they were held for (issue 41, defect 3):
the decision is refused with ``SELF_REVIEW``, appends nothing, and another reviewer decides
it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.desk.conftest import CHAT, Desk, signed_in
from tests.gate.test_self_review import review_schema
from tests.server.harness import http_server
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.models import ProposedResult
from writegate.gate.server.tokens import create_token


def test_a_reviewer_at_the_desk_may_not_decide_their_own_held_write(tmp_path: Path) -> None:
    db = tmp_path / "desk.db"
    with Gate.open(db, create=True) as gate:
        assert gate.publish_schema(review_schema(tmp_path)).status == "published"
        held = gate.write_node(
            label="Person",
            merge_keys={"name": "Eve"},
            properties={},
            actor=Actor(agent="rita"),
            **CHAT,
        )
    assert isinstance(held, ProposedResult), held
    tokens_file = Path(f"{db}.tokens.json")
    tokens = {name: create_token(tokens_file, name, ("reviewer",)) for name in ("rita", "sam")}
    with http_server(db) as server:
        desk = Desk(server, db, {"rita": tokens["rita"], "sam": tokens["sam"]})
        before = desk.head()
        with signed_in(desk, "rita") as (client, csrf):
            refused = client.post(
                f"/review/{held.proposal}", data={"csrf": csrf, "decision": "approve", "note": "ok"}
            )
        assert refused.status_code == 409
        assert re.search(r'id="outcome">[^<]*<code>SELF_REVIEW</code>', refused.text)
        assert desk.head() == before
        with signed_in(desk, "sam") as (client, csrf):
            decided = client.post(
                f"/review/{held.proposal}", data={"csrf": csrf, "decision": "approve", "note": "ok"}
            )
        assert decided.status_code == 200, decided.text
        assert desk.head() > before
