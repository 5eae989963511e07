"""A log for the desk's tests: a held write to approve, one to reject, a fact cited from an
observation, and a node an agent named with markup; served by ``writegate serve --http``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from tests.conftest import ROOT
from tests.server.harness import HttpServer, http_server
from writegate.eventlog import Actor
from writegate.gate import Gate
from writegate.gate.observations import ObservationResult
from writegate.gate.server.tokens import create_token

HOSTILE = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
HR: dict[str, Any] = {"source": "hr.csv", "extraction_method": "parsed", "reliability": 0.95}
CHAT: dict[str, Any] = {
    "source": "chat",
    "extraction_method": "llm",
    "reliability": 0.5,
}  # held: below 0.5
SAID = "Ada said she moved to Lisbon last spring."


def build_log(db: Path | str, schema_dir: Path) -> None:
    """People are held for review below confidence 0.5 (the review lane's test schema)."""
    document = yaml.safe_load((ROOT / "fixtures" / "conflict_schema.yaml").read_text())
    document["nodes"]["Person"]["review_below"] = 0.5
    schema = schema_dir / "review_schema.yaml"
    schema.write_text(yaml.safe_dump(document))
    hr, chat = Actor(agent="hr-import"), Actor(agent="chat-agent")
    with Gate.open(db, create=True) as gate:
        assert gate.publish_schema(schema).status == "published"
        heard = gate.record_observation(text=SAID, actor=hr, **HR)
        assert isinstance(heard, ObservationResult)
        written = gate.write_node(
            label="Person",
            merge_keys={"name": "Ada"},
            properties={"city": "Lisbon"},
            observations=[heard.observation_id],
            actor=hr,
            **HR,
        )
        assert written.status == "written", written
        named = gate.write_node(
            label="Person",
            merge_keys={"name": HOSTILE},
            properties={"role": SCRIPT},
            actor=hr,
            **HR,
        )
        assert named.status == "written", named
        knows = gate.write_relationship(
            type="KNOWS",
            from_label="Person",
            from_keys={"name": "Ada"},
            to_label="Person",
            to_keys={"name": HOSTILE},
            actor=hr,
            **HR,
        )
        assert knows.status == "written", knows
        for city in ("Porto", "Faro"):  # the second supersedes the first (city: supersede)
            moved = gate.write_node(
                label="Person",
                merge_keys={"name": "Dee"},
                properties={"city": city},
                actor=hr,
                **HR,
            )
            assert moved.status == "written", moved
        eve = gate.write_node(
            label="Person", merge_keys={"name": "Eve"}, properties={"city": "Oslo"}, actor=hr, **HR
        )
        assert eve.status == "written", eve
        for name, role in (("Ada", "engineer"), ("Bob", "spy"), ("Cy", "intern")):
            held = gate.write_node(
                label="Person",
                merge_keys={"name": name},
                properties={"role": role},
                actor=chat,
                **CHAT,
            )
            assert held.status == "proposed", held


@dataclass
class Desk:
    """A served log and a token per role."""

    server: HttpServer
    db: Path
    tokens: dict[str, str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/desk"

    def head(self) -> int:
        with Gate.open(self.db) as gate:
            return gate.log.head()[0]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    folder = tmp_path_factory.mktemp("desk")
    db = folder / "desk.db"
    build_log(db, folder)
    tokens_file = Path(str(db) + ".tokens.json")
    tokens = {
        role: create_token(tokens_file, f"{role}-person", (role,))
        for role in ("reviewer", "reader", "auditor", "admin")
    }
    with http_server(db) as server:
        yield Desk(server, db, tokens)


CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@contextmanager
def signed_in(desk: Desk, role: str) -> Iterator[tuple[httpx2.Client, str]]:
    """A client signed in as ``role``'s person, and its session's CSRF token."""
    with httpx2.Client(base_url=desk.url, follow_redirects=True, timeout=30) as client:
        form = client.get("/signin")
        check = CSRF.search(form.text)
        assert check is not None, form.text
        home = client.post("/signin", data={"csrf": check.group(1), "token": desk.tokens[role]})
        assert home.status_code == 200, home.text
        session = CSRF.search(home.text)
        assert session is not None
        yield client, session.group(1)
